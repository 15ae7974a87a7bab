// Byte-level checks on a raw long URL, run before libcurl parses it, and the
// percent-encoding of bytes libcurl leaves raw. libcurl is lenient by design
// (it accepts spaces, "%zz", "http:/host", backslashes in paths); these
// checks make us strict where a browser and libcurl might read the same
// string differently. Internal to lib/url. Pure functions; thread-safe.
#ifndef SHORTENER_LIB_URL_URL_SCAN_H_
#define SHORTENER_LIB_URL_URL_SCAN_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shortener::url::internal {

// OK if `raw` holds only valid UTF-8 without whitespace, control characters
// (C0, DEL, C1), Unicode spaces, invisible or bidirectional formatting
// characters, or backslashes, and every "%" starts a "%XX" hex escape.
// Otherwise INVALID_ARGUMENT naming the first offending byte's position.
absl::Status CheckCharacters(absl::string_view raw);

// True if `scheme` has RFC 3986 scheme syntax:
// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
bool IsValidScheme(absl::string_view scheme);

// Returns the lower-cased scheme of an absolute URL (RFC 3986:
// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) followed by ":"), or
// INVALID_ARGUMENT for relative and scheme-relative ("//host") references.
absl::StatusOr<std::string> ExtractScheme(absl::string_view raw);

// OK if "scheme:" (of `scheme_length` bytes) is followed by "//" and a
// non-empty authority. libcurl itself accepts "http:/host" and reads
// "http:///path" as host "path"; we refuse both.
absl::Status CheckAuthorityPresent(absl::string_view raw, size_t scheme_length);

// Percent-encodes (upper-case hex) the bytes RFC 3986 never allows in a URL:
// non-ASCII, controls, space and  " < > \ ^ ` { | }.  Every other byte,
// "%" included, is copied as it is, so encoding twice changes nothing.
std::string EncodeDisallowedBytes(absl::string_view component);

// `s` in double quotes for an error message, cut to 64 bytes (on a UTF-8
// boundary) so that a 2 KiB host does not become a 2 KiB message.
std::string QuoteForMessage(absl::string_view s);

}  // namespace shortener::url::internal

#endif  // SHORTENER_LIB_URL_URL_SCAN_H_
