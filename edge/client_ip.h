// Which address a request came from, for analytics and logs: the socket's
// peer, or, only when that peer is a trusted proxy, the address that proxy
// reports in X-Forwarded-For.
//
// Rule: walk the X-Forwarded-For chain from the right (the entry the nearest
// proxy appended) and return the first address that is not itself a trusted
// proxy. An untrusted peer's X-Forwarded-For is ignored entirely: anyone can
// send the header, so believing it would let a client pick its own IP.
// An entry that does not parse stops the walk at the last trusted hop (we
// report the proxy rather than guess). If every entry is trusted, the
// leftmost one is the client.
//
// Thread safety: immutable after construction; pure functions.
#ifndef SHORTENER_EDGE_CLIENT_IP_H_
#define SHORTENER_EDGE_CLIENT_IP_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shortener::edge {

// An IPv4 or IPv6 address. IPv4 (and IPv4-mapped IPv6, ::ffff:a.b.c.d, which
// is normalised to IPv4) uses the first 4 bytes.
struct IpAddress {
  bool is_v6 = false;
  std::array<uint8_t, 16> bytes{};

  friend bool operator==(const IpAddress& a, const IpAddress& b) {
    return a.is_v6 == b.is_v6 && a.bytes == b.bytes;
  }
};

// Parses a literal address: "192.0.2.7", "2001:db8::1", "[2001:db8::1]",
// "192.0.2.7:443", "[2001:db8::1]:443" (ports are dropped). Surrounding
// spaces and tabs are ignored. False for anything else (host names,
// "unknown", obfuscated identifiers of RFC 7239).
bool ParseIpAddress(absl::string_view text, IpAddress* out);

// Longest text FormatIpAddress writes (an IPv6 address), plus a NUL.
inline constexpr size_t kMaxIpTextLength = 46;

// Canonical text ("192.0.2.7", "2001:db8::1") into `out`; returns its view.
absl::string_view FormatIpAddress(const IpAddress& ip, char (&out)[kMaxIpTextLength]);
std::string IpAddressToString(const IpAddress& ip);

// A set of address ranges ("10.0.0.0/8", "2001:db8::/32", "127.0.0.1").
class TrustedProxies {
 public:
  TrustedProxies() = default;

  // INVALID_ARGUMENT naming the entry for a bad address or prefix length, or
  // host bits set below the prefix ("10.0.0.1/8": a likely typo).
  static absl::StatusOr<TrustedProxies> Parse(const std::vector<std::string>& cidrs);

  bool Contains(const IpAddress& ip) const;
  bool empty() const { return ranges_.empty(); }

  // The ranges IsTooBroadProxyRange finds, as "base/bits" ("0.0.0.0/0"), in
  // the order given; empty if none. The edge warns about each at start.
  std::vector<std::string> TooBroadRanges() const;

 private:
  struct Range {
    IpAddress base;
    int prefix_bits = 0;
  };
  std::vector<Range> ranges_;
};

// True if trusting `base`/`prefix_bits` as proxies would let a large part of
// the internet pick its own client address: an IPv4 prefix shorter than /8
// (wider than 10.0.0.0/8, the largest private block, so it always takes in
// public addresses; 0.0.0.0/0 is all of them), or an IPv6 prefix shorter
// than /32 (wider than a whole provider's allocation; ::/0 is all of them)
// unless it lies within fc00::/7 (unique local addresses, IPv6's private
// block). A load balancer fleet fits in far less.
bool IsTooBroadProxyRange(const IpAddress& base, int prefix_bits);

// The client address of a request from `peer` carrying `x_forwarded_for`
// (all field values joined by ", "; empty when absent). See the rule above.
IpAddress ClientIp(const IpAddress& peer, absl::string_view x_forwarded_for,
                   const TrustedProxies& trusted);

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_CLIENT_IP_H_
