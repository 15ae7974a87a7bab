// lib/common/utf8: checked against an independent decoder over every
// string of up to three bytes and over seeded random strings, with the
// standard's own examples for replacement.
#include "lib/common/utf8.h"

#include <cstdint>
#include <random>
#include <string>

#include "absl/strings/escaping.h"
#include "catch2/catch.hpp"

namespace shortener::utf8 {
namespace {

// A decoder written the other way round from ScanChar: compute the code
// point from the bit patterns, then check the rules on the number.
bool ReferenceValid(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const uint8_t c = static_cast<uint8_t>(s[i]);
    size_t n;
    uint32_t cp;
    if (c < 0x80) {
      n = 1, cp = c;
    } else if ((c & 0xE0) == 0xC0) {
      n = 2, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 3, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 4, cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i < n) return false;
    for (size_t k = 1; k < n; ++k) {
      const uint8_t cc = static_cast<uint8_t>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n;
  }
  return true;
}

bool HasControl(const std::string& s) {
  for (char c : s) {
    if (IsControl(static_cast<unsigned char>(c))) return true;
  }
  return false;
}

std::string Encode(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

// Random bytes biased towards what breaks decoders: lead bytes,
// continuation bytes, controls, whole characters of every length.
std::string RandomText(std::mt19937_64& rng, size_t max_pieces) {
  static const char* const kPieces[] = {"a",
                                        "Z",
                                        " ",
                                        "\x00",
                                        "\t",
                                        "\x1f",
                                        "\x7f",
                                        "\x80",
                                        "\xbf",
                                        "\xc0",
                                        "\xc1",
                                        "\xc2",
                                        "\xdf",
                                        "\xe0",
                                        "\xe0\xa0",
                                        "\xed",
                                        "\xed\xa0",
                                        "\xef",
                                        "\xf0",
                                        "\xf0\x90",
                                        "\xf0\x90\x80",
                                        "\xf4",
                                        "\xf4\x90",
                                        "\xf5",
                                        "\xff",
                                        "\xc3\xa9",
                                        "\xe2\x82\xac",
                                        "\xf0\x9f\x98\x80",
                                        "\xef\xbf\xbd",
                                        "\xed\x9f\xbf",
                                        "\xee\x80\x80",
                                        "\xf4\x8f\xbf\xbf",
                                        "\xc0\x80",
                                        "\xe0\x80\x80",
                                        "\xed\xa0\x80",
                                        "\xed\xbf\xbf",
                                        "\xf4\x90\x80\x80",
                                        "\xf8\x88\x80\x80\x80"};
  constexpr size_t kCount = sizeof(kPieces) / sizeof(kPieces[0]);
  std::string out;
  const size_t pieces = rng() % (max_pieces + 1);
  for (size_t i = 0; i < pieces; ++i) {
    const size_t k = rng() % kCount;
    // "\x00" is one NUL byte, not an empty string.
    if (k == 3) {
      out.push_back('\0');
    } else {
      out += kPieces[k];
    }
  }
  return out;
}

// Calls `check` with every string of up to three bytes.
template <typename Check>
void ForEveryShortString(Check check) {
  std::string s;
  for (int len = 0; len <= 3; ++len) {
    const uint32_t end = 1u << (8 * len);
    s.assign(len, '\0');
    for (uint32_t v = 0; v < end; ++v) {
      for (int k = 0; k < len; ++k) s[k] = static_cast<char>((v >> (8 * k)) & 0xFF);
      check(s);
    }
  }
}

TEST_CASE("IsValid agrees with a reference decoder on every string of up to three bytes",
          "[lib/common][utf8]") {
  uint64_t checked = 0;
  uint64_t mismatches = 0;
  ForEveryShortString([&](const std::string& s) {
    const bool valid = IsValid(s);
    if (valid != ReferenceValid(s)) {
      if (++mismatches <= 5) FAIL_CHECK("mismatch on " << absl::CHexEscape(s));
    }
    // One character, when the whole is one.
    if (!s.empty() && valid && CharLength(s) == s.size()) {
      CHECK(ReferenceValid(s));
    }
    ++checked;
  });
  CHECK(mismatches == 0);
  CHECK(checked == 1 + 256 + 65536 + 16777216);
}

TEST_CASE("every code point encodes to one valid character, surrogates to none",
          "[lib/common][utf8]") {
  uint64_t bad = 0;
  for (uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    const std::string s = Encode(cp);
    const bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
    if (IsValid(s) == surrogate || (!surrogate && CharLength(s) != s.size())) ++bad;
  }
  CHECK(bad == 0);
  // Four-byte forms past U+10FFFF, and every overlong form of a small value.
  CHECK_FALSE(IsValid("\xF4\x90\x80\x80"));  // U+110000
  CHECK_FALSE(IsValid("\xF7\xBF\xBF\xBF"));  // U+1FFFFF
  CHECK_FALSE(IsValid("\xC0\x80"));          // NUL, two bytes
  CHECK_FALSE(IsValid("\xC1\xBF"));
  CHECK_FALSE(IsValid("\xE0\x80\xAF"));              // "/", three bytes
  CHECK_FALSE(IsValid("\xE0\x9F\xBF"));              // U+07FF, three bytes
  CHECK_FALSE(IsValid("\xF0\x80\x80\xAF"));          // "/", four bytes
  CHECK_FALSE(IsValid("\xF0\x8F\xBF\xBF"));          // U+FFFF, four bytes
  CHECK_FALSE(IsValid("\xED\xA0\x80"));              // U+D800
  CHECK_FALSE(IsValid("\xED\xBF\xBF"));              // U+DFFF
  CHECK_FALSE(IsValid("\xED\xA0\xBD\xED\xB8\x80"));  // a UTF-16 surrogate pair, CESU-8
  CHECK(IsValid("\xED\x9F\xBF"));                    // U+D7FF
  CHECK(IsValid("\xEE\x80\x80"));                    // U+E000
  CHECK(IsValid("\xF4\x8F\xBF\xBF"));                // U+10FFFF
}

TEST_CASE("DecodeChar gives back every code point and refuses what IsValid refuses",
          "[lib/common][utf8]") {
  uint64_t bad = 0;
  for (uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const std::string s = Encode(cp) + "\x80";  // what follows is not read
    const DecodedChar ch = DecodeChar(s);
    if (ch.code_point != cp || ch.length != s.size() - 1) ++bad;
  }
  CHECK(bad == 0);
  // Every string of up to three bytes: a character exactly where CharLength
  // sees one, and then the code point whose encoding those bytes are.
  ForEveryShortString([&bad](const std::string& s) {
    const DecodedChar ch = DecodeChar(s);
    if (ch.length != CharLength(s)) ++bad;
    if (ch.length == 0 && ch.code_point != 0) ++bad;
    if (ch.length > 0 && Encode(ch.code_point) != s.substr(0, ch.length)) ++bad;
  });
  CHECK(bad == 0);
  CHECK(DecodeChar("").length == 0);
  CHECK(DecodeChar("\xED\xA0\x80").length == 0);      // U+D800
  CHECK(DecodeChar("\xC0\xAF").length == 0);          // "/", overlong
  CHECK(DecodeChar("\xF4\x90\x80\x80").length == 0);  // U+110000
  CHECK(DecodeChar("\xE2\x82").length == 0);          // cut short
}

TEST_CASE("IsValid agrees with the reference on seeded random strings", "[lib/common][utf8]") {
  std::mt19937_64 rng(17);
  for (int i = 0; i < 200000; ++i) {
    const std::string s = RandomText(rng, 12);
    INFO(absl::CHexEscape(s));
    REQUIRE(IsValid(s) == ReferenceValid(s));
  }
}

TEST_CASE("sequences cut short at the end are invalid", "[lib/common][utf8]") {
  for (const std::string whole : {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"}) {
    for (size_t cut = 1; cut < whole.size(); ++cut) {
      const std::string s = "abcdefgh" + whole.substr(0, cut);
      INFO(absl::CHexEscape(s));
      CHECK_FALSE(IsValid(s));
      CHECK(FindTextFault(s).kind == TextFault::Kind::kInvalidUtf8);
      CHECK(FindTextFault(s).position == 8);
      CHECK(Sanitize(s, 100) == "abcdefgh" + std::string(kReplacement));
    }
  }
}

TEST_CASE("FindTextFault names the first invalid byte or control character", "[lib/common][utf8]") {
  CHECK(FindTextFault("").kind == TextFault::Kind::kNone);
  CHECK(FindTextFault("Mozilla/5.0 (X11; Linux x86_64) \xC3\xA9t\xC3\xA9").kind ==
        TextFault::Kind::kNone);
  TextFault f = FindTextFault("Mozilla/5.0\xFF\xFE");
  CHECK(f.kind == TextFault::Kind::kInvalidUtf8);
  CHECK(f.position == 11);
  CHECK(f.byte == 0xFF);
  f = FindTextFault(std::string("abcdefghij\0k", 12));
  CHECK(f.kind == TextFault::Kind::kControl);
  CHECK(f.position == 10);
  CHECK(f.byte == 0);
  f = FindTextFault("tab\there");
  CHECK(f.kind == TextFault::Kind::kControl);
  CHECK(f.position == 3);
  CHECK(FindTextFault("0123456789abcdef\x7F").kind == TextFault::Kind::kControl);
  CHECK(FindTextFault("0123456789abcdef\x7F").position == 16);
  // C1 controls (U+0080..U+009F) are well-formed characters: kept.
  CHECK(FindTextFault("\xC2\x85").kind == TextFault::Kind::kNone);
}

TEST_CASE("FindTextFault agrees with a byte-by-byte reference on seeded random strings",
          "[lib/common][utf8]") {
  // Long printable runs with a fault (or none) anywhere, so the eight-byte
  // steps and the final overlapping read meet every position.
  std::mt19937_64 rng(99);
  for (int i = 0; i < 200000; ++i) {
    std::string s(rng() % 40, 'a');
    for (char& c : s) c = static_cast<char>(0x20 + rng() % 0x5F);
    if (rng() % 4 != 0 && !s.empty()) {
      const std::string bad = RandomText(rng, 2);
      s.replace(rng() % s.size(), bad.size() % 3, bad);
    }
    // Reference: the first control byte or ill-formed sequence, scanning
    // from the start.
    TextFault expected;
    for (size_t k = 0; k < s.size();) {
      const unsigned char c = static_cast<unsigned char>(s[k]);
      if (IsControl(c)) {
        expected = {TextFault::Kind::kControl, k, c};
        break;
      }
      const size_t n = CharLength(absl::string_view(s).substr(k));
      if (n == 0) {
        expected = {TextFault::Kind::kInvalidUtf8, k, c};
        break;
      }
      k += n;
    }
    const TextFault got = FindTextFault(s);
    INFO(absl::CHexEscape(s));
    REQUIRE(got.kind == expected.kind);
    if (got.kind != TextFault::Kind::kNone) {
      REQUIRE(got.position == expected.position);
      REQUIRE(got.byte == expected.byte);
    }
  }
}

TEST_CASE("Sanitize replaces each maximal ill-formed subpart with one U+FFFD",
          "[lib/common][utf8]") {
  const std::string r(kReplacement);
  // The Unicode Standard's example (chapter 3, "U+FFFD Substitution of
  // Maximal Subparts").
  CHECK(Sanitize("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64", 100) ==
        "a" + r + r + r + "b" + r + "c" + r + r + "d");
  CHECK(Sanitize("\xFF\xFE", 100) == r + r);
  CHECK(Sanitize("\xC0\x80", 100) == r + r);          // overlong: C0 never leads
  CHECK(Sanitize("\xE0\x80\x80", 100) == r + r + r);  // E0 needs A0..BF next
  CHECK(Sanitize("\xED\xA0\x80", 100) == r + r + r);  // surrogate
  CHECK(Sanitize("\xF4\x90\x80\x80", 100) == r + r + r + r);
  CHECK(Sanitize("\xE2\x82", 100) == r);  // cut short: one subpart
  CHECK(Sanitize("\xE2\x82x", 100) == r + "x");
  CHECK(Sanitize(std::string("a\0b\r\n\x7F", 6), 100) == "a" + r + "b" + r + r + r);
  CHECK(Sanitize("caf\xC3\xA9 \xF0\x9F\x98\x80", 100) == "caf\xC3\xA9 \xF0\x9F\x98\x80");
}

TEST_CASE("Sanitize cuts at a character boundary and never exceeds the bound",
          "[lib/common][utf8]") {
  const std::string euro = "\xE2\x82\xAC";
  const std::string s = "ab" + euro + euro;  // 8 bytes
  CHECK(Sanitize(s, 8) == s);
  CHECK(Sanitize(s, 7) == "ab" + euro);
  CHECK(Sanitize(s, 5) == "ab" + euro);
  CHECK(Sanitize(s, 4) == "ab");
  CHECK(Sanitize(s, 2) == "ab");
  CHECK(Sanitize(s, 0).empty());
  // A replacement that does not fit is left out whole.
  CHECK(Sanitize("ab\xFF", 4) == "ab");
  CHECK(Sanitize("ab\xFF", 5) == "ab" + std::string(kReplacement));
  // 16 KiB of NUL bytes: bounded, not tripled.
  CHECK(Sanitize(std::string(16384, '\0'), 512).size() == 510);
}

TEST_CASE("Sanitize properties hold on seeded random input", "[lib/common][utf8]") {
  std::mt19937_64 rng(20261126);
  for (int i = 0; i < 100000; ++i) {
    const std::string s = RandomText(rng, 16);
    const size_t max = rng() % 48;
    const std::string out = Sanitize(s, max);
    const std::string full = Sanitize(s, SIZE_MAX);
    INFO(absl::CHexEscape(s) << " max " << max << " -> " << absl::CHexEscape(out));
    REQUIRE(ReferenceValid(out));
    REQUIRE_FALSE(HasControl(out));
    REQUIRE(out.size() <= max);
    REQUIRE(IsCleanText(out, max));
    // Cut at a character boundary of the repaired text, as late as fits.
    REQUIRE(full.compare(0, out.size(), out) == 0);
    if (out.size() < full.size()) {
      REQUIRE(out.size() + CharLength(absl::string_view(full).substr(out.size())) > max);
    }
    // Clean input is left alone (cut only when too long).
    if (IsCleanText(s, SIZE_MAX)) {
      REQUIRE(full == s);
      REQUIRE(out == std::string(TruncateAtBoundary(s, max)));
    }
    // Sanitizing twice changes nothing.
    REQUIRE(Sanitize(out, max) == out);
  }
}

TEST_CASE("TruncateAtBoundary never cuts a character of valid text", "[lib/common][utf8]") {
  CHECK(TruncateAtBoundary("abc", 5) == "abc");
  CHECK(TruncateAtBoundary("a\xE2\x82\xAC", 3) == "a");
  CHECK(TruncateAtBoundary("a\xE2\x82\xAC", 4) == "a\xE2\x82\xAC");
  CHECK(TruncateAtBoundary("\xF0\x9F\x98\x80", 3).empty());
  CHECK(TruncateAtBoundary("abc\x80", 3) == "abc");  // a stray byte after the cut
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<uint32_t> cps(0, 0x10FFFF);
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    const int n = static_cast<int>(rng() % 8);
    for (int k = 0; k < n; ++k) {
      uint32_t cp = cps(rng);
      if (cp >= 0xD800 && cp <= 0xDFFF) cp = 'x';
      // Short characters as often as long ones.
      if (rng() % 2 == 0) cp %= 0x800;
      s += Encode(cp);
    }
    for (size_t max = 0; max <= s.size() + 1; ++max) {
      const absl::string_view cut = TruncateAtBoundary(s, max);
      INFO(absl::CHexEscape(s) << " max " << max);
      REQUIRE(cut.size() <= max);
      REQUIRE(s.compare(0, cut.size(), cut.data(), cut.size()) == 0);
      REQUIRE(IsValid(cut));
      if (cut.size() < s.size()) {
        REQUIRE(cut.size() + CharLength(absl::string_view(s).substr(cut.size())) > max);
      }
    }
  }
}

}  // namespace
}  // namespace shortener::utf8
