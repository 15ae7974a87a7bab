#include "lib/common/utf8.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace shortener::utf8 {
namespace {

// What starts at the front of a non-empty string: a well-formed character
// of `length` bytes, or (valid false) an ill-formed maximal subpart of
// `length` bytes (at least 1), to be replaced by one U+FFFD.
struct Scan {
  size_t length = 1;
  bool valid = false;
};

// Table 3-7 of the Unicode Standard: the lead byte fixes the length and the
// range of the second byte (which is what excludes overlongs, surrogates
// and code points past U+10FFFF); later bytes are 80..BF.
Scan ScanChar(absl::string_view s) {
  const auto byte = [&s](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t lead = byte(0);
  if (lead < 0x80) return {1, true};
  size_t continuations = 0;
  uint8_t lo = 0x80;
  uint8_t hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    continuations = 1;
  } else if (lead == 0xE0) {
    continuations = 2, lo = 0xA0;  // below: overlong
  } else if ((lead >= 0xE1 && lead <= 0xEC) || lead == 0xEE || lead == 0xEF) {
    continuations = 2;
  } else if (lead == 0xED) {
    continuations = 2, hi = 0x9F;  // above: surrogates
  } else if (lead == 0xF0) {
    continuations = 3, lo = 0x90;  // below: overlong
  } else if (lead >= 0xF1 && lead <= 0xF3) {
    continuations = 3;
  } else if (lead == 0xF4) {
    continuations = 3, hi = 0x8F;  // above: past U+10FFFF
  } else {
    return {1, false};  // a continuation byte, C0, C1 or F5..FF: never a lead
  }
  for (size_t i = 1; i <= continuations; ++i) {
    // Cut short or broken: the bytes that did match are one subpart.
    if (i >= s.size() || byte(i) < lo || byte(i) > hi) return {i, false};
    lo = 0x80;
    hi = 0xBF;
  }
  return {continuations + 1, true};
}

constexpr uint64_t kOnes = 0x0101010101010101;
constexpr uint64_t kHighBits = 0x8080808080808080;

uint64_t Load8(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Whether the eight bytes are printable ASCII (0x20..0x7E). A byte of 0x80
// or more sets its own high bit; 0x7F becomes 0x80 in v + 1..; a byte below
// 0x20 wraps past 0x80 in v - 0x20... A carry or borrow between bytes needs
// a byte that is already caught (0xFF, or one below 0x20), so the test is
// exact.
bool PrintableAscii8(uint64_t v) {
  return ((v | (v + kOnes) | (v - kOnes * 0x20)) & kHighBits) == 0;
}

#if defined(__SSE2__)
// One bit per byte of the sixteen at `p` that is not printable ASCII.
// Signed compares: bytes of 0x80 and more are negative, so below 0x20 too.
unsigned NonPrintable16(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
  const __m128i del = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7F));
  return static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(low, del)));
}
#endif

// How many bytes at the start of [p, p + n) are printable ASCII. Every click
// event's User-Agent and Referer pass through here on the redirect path:
// sixteen bytes at a time (eight without SSE2), the last few by re-reading
// the final block.
size_t PrintableRun(const char* p, size_t n) {
  size_t i = 0;
#if defined(__SSE2__)
  while (n - i >= 16) {
    const unsigned bad = NonPrintable16(p + i);
    if (bad != 0) return i + static_cast<size_t>(__builtin_ctz(bad));
    i += 16;
  }
  if (n >= 16) {
    // Bit k of the final block is byte n - 16 + k: shift off those before i.
    const unsigned bad = NonPrintable16(p + n - 16) >> (16 - (n - i));
    return bad != 0 ? i + static_cast<size_t>(__builtin_ctz(bad)) : n;
  }
#endif
  while (n - i >= 8 && PrintableAscii8(Load8(p + i))) i += 8;
  while (i < n && static_cast<unsigned char>(p[i]) >= 0x20 &&
         static_cast<unsigned char>(p[i]) < 0x7F) {
    ++i;
  }
  return i;
}

}  // namespace

size_t CharLength(absl::string_view s) {
  if (s.empty()) return 0;
  const Scan scan = ScanChar(s);
  return scan.valid ? scan.length : 0;
}

DecodedChar DecodeChar(absl::string_view s) {
  if (s.empty()) return {};
  const Scan scan = ScanChar(s);
  if (!scan.valid) return {};
  // ScanChar has checked the bytes: the lead's payload, then six bits from
  // each continuation byte.
  static constexpr uint8_t kLeadBits[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  char32_t code_point = static_cast<uint8_t>(s[0]) & kLeadBits[scan.length];
  for (size_t i = 1; i < scan.length; ++i) {
    code_point = (code_point << 6) | (static_cast<uint8_t>(s[i]) & 0x3F);
  }
  return {code_point, scan.length};
}

bool IsValid(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    // Plain ASCII (most of what we see) eight bytes at a time.
    if (s.size() - i >= 8 && (Load8(s.data() + i) & kHighBits) == 0) {
      i += 8;
      continue;
    }
    const Scan scan = ScanChar(s.substr(i));
    if (!scan.valid) return false;
    i += scan.length;
  }
  return true;
}

TextFault FindTextFault(absl::string_view s) {
  const char* const p = s.data();
  const size_t n = s.size();
  size_t i = 0;
  while (true) {
    i += PrintableRun(p + i, n - i);
    if (i >= n) return {};
    const unsigned char c = static_cast<unsigned char>(p[i]);
    if (IsControl(c)) return {TextFault::Kind::kControl, i, c};
    const Scan scan = ScanChar(absl::string_view(p + i, n - i));
    if (!scan.valid) return {TextFault::Kind::kInvalidUtf8, i, c};
    i += scan.length;
  }
}

absl::string_view TruncateAtBoundary(absl::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  // The character the cut falls in starts at the last non-continuation byte
  // before the cut (at most three back); drop it if it needs more bytes
  // than the cut leaves it.
  size_t continuations = 0;
  while (continuations < 3 && continuations < max_bytes &&
         (static_cast<uint8_t>(s[max_bytes - continuations - 1]) & 0xC0) == 0x80) {
    ++continuations;
  }
  if (continuations == max_bytes) return s.substr(0, max_bytes);
  const size_t lead_at = max_bytes - continuations - 1;
  const uint8_t lead = static_cast<uint8_t>(s[lead_at]);
  const size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  if (length > continuations + 1) return s.substr(0, lead_at);
  return s.substr(0, max_bytes);
}

bool IsCleanText(absl::string_view s, size_t max_bytes) {
  return s.size() <= max_bytes && FindTextFault(s).kind == TextFault::Kind::kNone;
}

std::string Sanitize(absl::string_view s, size_t max_bytes) {
  // Only the bytes that can reach the output are looked at: a clean prefix
  // of max_bytes ends at a character boundary by itself.
  const absl::string_view head = s.substr(0, max_bytes);
  const TextFault fault = FindTextFault(head);
  if (fault.kind == TextFault::Kind::kNone) return std::string(head);
  std::string out;
  out.reserve(std::min(max_bytes, s.size() + 2 * kReplacement.size()));
  out.append(s.data(), fault.position);
  size_t i = fault.position;
  while (i < s.size()) {
    const Scan scan = ScanChar(s.substr(i));
    const bool keep = scan.valid && !IsControl(static_cast<unsigned char>(s[i]));
    const absl::string_view piece = keep ? s.substr(i, scan.length) : kReplacement;
    if (out.size() + piece.size() > max_bytes) break;  // never half a character
    out.append(piece.data(), piece.size());
    i += scan.length;
  }
  return out;
}

}  // namespace shortener::utf8
