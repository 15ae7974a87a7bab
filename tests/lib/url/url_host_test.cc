// Hosts of long URLs, table by table: RFC 1123 host syntax label by label
// (letters, digits and hyphens; no "_"; hyphen placement; A-labels that must
// decode; lengths), and the private-target rule (loopback, private,
// link-local, unspecified addresses in every spelling libcurl reads, IPv4
// inside IPv6, localhost and other local names) with and without
// --allow_private_targets. Every refusal names the host, and the private
// ones the flag.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/url/host.h"
#include "lib/url/url_policy.h"
#include "tests/support/status_matchers.h"

namespace shortener::url {
namespace {

using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;
constexpr char kFlag[] = "(shorten-service --allow_private_targets allows them)";

UrlPolicyOptions Allowing(bool private_targets) {
  UrlPolicyOptions options;
  options.allow_private_targets = private_targets;
  return options;
}

std::string Label(char c, int length) { return std::string(static_cast<size_t>(length), c); }

struct Refused {
  std::string url;
  std::string problem;  // a substring the message must contain
};

TEST_CASE("hosts must be RFC 1123 host names, label by label", "[lib/url]") {
  const UrlPolicy policy(Allowing(true));  // syntax is checked whatever the target
  const std::string ok63 = Label('a', 63);
  const std::vector<Refused> refused = {
      // "_" is no host name character (see IsHostChar in lib/url/host.cc:
      // service labels, CA/Browser Forum SC12), wherever it stands.
      {"http://_dmarc.example.com/", R"(bad character in "_dmarc")"},
      {"http://a_b.example.com/", R"(bad character in "a_b": host names are letters, digits)"},
      {"http://example_.com/", R"(bad character in "example_")"},
      {"http://_/", R"(bad character in "_")"},
      {"http://www.exa%5Fmple.com/", R"(bad character in "exa_mple")"},
      // Hyphens: never first or last in a label.
      {"http://-example.com/", R"(label "-example" starts or ends with a hyphen)"},
      {"http://example-.com/", R"(label "example-" starts or ends with a hyphen)"},
      {"http://www.-.com/", R"(label "-" starts or ends with a hyphen)"},
      {"http://a.b-/", R"(label "b-" starts or ends with a hyphen)"},
      {"http://sub.-evil.example/", "starts or ends with a hyphen"},
      // "--" in the third and fourth place: only in an A-label ("xn--").
      {"http://ab--cd.example.com/", R"(label "ab--cd" has "--" in the third and fourth place)"},
      {"http://zz--zz.example/", "has \"--\" in the third and fourth place"},
      // A-labels must decode to a name the IDN rules accept.
      {"http://xn--zz.example.com/", "not a valid internationalised domain name"},
      {"http://xn--.example.com/", R"(label "xn--" starts or ends with a hyphen)"},
      {"http://xn--a.example.com/", "not a valid internationalised domain name"},
      {"http://www.xn--0.de/", "not a valid internationalised domain name"},
      // Lengths: 1..63 bytes a label, 253 in all.
      {"http://" + Label('a', 64) + ".com/", "label longer than 63 bytes"},
      {"http://" + ok63 + "." + ok63 + "." + ok63 + "." + Label('a', 62) + "/",
       "longer than 253 bytes"},
      {"http://a..example/", "empty label"},
      {"http://.example.com/", "empty label"},
      // An all-numeric last label only in a dotted quad.
      {"http://example.123/", "not a valid IPv4 address"},
      {"http://example.0x1f/", "not a valid IPv4 address"},
      {"http://1.2.3.4.5/", "not a valid IPv4 address"},
      {"http://256.1.1.1/", "not a valid IPv4 address"},
      // Bytes that are no part of a name once percent-decoded.
      {"http://exa%20mple.com/", "malformed host"},
      {"http://exa%2Fmple.com/", "malformed host"},
      {"http://ex*ample.com/", "malformed host"},
  };
  for (const Refused& c : refused) {
    INFO(c.url);
    const absl::StatusOr<std::string> result = policy.Normalize(c.url);
    CHECK_THAT(result, HasCodeAndMessage(kInvalid, "long_url: has a malformed host"));
    CHECK_THAT(result, HasCodeAndMessage(kInvalid, c.problem));
  }
  // What the rules leave: digits first, inner hyphens, valid A-labels, the
  // limits exactly.
  const std::string name253 = ok63 + "." + ok63 + "." + ok63 + "." + Label('b', 61);
  REQUIRE(name253.size() == 253);
  for (const std::string& host :
       {std::string("3com.com"), std::string("1.example"), std::string("a-b-c.example.com"),
        std::string("a--b.example.com"), std::string("xn--bcher-kva.de"),
        std::string("xn--d1acufc.xn--p1ai"), std::string("x.y"), ok63 + ".com", name253,
        std::string("example.com1")}) {
    INFO(host);
    CHECK(policy.Normalize("http://" + host + "/").value_or("") == "http://" + host + "/");
  }
  CHECK(policy.Normalize("http://XN--BCHER-KVA.DE/").value_or("") == "http://xn--bcher-kva.de/");
  // An A-label is accepted exactly when its Unicode form is (the same IDN
  // processing decides both).
  CHECK(policy.Normalize("http://xn--ls8h.la/").value_or("") ==
        policy.Normalize("http://\xF0\x9F\x92\xA9.la/").value_or("unicode refused"));
  CHECK(policy.Normalize("http://" + name253 + "./").value_or("") == "http://" + name253 + "/");
  // Domain list entries follow the same rule.
  CHECK_THAT(CanonicalDomain("_dmarc.example.com"), HasCodeAndMessage(kInvalid, "bad character"));
  CHECK_THAT(CanonicalDomain("-evil.example"), HasCodeAndMessage(kInvalid, "hyphen"));
}

struct PrivateCase {
  std::string url;
  std::string host;    // as the message names it
  std::string reason;  // a substring of why
};

const std::vector<PrivateCase>& PrivateCases() {
  static const auto* const kCases = new std::vector<PrivateCase>{
      // IPv4 loopback in every spelling libcurl reads as an address.
      {"http://127.0.0.1/", "127.0.0.1", "a loopback address"},
      {"http://127.0.0.1:8080/admin", "127.0.0.1", "a loopback address"},
      {"http://127.0.0.1./", "127.0.0.1", "a loopback address"},
      {"http://2130706433/", "127.0.0.1", "a loopback address"},
      {"http://0x7f.1/", "127.0.0.1", "a loopback address"},
      {"http://0x7f000001/", "127.0.0.1", "a loopback address"},
      {"http://017700000001/", "127.0.0.1", "a loopback address"},
      {"http://0177.0.0.1/", "127.0.0.1", "a loopback address"},
      {"http://127.1/", "127.0.0.1", "a loopback address"},
      {"http://0x7f.0x0.0x0.0x1/", "127.0.0.1", "a loopback address"},
      {"http://%31%32%37.0.0.1/", "127.0.0.1", "a loopback address"},
      {"http://127.255.255.254/", "127.255.255.254", "a loopback address"},
      // Unspecified: 0.0.0.0 connects to this host.
      {"http://0/", "0.0.0.0", "an unspecified address"},
      {"http://0.0.0.0:3000/", "0.0.0.0", "an unspecified address"},
      {"http://0.1.2.3/", "0.1.2.3", "an unspecified address"},
      // RFC 1918, RFC 6598, link-local (metadata), multicast, reserved.
      {"http://10.0.0.1/", "10.0.0.1", "a private address (RFC 1918)"},
      {"http://10.255.255.255/", "10.255.255.255", "a private address (RFC 1918)"},
      {"http://172.16.0.1/", "172.16.0.1", "a private address (RFC 1918)"},
      {"http://172.31.255.255/", "172.31.255.255", "a private address (RFC 1918)"},
      {"http://192.168.1.1/", "192.168.1.1", "a private address (RFC 1918)"},
      {"http://0300.0250.0.1/", "192.168.0.1", "a private address (RFC 1918)"},
      {"http://3232235777/", "192.168.1.1", "a private address (RFC 1918)"},
      {"http://100.64.0.1/", "100.64.0.1", "a shared address (100.64.0.0/10"},
      {"http://100.127.255.255/", "100.127.255.255", "a shared address"},
      {"http://169.254.169.254/latest/meta-data/", "169.254.169.254", "a link-local address"},
      {"http://224.0.0.1/", "224.0.0.1", "a multicast address"},
      {"http://239.255.255.250:1900/", "239.255.255.250", "a multicast address"},
      {"http://240.0.0.1/", "240.0.0.1", "a reserved or broadcast address"},
      {"http://4294967295/", "255.255.255.255", "a reserved or broadcast address"},
      // IPv6.
      {"http://[::1]/", "[::1]", "a loopback address"},
      {"http://[0:0:0:0:0:0:0:1]:8080/", "[::1]", "a loopback address"},
      {"http://[::]/", "[::]", "the unspecified address"},
      {"http://[fc00::1]/", "[fc00::1]", "a unique local address (fc00::/7"},
      {"http://[fd12:3456:789a::1]/", "[fd12:3456:789a::1]", "a unique local address"},
      {"http://[fe80::1]/", "[fe80::1]", "a link-local address"},
      {"http://[febf::1]/", "[febf::1]", "a link-local address"},
      {"http://[fec0::1]/", "[fec0::1]", "a site-local address"},
      {"http://[ff02::1]/", "[ff02::1]", "a multicast address"},
      {"http://[64:ff9b:1::a]/", "[64:ff9b:1::a]", "a local-use NAT64 address"},
      // IPv4 inside IPv6.
      {"http://[::ffff:127.0.0.1]/", "[::ffff:127.0.0.1]",
       "a loopback address (IPv4-mapped, 127.0.0.1)"},
      {"http://[0:0:0:0:0:ffff:7f00:1]/", "[::ffff:127.0.0.1]", "(IPv4-mapped, 127.0.0.1)"},
      {"http://[::ffff:a9fe:a9fe]/", "[::ffff:169.254.169.254]",
       "a link-local address (169.254.0.0/16: cloud metadata) (IPv4-mapped, 169.254.169.254)"},
      {"http://[::ffff:10.1.2.3]/", "[::ffff:10.1.2.3]", "(IPv4-mapped, 10.1.2.3)"},
      {"http://[::127.0.0.1]/", "[::127.0.0.1]", "a loopback address (IPv4-compatible"},
      {"http://[::7f00:1]/", "[::127.0.0.1]", "(IPv4-compatible, 127.0.0.1)"},
      {"http://[::ffff:0:7f00:1]/", "[::ffff:0:7f00:1]", "(IPv4-translated, 127.0.0.1)"},
      {"http://[64:ff9b::a9fe:a9fe]/", "[64:ff9b::a9fe:a9fe]", "(NAT64, 169.254.169.254)"},
      {"http://[64:ff9b::c0a8:101]/", "[64:ff9b::c0a8:101]", "(NAT64, 192.168.1.1)"},
      {"http://[2002:7f00:1::]/", "[2002:7f00:1::]", "a loopback address (6to4, 127.0.0.1)"},
      {"http://[2002:c0a8:101::1]/", "[2002:c0a8:101::1]", "(6to4, 192.168.1.1)"},
      // Names of this machine and of local networks.
      {"http://localhost/", "localhost", "a name of the machine that opens it (localhost)"},
      {"http://LocalHost:3000/", "localhost", "(localhost)"},
      {"http://localhost./", "localhost", "(localhost)"},
      {"http://api.localhost/", "api.localhost", "(localhost)"},
      {"http://a.b.localhost/", "a.b.localhost", "(localhost)"},
      {"http://ｌｏｃａｌｈｏｓｔ/", "localhost", "(localhost)"},
      {"http://localhost.localdomain/", "localhost.localdomain", "(localhost)"},
      {"http://ip6-localhost/", "ip6-localhost", "(localhost)"},
      {"http://ip6-loopback/", "ip6-loopback", "(localhost)"},
      {"http://nas.localdomain/", "nas.localdomain", "(.localdomain)"},
      {"http://printer.local/", "printer.local", "(.local)"},
      {"http://metadata.google.internal/computeMetadata/v1/", "metadata.google.internal",
       "(.internal)"},
      {"http://router.home.arpa/", "router.home.arpa", "(home.arpa)"},
      {"http://intranet/", "intranet", "a name of one label"},
      {"http://metadata/computeMetadata/v1/", "metadata", "a name of one label"},
      {"https://wiki:8443/", "wiki", "a name of one label"},
  };
  return *kCases;
}

TEST_CASE("private and local targets are refused, naming the host, why, and the flag",
          "[lib/url]") {
  const UrlPolicy policy(Allowing(false));
  for (const PrivateCase& c : PrivateCases()) {
    INFO(c.url);
    const absl::StatusOr<std::string> result = policy.Normalize(c.url);
    CHECK_THAT(result,
               HasCodeAndMessage(kInvalid, absl::StrCat("long_url: host \"", c.host, "\" is ")));
    CHECK_THAT(result, HasCodeAndMessage(kInvalid, c.reason));
    CHECK_THAT(result, HasCodeAndMessage(kInvalid, kFlag));
  }
  // The default of the options is to refuse.
  CHECK_THAT(UrlPolicy(UrlPolicyOptions{}).Normalize("http://127.0.0.1/"),
             HasCodeAndMessage(kInvalid, "loopback"));
  CHECK(PrivateCases().size() >= 60);
}

TEST_CASE("with --allow_private_targets private hosts normalise like any other", "[lib/url]") {
  const UrlPolicy policy(Allowing(true));
  for (const PrivateCase& c : PrivateCases()) {
    INFO(c.url);
    const absl::StatusOr<std::string> result = policy.Normalize(c.url);
    REQUIRE_THAT(result, IsOk());
    CHECK(absl::StrContains(*result, "://" + c.host));
    CHECK(policy.Normalize(*result).value_or("") == *result);
  }
  CHECK(policy.Normalize("http://2130706433:8080/x").value_or("") == "http://127.0.0.1:8080/x");
}

TEST_CASE("public hosts that merely look local stay allowed", "[lib/url]") {
  const UrlPolicy policy(Allowing(false));
  for (const char* url : {"http://8.8.8.8/",
                          "http://1.0.0.1/",
                          "http://9.255.255.255/",
                          "http://11.0.0.1/",
                          "http://172.15.255.255/",
                          "http://172.32.0.1/",
                          "http://192.167.255.255/",
                          "http://192.169.0.1/",
                          "http://100.63.255.255/",
                          "http://100.128.0.1/",
                          "http://169.253.0.1/",
                          "http://169.255.0.1/",
                          "http://126.255.255.255/",
                          "http://128.0.0.1/",
                          "http://223.255.255.255/",
                          "http://192.0.2.1/",
                          "http://[2001:db8::1]/",
                          "http://[2606:4700::1111]/",
                          "http://[::ffff:8.8.8.8]/",
                          "http://[64:ff9b::808:808]/",
                          "http://[2002:808:808::]/",
                          "http://[fbff::1]/",
                          "http://[fe7f::1]/",
                          "http://[fe00::1]/",
                          "http://localhost.example.com/",
                          "http://mylocalhost.com/",
                          "http://localhost-tools.com/",
                          "http://local.example.com/",
                          "http://example.local.com/",
                          "http://internal.example.com/",
                          "http://10.example.com/",
                          "http://127.0.0.1.example.com/",
                          "http://home.arpa.example/",
                          "http://x.y/"}) {
    INFO(url);
    CHECK_THAT(policy.Normalize(url), IsOk());
  }
}

TEST_CASE("NonPublicHostReason reads canonical hosts only from their text", "[lib/url]") {
  using internal::NonPublicHostReason;
  CHECK(NonPublicHostReason("example.com").empty());
  CHECK(NonPublicHostReason("93.184.216.34").empty());
  CHECK(NonPublicHostReason("[2001:db8::1]").empty());
  CHECK(NonPublicHostReason("127.0.0.1") == "a loopback address");
  CHECK(NonPublicHostReason("[::ffff:192.168.0.1]") ==
        "a private address (RFC 1918) (IPv4-mapped, 192.168.0.1)");
  // A name that resolves to 127.0.0.1 in public DNS is not caught: no
  // look-ups (docs/security.md says why).
  CHECK(NonPublicHostReason("127.0.0.1.nip.io").empty());
}

}  // namespace
}  // namespace shortener::url
