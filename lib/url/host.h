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
// if the result is not made of DNS labels (letters, digits, "-", "_"; 1 to
// 63 bytes each, 253 in all), a plain dotted-quad IPv4 address (a host
// whose last label is a number, decimal or "0x" hex, must be one) or a
// bracketed IPv6 address.
absl::StatusOr<std::string> CanonicalHost(absl::string_view host);

// True if canonical `host` equals canonical `domain` or ends with "." +
// `domain`: "a.sho.rt" is under "sho.rt", "notsho.rt" is not.
bool IsSameOrSubdomain(absl::string_view host, absl::string_view domain);

}  // namespace shortener::url::internal

#endif  // SHORTENER_LIB_URL_HOST_H_
