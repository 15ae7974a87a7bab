#include "lib/url/url_scan.h"

#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/common/status_macros.h"
#include "lib/common/utf8.h"

namespace shortener::url::internal {
namespace {

constexpr size_t kMaxQuotedBytes = 64;

absl::Status Invalid(absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("long_url: ", message));
}

std::string ControlName(uint8_t c) {
  switch (c) {
    case 0x00:
      return "0x00, NUL";
    case 0x09:
      return "0x09, TAB";
    case 0x0A:
      return "0x0A, LF";
    case 0x0D:
      return "0x0D, CR";
    case 0x7F:
      return "0x7F, DEL";
    default:
      return absl::StrFormat("0x%02X", c);
  }
}

bool IsHexDigit(char c) { return absl::ascii_isxdigit(static_cast<unsigned char>(c)); }

absl::Status CheckAsciiByte(absl::string_view raw, size_t pos) {
  const uint8_t c = static_cast<uint8_t>(raw[pos]);
  if (c < 0x20 || c == 0x7F) {
    return Invalid(
        absl::StrFormat("contains a control character at position %d (%s)", pos, ControlName(c)));
  }
  if (c == ' ') {
    return Invalid(absl::StrFormat("contains a space at position %d (encode it as %%20)", pos));
  }
  if (c == '\\') {
    // Browsers read "\" as "/" in http(s) URLs, libcurl keeps it as data:
    // the host we check and the host a browser visits could differ.
    return Invalid(absl::StrFormat("contains a backslash at position %d (encode it as %%5C)", pos));
  }
  if (c == '%' &&
      (pos + 2 >= raw.size() || !IsHexDigit(raw[pos + 1]) || !IsHexDigit(raw[pos + 2]))) {
    return Invalid(
        absl::StrFormat("broken percent-encoding at position %d (\"%%\" must be followed by "
                        "two hex digits)",
                        pos));
  }
  return absl::OkStatus();
}

bool IsUnicodeSpace(char32_t cp) {
  return cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

// Zero-width and bidirectional controls: invisible, and used to make a
// link read differently from where it goes.
bool IsInvisibleFormat(char32_t cp) {
  return (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF;
}

absl::Status CheckCodePoint(char32_t cp, size_t pos) {
  const auto code = [cp] { return absl::StrFormat("U+%04X", static_cast<uint32_t>(cp)); };
  if (cp <= 0x9F) {  // C1 controls; the caller handles everything below 0x80.
    return Invalid(
        absl::StrFormat("contains a control character at position %d (%s)", pos, code()));
  }
  if (IsUnicodeSpace(cp)) {
    return Invalid(absl::StrFormat("contains a Unicode space at position %d (%s)", pos, code()));
  }
  if (IsInvisibleFormat(cp)) {
    return Invalid(absl::StrFormat("contains an invisible formatting character at position %d (%s)",
                                   pos, code()));
  }
  return absl::OkStatus();
}

bool IsSchemeChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
}

bool MustEncode(uint8_t c) {
  if (c <= 0x20 || c >= 0x7F) return true;
  switch (c) {
    case '"':
    case '<':
    case '>':
    case '\\':
    case '^':
    case '`':
    case '{':
    case '|':
    case '}':
      return true;
    default:
      return false;
  }
}

}  // namespace

bool IsValidScheme(absl::string_view scheme) {
  if (scheme.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(scheme[0]))) {
    return false;
  }
  for (char c : scheme) {
    if (!IsSchemeChar(c)) return false;
  }
  return true;
}

absl::Status CheckCharacters(absl::string_view raw) {
  size_t pos = 0;
  while (pos < raw.size()) {
    const uint8_t c = static_cast<uint8_t>(raw[pos]);
    if (c > 0x20 && c < 0x7F && c != '\\' && c != '%') {
      ++pos;  // the bytes of nearly every URL: nothing to check
      continue;
    }
    if (c < 0x80) {
      SHORTENER_RETURN_IF_ERROR(CheckAsciiByte(raw, pos));
      ++pos;
      continue;
    }
    const utf8::DecodedChar ch = utf8::DecodeChar(raw.substr(pos));
    if (ch.length == 0) {
      return Invalid(absl::StrFormat("invalid UTF-8 at position %d", pos));
    }
    SHORTENER_RETURN_IF_ERROR(CheckCodePoint(ch.code_point, pos));
    pos += ch.length;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ExtractScheme(absl::string_view raw) {
  if (absl::StartsWith(raw, "//")) {
    return Invalid(
        "is scheme-relative (starts with \"//\"); an absolute URL such as "
        "https://example.com/ is required");
  }
  // The scheme is the run of scheme characters before the first ':'; any
  // other byte first (including '/', '?' and '#') means there is none.
  size_t end = 0;
  while (end < raw.size() && IsSchemeChar(raw[end])) ++end;
  if (end == raw.size() || raw[end] != ':' || !IsValidScheme(raw.substr(0, end))) {
    return Invalid(
        "has no scheme; an absolute URL such as https://example.com/ is "
        "required");
  }
  return absl::AsciiStrToLower(raw.substr(0, end));
}

absl::Status CheckAuthorityPresent(absl::string_view raw, size_t scheme_length) {
  absl::string_view rest = raw.substr(scheme_length + 1);
  if (!absl::StartsWith(rest, "//")) {
    return Invalid(absl::StrFormat("must have \"//\" after \"%s:\"",
                                   absl::AsciiStrToLower(raw.substr(0, scheme_length))));
  }
  rest.remove_prefix(2);
  if (rest.empty() || rest[0] == '/' || rest[0] == '?' || rest[0] == '#') {
    return Invalid("has no host");
  }
  return absl::OkStatus();
}

std::string EncodeDisallowedBytes(absl::string_view component) {
  static constexpr char kHexDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(component.size());
  // Runs of bytes that stay are appended whole.
  size_t run = 0;
  for (size_t i = 0; i < component.size(); ++i) {
    const uint8_t c = static_cast<uint8_t>(component[i]);
    if (!MustEncode(c)) continue;
    out.append(component.data() + run, i - run);
    out.push_back('%');
    out.push_back(kHexDigits[c >> 4]);
    out.push_back(kHexDigits[c & 0xF]);
    run = i + 1;
  }
  out.append(component.data() + run, component.size() - run);
  return out;
}

std::string QuoteForMessage(absl::string_view s) {
  if (s.size() <= kMaxQuotedBytes) return absl::StrCat("\"", s, "\"");
  // Never half a character, so that the message stays valid UTF-8.
  return absl::StrCat("\"", utf8::TruncateAtBoundary(s, kMaxQuotedBytes), "...\"");
}

}  // namespace shortener::url::internal
