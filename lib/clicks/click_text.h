// The rule for the free-text fields of a click event (code, client address,
// User-Agent, Referer): clean text (lib/common/utf8.h: well-formed UTF-8
// without control characters) of at most kMaxClickTextBytes bytes.
//
// Both ends of RecordClicks apply it: the edge makes every value it copies
// from a request conform before the event is queued (CleanClickText), and
// the service refuses an event with a field that does not
// (ClickTextProblem). PostgreSQL text cannot hold NUL or invalid UTF-8, and
// statistics have no use for control characters; the bound keeps what one
// request can make the edge hold, spool and send small.
//
// Thread safety: pure functions.
#ifndef SHORTENER_LIB_CLICKS_CLICK_TEXT_H_
#define SHORTENER_LIB_CLICKS_CLICK_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace shortener::clicks {

// The most bytes of each text field of a click event: enough for any real
// browser's User-Agent and for the Referers that matter (their host is what
// statistics keep).
inline constexpr size_t kMaxClickTextBytes = 512;

// `raw` made to follow the rule: invalid UTF-8 and control characters
// replaced by U+FFFD, then cut to kMaxClickTextBytes at a character
// boundary. A value that already follows it comes back unchanged.
std::string CleanClickText(absl::string_view raw);

// Empty if `value` follows the rule; otherwise why not, starting with
// `field` and naming the first offending byte: `user_agent: invalid UTF-8 at
// byte 3 (0xFF)`, `referer: control character 0x00 at byte 7`,
// `user_agent: 600 bytes, more than 512`.
std::string ClickTextProblem(absl::string_view field, absl::string_view value);

}  // namespace shortener::clicks

#endif  // SHORTENER_LIB_CLICKS_CLICK_TEXT_H_
