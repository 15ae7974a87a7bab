// Fuzzes lib/common/utf8.h, through which every text value a client sends
// (User-Agent, Referer, forwarded addresses, batch ids) is checked, cut and
// repaired before it is queued, stored or logged.
//
// Input: byte 0 is the byte budget (0..255); the rest is the text.
// Invariants, besides no memory error or UB:
//  - IsValid holds exactly when CharLength steps through all of the text;
//    DecodeChar agrees with CharLength at every step, and its code point
//    encodes back to the bytes it read;
//    FindTextFault finds nothing exactly when it is valid without control
//    characters, and otherwise names the byte at the position it gives;
//  - TruncateAtBoundary is a prefix within the budget, at most three bytes
//    short of it, the whole text when it fits, and valid when the text is;
//  - Sanitize gives clean text within the budget that Sanitize leaves
//    unchanged; clean text within the budget comes back unchanged, longer
//    clean text as TruncateAtBoundary; IsCleanText(s, n) is exactly
//    Sanitize(s, n) == s.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "lib/common/utf8.h"
#include "tests/fuzz/fuzz_check.h"

namespace shortener::utf8 {
namespace {

// The UTF-8 encoding of a code point, written from the bit patterns.
std::string Encode(char32_t cp) {
  if (cp < 0x80) return std::string(1, static_cast<char>(cp));
  std::string out;
  if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  }
  out += static_cast<char>(0x80 | (cp & 0x3F));
  return out;
}

bool StepsThrough(absl::string_view s) {
  while (!s.empty()) {
    const size_t length = CharLength(s);
    const DecodedChar ch = DecodeChar(s);
    FUZZ_CHECK(ch.length == length);
    if (length == 0) return false;
    FUZZ_CHECK(Encode(ch.code_point) == s.substr(0, length));
    FUZZ_CHECK(length <= 4 && length <= s.size());
    s.remove_prefix(length);
  }
  return true;
}

bool HasControl(absl::string_view s) {
  for (char c : s) {
    if (IsControl(static_cast<unsigned char>(c))) return true;
  }
  return false;
}

void FuzzOne(size_t budget, absl::string_view s) {
  const bool valid = IsValid(s);
  FUZZ_CHECK(valid == StepsThrough(s));
  const TextFault fault = FindTextFault(s);
  FUZZ_CHECK((fault.kind == TextFault::Kind::kNone) == (valid && !HasControl(s)));
  if (fault.kind != TextFault::Kind::kNone) {
    FUZZ_CHECK(fault.position < s.size());
    FUZZ_CHECK(fault.byte == static_cast<unsigned char>(s[fault.position]));
    FUZZ_CHECK(IsValid(s.substr(0, fault.position)) && !HasControl(s.substr(0, fault.position)));
  }

  const absl::string_view cut = TruncateAtBoundary(s, budget);
  FUZZ_CHECK(cut.data() == s.data() && cut.size() <= budget && cut.size() <= s.size());
  if (s.size() <= budget) {
    FUZZ_CHECK(cut.size() == s.size());
  } else {
    FUZZ_CHECK(cut.size() + 3 >= budget);
  }
  if (valid) FUZZ_CHECK(IsValid(cut));

  const std::string clean = Sanitize(s, budget);
  FUZZ_CHECK(clean.size() <= budget);
  FUZZ_CHECK(FindTextFault(clean).kind == TextFault::Kind::kNone);
  FUZZ_CHECK(IsCleanText(clean, budget));
  FUZZ_CHECK(Sanitize(clean, budget) == clean);
  const bool clean_input = fault.kind == TextFault::Kind::kNone;
  if (clean_input && s.size() <= budget) FUZZ_CHECK(clean == s);
  if (clean_input && s.size() > budget) FUZZ_CHECK(clean == TruncateAtBoundary(s, budget));
  FUZZ_CHECK(IsCleanText(s, budget) == (clean == s));
}

}  // namespace
}  // namespace shortener::utf8

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  shortener::utf8::FuzzOne(data[0],
                           absl::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  return 0;
}
