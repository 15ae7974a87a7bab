// Text forms of parameter values for our Postgres statements: PostgreSQL
// array literals (for `unnest($1::text[])`) and timestamps. Every store on
// PostgreSQL (links, clicks, API keys) builds its parameters with these.
//
// Array elements are always double-quoted with `"` and `\` backslash-escaped,
// so any text (commas, braces, quotes, spaces, the word NULL) arrives
// unchanged; a missing value is the unquoted NULL. The literal is bound as a
// parameter, never spliced into SQL. Text must hold no NUL byte (libpq
// parameters are C strings): callers validate first (e.g. ValidateNewLink).
//
// Thread-compatible.
#ifndef SHORTENER_LIB_PG_ARRAYS_H_
#define SHORTENER_LIB_PG_ARRAYS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace shortener::pg {

// "2024-05-01 12:00:00.123456+00": StoreTime(t) in UTC, for a timestamptz
// parameter. Years are four digits, zero-padded ("0001-01-01 ..."; an
// unpadded year 1 would read as 2001); years past 9999 take more digits.
std::string PgTimestamp(absl::Time t);

// Appends `bytes` as lower-case hex digits (the body of bytea's \x<hex>
// input form) to `out`.
void AppendHex(absl::string_view bytes, std::string* out);

class ArrayLiteral {
 public:
  ArrayLiteral& Add(absl::string_view text);
  ArrayLiteral& Add(const std::string& text) { return Add(absl::string_view(text)); }
  ArrayLiteral& Add(const std::optional<std::string>& text);  // nullopt: NULL
  ArrayLiteral& Add(int64_t number);
  ArrayLiteral& AddTime(absl::Time t);
  ArrayLiteral& AddTime(const std::optional<absl::Time>& t);  // nullopt: NULL
  ArrayLiteral& AddNull();
  // Raw bytes as a bytea element in hex form ("\\x0aff..."), for a
  // `$n::bytea[]` parameter: PostgreSQL's bytea input decodes it, with no
  // per-row decode() call.
  ArrayLiteral& AddBytes(absl::string_view bytes);

  bool empty() const { return count_ == 0; }
  // "{...}".
  std::string Build() const { return body_ + "}"; }

 private:
  void Separate();

  std::string body_ = "{";
  size_t count_ = 0;
};

}  // namespace shortener::pg

#endif  // SHORTENER_LIB_PG_ARRAYS_H_
