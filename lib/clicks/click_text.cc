#include "lib/clicks/click_text.h"

#include "absl/strings/str_format.h"
#include "lib/common/utf8.h"

namespace shortener::clicks {

std::string CleanClickText(absl::string_view raw) {
  return utf8::Sanitize(raw, kMaxClickTextBytes);
}

std::string ClickTextProblem(absl::string_view field, absl::string_view value) {
  const utf8::TextFault fault = utf8::FindTextFault(value);
  switch (fault.kind) {
    case utf8::TextFault::Kind::kInvalidUtf8:
      return absl::StrFormat("%s: invalid UTF-8 at byte %d (0x%02X)", field, fault.position,
                             fault.byte);
    case utf8::TextFault::Kind::kControl:
      return absl::StrFormat("%s: control character 0x%02X at byte %d", field, fault.byte,
                             fault.position);
    case utf8::TextFault::Kind::kNone:
      break;
  }
  if (value.size() > kMaxClickTextBytes) {
    return absl::StrFormat("%s: %d bytes, more than %d", field, value.size(), kMaxClickTextBytes);
  }
  return "";
}

}  // namespace shortener::clicks
