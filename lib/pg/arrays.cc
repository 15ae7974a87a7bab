#include "lib/pg/arrays.h"

#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "lib/common/store_time.h"

namespace shortener::pg {

std::string PgTimestamp(absl::Time t) {
  // Every link row carries one or two of these, so years 1..9999 are
  // formatted by hand: absl::FormatTime goes through a general strftime-like
  // parser (~2 % of a BatchShorten's service CPU). The year is zero-padded:
  // %Y writes year 1 as "1", which PostgreSQL reads as 2001.
  const int64_t micros = absl::ToUnixMicros(t);
  const absl::CivilSecond cs = absl::ToCivilSecond(StoreTime(t), absl::UTCTimeZone());
  if (cs.year() < 1 || cs.year() > 9999) {
    return absl::FormatTime("%Y-%m-%d %H:%M:%E6S+00", StoreTime(t), absl::UTCTimeZone());
  }
  const int64_t fraction = ((micros % 1000000) + 1000000) % 1000000;
  char out[] = "YYYY-MM-DD HH:MM:SS.ffffff+00";
  auto put = [&out](int at, int64_t value, int digits) {
    for (int i = digits - 1; i >= 0; --i, value /= 10) {
      out[at + i] = static_cast<char>('0' + value % 10);
    }
  };
  put(0, cs.year(), 4);
  put(5, cs.month(), 2);
  put(8, cs.day(), 2);
  put(11, cs.hour(), 2);
  put(14, cs.minute(), 2);
  put(17, cs.second(), 2);
  put(20, fraction, 6);
  return std::string(out, sizeof(out) - 1);
}

void AppendHex(absl::string_view bytes, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (char c : bytes) {
    const unsigned char b = static_cast<unsigned char>(c);
    out->push_back(kHex[b >> 4]);
    out->push_back(kHex[b & 15]);
  }
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
  Separate();
  // Inside a quoted element `\\` is one backslash: the element is \x<hex>.
  body_ += "\"\\\\x";
  AppendHex(bytes, &body_);
  body_.push_back('"');
  return *this;
}

ArrayLiteral& ArrayLiteral::AddNull() {
  Separate();
  body_ += "NULL";
  return *this;
}

}  // namespace shortener::pg
