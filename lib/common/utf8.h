// UTF-8 for text that came from outside: whether bytes are well-formed
// UTF-8, where they stop being so, decoding one character, cutting at a
// character boundary, and repairing them into well-formed text. The one
// UTF-8 decoder of the project: other libraries call these rather than
// decode by hand.
//
// "Well-formed" is the Unicode Standard's definition (chapter 3, table 3-7;
// RFC 3629): no overlong forms, no surrogates (U+D800..U+DFFF, bytes ED A0..
// ED BF), nothing above U+10FFFF, no stray continuation bytes, no sequence
// cut short. Repair replaces each maximal ill-formed subpart with one U+FFFD
// (the standard's recommended practice, as browsers and ICU do), so one bad
// byte never swallows the valid characters after it.
//
// "Clean text" here is well-formed UTF-8 without C0 control characters
// (U+0000..U+001F: NUL, TAB, CR, LF, ...) or DEL (U+007F): what PostgreSQL
// `text` can hold (it refuses NUL) and what a log line or a statistics
// table should show.
//
// Thread safety: pure functions.
#ifndef SHORTENER_LIB_COMMON_UTF8_H_
#define SHORTENER_LIB_COMMON_UTF8_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace shortener::utf8 {

// U+FFFD REPLACEMENT CHARACTER, encoded.
inline constexpr absl::string_view kReplacement = "\xEF\xBF\xBD";

// Whether `c` is a C0 control character or DEL.
inline bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7F; }

// The length (1..4) of the well-formed character at the start of `s`, or 0
// if `s` is empty or does not start with one.
size_t CharLength(absl::string_view s);

// One character decoded: its code point and its length in bytes.
struct DecodedChar {
  char32_t code_point = 0;
  size_t length = 0;  // 1..4; 0 when there is no well-formed character
};

// The well-formed character at the start of `s`, or length 0 (code point 0)
// if `s` is empty or does not start with one. Length as CharLength(s).
DecodedChar DecodeChar(absl::string_view s);

// Whether all of `s` is well-formed UTF-8 (the empty string is).
bool IsValid(absl::string_view s);

// Why a value is not clean text, and where.
struct TextFault {
  enum class Kind { kNone, kInvalidUtf8, kControl };
  Kind kind = Kind::kNone;
  size_t position = 0;     // byte offset of the first offending byte
  unsigned char byte = 0;  // that byte
};

// The first fault of `s` as clean text; kind kNone if it is clean.
TextFault FindTextFault(absl::string_view s);

// The longest prefix of `s` of at most `max_bytes` bytes that does not end
// inside a multi-byte character: for well-formed `s`, a well-formed prefix.
// Only continuation bytes (10xxxxxx) right at the cut are stepped back over,
// at most three.
absl::string_view TruncateAtBoundary(absl::string_view s, size_t max_bytes);

// `s` as clean text of at most `max_bytes` bytes: each maximal ill-formed
// subpart and each control character becomes U+FFFD, and the result is cut
// at a character boundary (a replacement character that would not fit is
// left out whole). Clean input of at most `max_bytes` comes back unchanged;
// longer clean input comes back as TruncateAtBoundary(s, max_bytes).
std::string Sanitize(absl::string_view s, size_t max_bytes);

// Whether Sanitize(s, max_bytes) == s, without building it: `s` is clean
// text of at most `max_bytes` bytes.
bool IsCleanText(absl::string_view s, size_t max_bytes);

}  // namespace shortener::utf8

#endif  // SHORTENER_LIB_COMMON_UTF8_H_
