// Rows in the text format of COPY ... FROM STDIN, built into one buffer that
// PgLinkStore hands to libpq in a single call per table.
//
// Why not pqxx::stream_to's row operator: it formats every field through a
// generic escaper and a separated_list string, and sends each row on its own
// (~12 % of the service's CPU in a 1000-link BatchShorten,
// docs/benchmarks.md). Here a field is appended in place and only the four
// bytes COPY's text format gives a meaning to are escaped.
//
// Format (PostgreSQL docs, "COPY", text format): fields separated by a tab,
// rows ended by a newline, NULL written as \N; in a value, backslash, tab,
// newline and carriage return are written \\, \t, \n and \r. Text must hold
// no NUL byte (callers validate first: ValidateNewLink).
//
// Thread-compatible.
#ifndef SHORTENER_LIB_STORE_PG_COPY_TEXT_H_
#define SHORTENER_LIB_STORE_PG_COPY_TEXT_H_

#include <cstdint>
#include <optional>
#include <pqxx/transaction_base>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "absl/time/time.h"

namespace shortener::store {

class CopyText {
 public:
  CopyText& Text(absl::string_view text);
  CopyText& Text(const std::string& text) { return Text(absl::string_view(text)); }
  CopyText& Text(const std::optional<std::string>& text);  // nullopt: NULL
  CopyText& Number(int64_t number);
  CopyText& Number(const std::optional<int64_t>& number);  // nullopt: NULL
  CopyText& Time(absl::Time t);                            // as PgTimestamp
  CopyText& Time(const std::optional<absl::Time>& t);      // nullopt: NULL
  CopyText& Bytes(absl::string_view bytes);                // a bytea, hex form
  CopyText& Null();
  // Ends the current row.
  void EndRow();

  bool empty() const { return rows_ == 0; }
  size_t rows() const { return rows_; }
  // Sends every ended row as one `COPY table (columns) FROM STDIN` in `tx`
  // (the columns in the order of each row's fields) and leaves this empty.
  // Throws what pqxx throws (e.g. pqxx::unique_violation).
  void CopyTo(pqxx::transaction_base& tx, const std::string& table,
              absl::Span<const char* const> columns);

 private:
  void Separate();

  std::string data_;
  bool row_open_ = false;  // a field of the current row has been written
  size_t rows_ = 0;
};

}  // namespace shortener::store

#endif  // SHORTENER_LIB_STORE_PG_COPY_TEXT_H_
