// Host names for everything that reads one out of a URL or a list: the
// host of an absolute URL, and the character and length rules of RFC 1123
// host names. The one owner of both: the URL policy, the service (its own
// base_url, an API key's allowed target domains), the API keys' domain
// allowlists and the click statistics' referrer hosts call these rather
// than split URLs or spell the rules themselves.
//
// Thread safety: pure functions; nothing here allocates.
#ifndef SHORTENER_LIB_URL_HOST_NAME_H_
#define SHORTENER_LIB_URL_HOST_NAME_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace shortener::url {

// Longest label of a host name, and longest host name (RFC 1035's 255 for
// the wire form, less the length bytes), in bytes.
inline constexpr size_t kMaxHostLabelLength = 63;
inline constexpr size_t kMaxHostNameLength = 253;

// Whether `c` may appear in a label of a host name (RFC 1123 as amended,
// RFC 5890's LDH labels): an ASCII letter of either case, a digit or "-".
// Never "_", which is no part of a host name (see host.h).
constexpr bool IsHostNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

// The host of the absolute URL `url`, as written (a view into `url`, case
// and percent-encoding untouched): what follows "scheme://" and any
// userinfo ("user@"), up to the port, path, query or fragment; an IPv6
// literal with its brackets ("https://u@[2001:db8::1]:8443/x" ->
// "[2001:db8::1]"). Empty when `url` does not start with a scheme (RFC 3986
// syntax) and "://", when the authority is empty, or when a bracketed
// literal is not closed or is followed by anything but a port. The host
// itself is not checked: for a URL UrlPolicy::Normalize returned it is
// canonical already (internal::CanonicalHost); other callers check it
// against their own rule.
absl::string_view HostOfUrl(absl::string_view url);

}  // namespace shortener::url

#endif  // SHORTENER_LIB_URL_HOST_NAME_H_
