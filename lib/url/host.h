// Canonical host names and domain matching for the URL policy: IDN hosts to
// punycode with libidn2, lower case, no trailing dot. Internal to lib/url.
// Pure functions; thread-safe.
//
// We call libidn2 ourselves rather than ask libcurl for CURLU_PUNYCODE:
// libcurl 7.88 converts through idn2_lookup_ul(), which reads the process
// locale, so in a server that never calls setlocale() every non-ASCII host
// fails (as CURLUE_OUT_OF_MEMORY). idn2_lookup_u8() takes UTF-8 whatever the
// locale; the flags are the ones libcurl uses, so the results agree.
#ifndef SHORTENER_LIB_URL_HOST_H_
#define SHORTENER_LIB_URL_HOST_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shortener::url::internal {

// Returns `host` (a registered name, an IPv4 address, or an IPv6 address in
// brackets; UTF-8) in canonical form: ASCII lower case, IDN labels in
// punycode after UTS #46 mapping, trailing dots removed; an IPv6 address
// as libcurl writes one ("[2001:db8::1]", inet_ntop's spelling).
// INVALID_ARGUMENT (message without the "long_url: " prefix) if the name is
// not a valid internationalised domain name, if nothing is left of it, or
// if the result is not an RFC 1123 host name checked label by label
// (letters, digits and hyphens, never "_"; no hyphen first or last; "--" in
// the third and fourth place only in an "xn--" A-label, which must decode
// to a name the IDN rules accept; 1 to 63 bytes each, 253 in all), a plain
// dotted-quad IPv4 address (a host whose last label is a number, decimal or
// "0x" hex, must be one: no top-level domain is all digits) or a bracketed
// IPv6 address.
absl::StatusOr<std::string> CanonicalHost(absl::string_view host);

// Why canonical `host` (as CanonicalHost returns it) is not a public target,
// or "" when it may be one. From the text alone, never a DNS look-up: a
// name's addresses can change between our look-up and the browser's (DNS
// rebinding: an attacker's name answers a public address to us and
// 127.0.0.1 to the victim), so a look-up would stop nothing, and it would
// make every Shorten wait on a resolver. Not public:
//  - IPv4: 0.0.0.0/8 (unspecified; 0.0.0.0 reaches this host), 127.0.0.0/8
//    (loopback), 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 (RFC 1918),
//    100.64.0.0/10 (RFC 6598, carrier-grade NAT), 169.254.0.0/16
//    (link-local: cloud metadata services), 224.0.0.0/4 (multicast),
//    240.0.0.0/4 (reserved, broadcast);
//  - IPv6: :: and ::1, fc00::/7 (unique local), fe80::/10 (link-local),
//    fec0::/10 (site-local), ff00::/8 (multicast), 64:ff9b:1::/48 (local
//    NAT64), and every form that embeds an IPv4 address of the list above
//    (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, IPv4-translated
//    ::ffff:0:a.b.c.d, NAT64 64:ff9b::a.b.c.d, 6to4 2002:AABB:CCDD::/48);
//  - names: localhost and *.localhost (RFC 6761), localhost.localdomain,
//    ip6-localhost, ip6-loopback, *.localdomain, *.local (RFC 6762),
//    *.internal (ICANN, private use), *.home.arpa (RFC 8375), and every
//    name of one label ("intranet", "metadata"), which resolvers complete
//    with their local search domains.
// Decimal, octal and hex IPv4 spellings ("2130706433", "0x7f.1") reach here
// as the dotted quad libcurl makes of them (CanonicalHost refuses the ones
// it does not).
std::string NonPublicHostReason(absl::string_view host);

// True if canonical `host` equals canonical `domain` or ends with "." +
// `domain`: "a.sho.rt" is under "sho.rt", "notsho.rt" is not.
bool IsSameOrSubdomain(absl::string_view host, absl::string_view domain);

}  // namespace shortener::url::internal

#endif  // SHORTENER_LIB_URL_HOST_H_
