// Fuzzes edge/client_ip.h: ParseIpAddress, FormatIpAddress, ClientIp over
// an X-Forwarded-For value any client can send, and TrustedProxies::Parse.
//
// Input: byte 0 picks the socket peer (trusted or not, IPv4 or IPv6); the
// rest is both one address and an X-Forwarded-For value. Invariants,
// besides no memory error or UB:
//  - a parsed address formats to at most 45 characters that parse back to
//    it (also bracketed with a port for IPv6, with a port for IPv4); IPv4
//    addresses use the first four bytes only, and an IPv4-mapped address
//    is never is_v6;
//  - a bare IPv6 literal that parses, parses the same in brackets;
//  - ClientIp follows the rule of client_ip.h, checked against a direct
//    model of it: an untrusted peer is the client; else walk the entries
//    from the right, skipping empty ones, stop at an unparsable entry (the
//    last trusted hop is the client) or at the first untrusted address
//    (the client); all trusted: the leftmost;
//  - every CIDR entry TrustedProxies::Parse accepts contains its address.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "edge/client_ip.h"
#include "tests/fuzz/fuzz_check.h"

namespace shortener::edge {
namespace {

const TrustedProxies& Trusted() {
  static const TrustedProxies* trusted = new TrustedProxies(
      *TrustedProxies::Parse({"10.0.0.0/8", "192.168.0.0/16", "127.0.0.1", "2001:db8::/32"}));
  return *trusted;
}

IpAddress Parsed(absl::string_view text) {
  IpAddress ip;
  FUZZ_CHECK(ParseIpAddress(text, &ip));
  return ip;
}

IpAddress Peer(uint8_t selector) {
  static const char* const kPeers[] = {"10.1.2.3",     "203.0.113.9", "2001:db8::5",
                                       "2001:dead::1", "127.0.0.1",   "192.168.7.1"};
  return Parsed(kPeers[selector % (sizeof(kPeers) / sizeof(kPeers[0]))]);
}

absl::string_view TrimSpaces(absl::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

void CheckAddress(absl::string_view text) {
  IpAddress ip;
  if (!ParseIpAddress(text, &ip)) return;
  static constexpr uint8_t kMappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (ip.is_v6) {
    FUZZ_CHECK(std::memcmp(ip.bytes.data(), kMappedPrefix, sizeof(kMappedPrefix)) != 0);
  } else {
    for (size_t i = 4; i < ip.bytes.size(); ++i) FUZZ_CHECK(ip.bytes[i] == 0);
  }
  char buf[kMaxIpTextLength];
  const absl::string_view formatted = FormatIpAddress(ip, buf);
  FUZZ_CHECK(!formatted.empty() && formatted.size() < kMaxIpTextLength);
  FUZZ_CHECK(Parsed(formatted) == ip);
  FUZZ_CHECK(IpAddressToString(ip) == formatted);
  if (ip.is_v6) {
    FUZZ_CHECK(Parsed(absl::StrCat("[", formatted, "]:8080")) == ip);
  } else {
    FUZZ_CHECK(Parsed(absl::StrCat(formatted, ":8080")) == ip);
  }
  const absl::string_view bare = TrimSpaces(text);
  if (bare.find('[') == absl::string_view::npos && std::count(bare.begin(), bare.end(), ':') >= 2) {
    FUZZ_CHECK(Parsed(absl::StrCat("[", bare, "]")) == ip);
  }
}

// client_ip.h's rule, written out directly.
IpAddress ModelClientIp(const IpAddress& peer, absl::string_view xff,
                        const TrustedProxies& trusted) {
  if (xff.empty() || !trusted.Contains(peer)) return peer;
  const std::vector<absl::string_view> entries = absl::StrSplit(xff, ',');
  IpAddress current = peer;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (TrimSpaces(*it).empty()) continue;
    IpAddress hop;
    if (!ParseIpAddress(*it, &hop)) return current;
    if (!trusted.Contains(hop)) return hop;
    current = hop;
  }
  return current;
}

void CheckTrustedProxies(absl::string_view text) {
  const std::vector<std::string> entries = absl::StrSplit(text, ',');
  absl::StatusOr<TrustedProxies> parsed = TrustedProxies::Parse(entries);
  if (!parsed.ok()) return;
  for (const std::string& entry : entries) {
    const absl::string_view trimmed = TrimSpaces(entry);
    if (trimmed.empty()) continue;
    FUZZ_CHECK(parsed->Contains(Parsed(trimmed.substr(0, trimmed.find('/')))));
  }
}

}  // namespace
}  // namespace shortener::edge

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shortener::edge;
  if (size == 0) return 0;
  const IpAddress peer = Peer(data[0]);
  const absl::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  CheckAddress(text);
  FUZZ_CHECK(ClientIp(peer, text, Trusted()) == ModelClientIp(peer, text, Trusted()));
  if (size <= 256) CheckTrustedProxies(text);
  return 0;
}
