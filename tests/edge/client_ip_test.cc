#include "edge/client_ip.h"

#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/support/status_matchers.h"

namespace shortener::edge {
namespace {

IpAddress Ip(const std::string& text) {
  IpAddress ip;
  INFO(text);
  REQUIRE(ParseIpAddress(text, &ip));
  return ip;
}

TrustedProxies Trusted(const std::vector<std::string>& cidrs) {
  auto trusted = TrustedProxies::Parse(cidrs);
  REQUIRE(trusted.ok());
  return *trusted;
}

TEST_CASE("ip addresses parse and format canonically", "[edge][client_ip]") {
  CHECK(IpAddressToString(Ip("192.0.2.7")) == "192.0.2.7");
  CHECK(IpAddressToString(Ip(" 192.0.2.7:443 ")) == "192.0.2.7");
  CHECK(IpAddressToString(Ip("2001:DB8:0:0::1")) == "2001:db8::1");
  CHECK(IpAddressToString(Ip("[2001:db8::1]:8080")) == "2001:db8::1");
  CHECK(IpAddressToString(Ip("[2001:db8::1]")) == "2001:db8::1");
  // IPv4-mapped IPv6 (a dual-stack socket's view of an IPv4 peer) is IPv4.
  const IpAddress mapped = Ip("::ffff:198.51.100.9");
  CHECK_FALSE(mapped.is_v6);
  CHECK(IpAddressToString(mapped) == "198.51.100.9");

  IpAddress ip;
  for (const char* bad : {"", "unknown", "example.com", "1.2.3", "1.2.3.4.5", "256.1.1.1",
                          "1.2.3.4:", "1.2.3.4:99999", "[1.2.3.4]", "[::1", "::1]:80", "_hidden",
                          "1.2.3.4/8", "fe80::1%eth0"}) {
    INFO(bad);
    CHECK_FALSE(ParseIpAddress(bad, &ip));
  }
}

// Found by tests/fuzz/forwarded_address_fuzz.cc: a bracketed IPv4-mapped
// address (as RFC 7239 and proxies with ports write a dual-stack peer) was
// refused while the same address bare was read as IPv4.
TEST_CASE("an IPv4-mapped address in brackets is the IPv4 address, as it is bare",
          "[edge][client_ip]") {
  for (const char* text : {"[::ffff:192.0.2.7]", "[::ffff:192.0.2.7]:443", "[::FFFF:c000:0207]"}) {
    INFO(text);
    const IpAddress ip = Ip(text);
    CHECK_FALSE(ip.is_v6);
    CHECK(IpAddressToString(ip) == "192.0.2.7");
  }
  IpAddress ip;
  CHECK_FALSE(ParseIpAddress("[192.0.2.7]", &ip));
  CHECK_FALSE(ParseIpAddress("[192.0.2.7]:443", &ip));
}

// Found by tests/fuzz/forwarded_address_fuzz.cc: inet_pton stops at a NUL,
// so "::" followed by a NUL and anything at all was read as "::".
TEST_CASE("an address with a NUL byte inside is no address", "[edge][client_ip]") {
  using namespace std::string_literals;
  IpAddress ip;
  for (const std::string& text : {"::\0\0\0\0\0\0\0\0"
                                  "1\0"
                                  "1\v\v\0]:.4"s,
                                  "192.0.2.7\0evil"s, "2001:db8::1\0"s, "[::1\0x]:80"s,
                                  "192.0.2.7:\0"
                                  "80"s}) {
    INFO(text);
    CHECK_FALSE(ParseIpAddress(text, &ip));
  }
  const TrustedProxies trusted = Trusted({"10.0.0.0/8"});
  const IpAddress peer = Ip("10.0.0.1");
  CHECK(ClientIp(peer, "198.51.100.9\0, 10.0.0.2"s, trusted) == Ip("10.0.0.2"));
  CHECK_FALSE(TrustedProxies::Parse({"10.0.0.0\0/8"s}).ok());
}

TEST_CASE("trusted proxy ranges match by prefix", "[edge][client_ip]") {
  const TrustedProxies trusted = Trusted({"10.0.0.0/8", "192.0.2.7", "2001:db8::/32", "::1"});
  CHECK(trusted.Contains(Ip("10.200.3.4")));
  CHECK_FALSE(trusted.Contains(Ip("11.0.0.1")));
  CHECK(trusted.Contains(Ip("192.0.2.7")));
  CHECK_FALSE(trusted.Contains(Ip("192.0.2.8")));
  CHECK(trusted.Contains(Ip("2001:db8:ffff::1")));
  CHECK_FALSE(trusted.Contains(Ip("2001:db9::1")));
  CHECK(trusted.Contains(Ip("::1")));
  // An IPv4 range never matches an IPv6 address and vice versa.
  CHECK_FALSE(Trusted({"0.0.0.0/0"}).Contains(Ip("::2")));
  CHECK(Trusted({"0.0.0.0/0"}).Contains(Ip("203.0.113.1")));
  CHECK(Trusted({"172.16.0.0/12"}).Contains(Ip("172.31.255.255")));
  CHECK_FALSE(Trusted({"172.16.0.0/12"}).Contains(Ip("172.32.0.0")));
}

TEST_CASE("trusted proxy ranges that cover much of the internet are found", "[edge][client_ip]") {
  struct Case {
    const char* range;
    bool too_broad;
  };
  for (const Case& c : std::vector<Case>{
           // Everything, and anything wider than the largest private block.
           {"0.0.0.0/0", true},
           {"0.0.0.0/1", true},
           {"128.0.0.0/1", true},
           {"10.0.0.0/7", true},
           {"64.0.0.0/2", true},
           {"::/0", true},
           {"2000::/3", true},
           {"2001::/16", true},
           {"2a00::/12", true},
           {"2001:db8::/31", true},
           {"fc00::/6", true},
           {"f800::/5", true},
           // Proxies: private blocks, a provider's /32, single hosts.
           {"10.0.0.0/8", false},
           {"11.0.0.0/8", false},
           {"172.16.0.0/12", false},
           {"192.168.0.0/16", false},
           {"203.0.113.7", false},
           {"2001:db8::/32", false},
           {"2001:db8:1::/48", false},
           {"fc00::/7", false},
           {"fd12::/16", false},
           {"::1", false},
           {"0.0.0.0/8", false},
       }) {
    INFO(c.range);
    const TrustedProxies trusted = Trusted({c.range});
    CHECK(trusted.TooBroadRanges().size() == (c.too_broad ? 1u : 0u));
  }
  // Named as parsed, in order, among harmless ones.
  CHECK(Trusted({"10.0.0.0/8", "0.0.0.0/0", "::1", "::/0"}).TooBroadRanges() ==
        std::vector<std::string>{"0.0.0.0/0", "::/0"});
  IpAddress any;
  CHECK(IsTooBroadProxyRange(any, 0));
  any.is_v6 = true;
  CHECK(IsTooBroadProxyRange(any, 31));
  CHECK_FALSE(IsTooBroadProxyRange(any, 32));
}

TEST_CASE("bad trusted proxy entries are refused with the entry named", "[edge][client_ip]") {
  using ::shortener::testing::HasCodeAndMessage;
  CHECK_THAT(TrustedProxies::Parse({"10.0.0.0/33"}).status(),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "\"10.0.0.0/33\""));
  CHECK_THAT(TrustedProxies::Parse({"proxy.local"}).status(),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "not an IP address"));
  CHECK_THAT(TrustedProxies::Parse({"10.0.0.1/8"}).status(),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "bits set beyond the /8"));
  CHECK_THAT(TrustedProxies::Parse({"10.0.0.0/"}).status(),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "prefix length"));
  CHECK_THAT(TrustedProxies::Parse({"[::1]"}).status(),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "not an IP address"));
}

TEST_CASE("client ip comes from the socket unless the peer is a trusted proxy",
          "[edge][client_ip]") {
  const TrustedProxies trusted = Trusted({"10.0.0.0/8"});
  const IpAddress proxy = Ip("10.1.1.1");
  const IpAddress stranger = Ip("203.0.113.50");

  SECTION("no header") { CHECK(ClientIp(stranger, "", trusted) == stranger); }
  SECTION("spoofed header from an untrusted peer is ignored") {
    CHECK(ClientIp(stranger, "198.51.100.1", trusted) == stranger);
    CHECK(ClientIp(stranger, "10.0.0.5", trusted) == stranger);
  }
  SECTION("trusted proxy: the rightmost untrusted entry") {
    CHECK(ClientIp(proxy, "198.51.100.1", trusted) == Ip("198.51.100.1"));
    // A client-supplied entry on the left does not override what the proxy
    // saw (198.51.100.1 connected to the proxy).
    CHECK(ClientIp(proxy, "1.1.1.1, 198.51.100.1", trusted) == Ip("198.51.100.1"));
    // Chains of trusted proxies are skipped.
    CHECK(ClientIp(proxy, "198.51.100.1, 10.2.2.2,10.3.3.3", trusted) == Ip("198.51.100.1"));
    CHECK(ClientIp(proxy, "[2001:db8::7]:1234", trusted) == Ip("2001:db8::7"));
  }
  SECTION("every entry trusted: the leftmost") {
    CHECK(ClientIp(proxy, "10.9.9.9, 10.8.8.8", trusted) == Ip("10.9.9.9"));
  }
  SECTION("garbage stops the walk at the last trusted hop") {
    CHECK(ClientIp(proxy, "198.51.100.1, unknown", trusted) == proxy);
    CHECK(ClientIp(proxy, "198.51.100.1, garbage, 10.2.2.2", trusted) == Ip("10.2.2.2"));
    CHECK(ClientIp(proxy, " , ", trusted) == proxy);
  }
  SECTION("no trusted proxies configured") {
    CHECK(ClientIp(proxy, "198.51.100.1", TrustedProxies()) == proxy);
  }
}

}  // namespace
}  // namespace shortener::edge
