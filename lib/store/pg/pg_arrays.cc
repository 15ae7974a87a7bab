#include "lib/store/pg/pg_arrays.h"

#include "absl/strings/str_cat.h"
#include "lib/store/create_planner.h"

namespace shortener::store {

std::string PgTimestamp(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%E6S+00", StoreTime(t), absl::UTCTimeZone());
}

void ArrayLiteral::Separate() {
  if (count_++ > 0) body_.push_back(',');
}

ArrayLiteral& ArrayLiteral::Add(absl::string_view text) {
  Separate();
  body_.push_back('"');
  for (char c : text) {
    if (c == '"' || c == '\\') body_.push_back('\\');
    body_.push_back(c);
  }
  body_.push_back('"');
  return *this;
}

ArrayLiteral& ArrayLiteral::Add(const std::optional<std::string>& text) {
  return text.has_value() ? Add(absl::string_view(*text)) : AddNull();
}

ArrayLiteral& ArrayLiteral::Add(int64_t number) {
  Separate();
  absl::StrAppend(&body_, number);
  return *this;
}

ArrayLiteral& ArrayLiteral::AddTime(absl::Time t) { return Add(PgTimestamp(t)); }

ArrayLiteral& ArrayLiteral::AddTime(const std::optional<absl::Time>& t) {
  return t.has_value() ? AddTime(*t) : AddNull();
}

ArrayLiteral& ArrayLiteral::AddBytes(absl::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  Separate();
  // Inside a quoted element `\\` is one backslash: the element is \x<hex>.
  body_ += "\"\\\\x";
  for (char c : bytes) {
    unsigned char b = static_cast<unsigned char>(c);
    body_.push_back(kHex[b >> 4]);
    body_.push_back(kHex[b & 15]);
  }
  body_.push_back('"');
  return *this;
}

ArrayLiteral& ArrayLiteral::AddNull() {
  Separate();
  body_ += "NULL";
  return *this;
}

}  // namespace shortener::store
