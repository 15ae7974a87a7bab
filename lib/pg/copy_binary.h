// Rows in the binary format of COPY ... FROM STDIN, built into one buffer that
// PgLinkStore and PgClickStore hand to libpq in a single call per table.
//
// Why binary: PostgreSQL reads each field with the type's receive function
// (a byte swap for an integer or a timestamp, a length and a copy for text)
// instead of splitting lines, unescaping and running the text input
// functions; timestamptz_in alone parses a date string. A 300 000-row COPY
// of the links table took 1.4 µs per row on the server in binary against
// 2.0 µs in text (docs/benchmarks.md). On our side a field is a length and
// its bytes: nothing to escape, no hex for bytea.
//
// Format (PostgreSQL docs, "COPY", binary format): an 11-byte signature, a
// flags word and a header-extension length; per row a 16-bit field count,
// then per field a 32-bit length (-1 for NULL) and the bytes of the type's
// binary form; a 16-bit -1 after the last row. Integers are big-endian. The
// caller writes each field in the binary form of its column's type: a
// mismatch (e.g. Int64 into a smallint column) fails the COPY with
// "incorrect binary data format".
//
// Thread-compatible.
#ifndef SHORTENER_LIB_PG_COPY_BINARY_H_
#define SHORTENER_LIB_PG_COPY_BINARY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <pqxx/dbtransaction>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace shortener::pg {

class CopyBinary {
 public:
  CopyBinary();

  // text (also varchar): the bytes as they are. Callers validate first
  // (ValidateNewLink): PostgreSQL rejects invalid UTF-8 and NUL bytes.
  CopyBinary& Text(absl::string_view text);
  CopyBinary& Text(const std::string& text) { return Text(absl::string_view(text)); }
  CopyBinary& Text(const std::optional<std::string>& text);  // nullopt: NULL
  CopyBinary& Int64(int64_t number);                         // bigint
  CopyBinary& Int64(const std::optional<int64_t>& number);   // nullopt: NULL
  CopyBinary& Int16(int16_t number);                         // smallint
  CopyBinary& Int32(int32_t number);                         // integer
  CopyBinary& Bool(bool value);                              // boolean
  CopyBinary& Char(char value);                              // "char" (one byte)
  // inet from the canonical text of an IPv4 or IPv6 address ("192.0.2.7",
  // "2001:db8::"), as a host (/32, /128); empty: NULL. Anything else throws
  // std::invalid_argument (callers pass CanonicalIp or AnonymizeIp output).
  CopyBinary& Inet(absl::string_view address);
  // timestamptz, rounded down to a whole microsecond (StoreTime). A time
  // PostgreSQL cannot hold (absl's infinities among them) fails the COPY as
  // out of range (SQLSTATE 22008).
  CopyBinary& Time(absl::Time t);
  CopyBinary& Time(const std::optional<absl::Time>& t);  // nullopt: NULL
  CopyBinary& Bytes(absl::string_view bytes);            // bytea
  // bigint[]: one dimension, lower bound 1, no NULL elements (an empty span
  // is an empty array, not NULL).
  CopyBinary& Int64Array(absl::Span<const int64_t> numbers);
  CopyBinary& Int16Array(absl::Span<const int16_t> numbers);  // smallint[], likewise
  // text[], likewise; each element as Text.
  CopyBinary& TextArray(absl::Span<const std::string> texts);
  CopyBinary& TextArray(absl::Span<const absl::string_view> texts);
  CopyBinary& Null();
  // Ends the current row.
  void EndRow();

  bool empty() const { return rows_ == 0; }
  size_t rows() const { return rows_; }
  // Sends every ended row as one `COPY table (columns) FROM STDIN (FORMAT
  // binary)` in `tx` (the columns in the order of each row's fields) and
  // leaves this empty. Throws pqxx exceptions: pqxx::sql_error carrying the
  // server's SQLSTATE (e.g. 23505 for a unique violation), or
  // pqxx::broken_connection.
  void CopyTo(pqxx::dbtransaction& tx, const std::string& table,
              absl::Span<const char* const> columns);

  // Sends the ended rows of every one of `parts` (built elsewhere, say on
  // their callers' threads), in order, as one COPY in `tx`, without
  // copying them into one buffer first; leaves the parts as they are.
  // Throws as CopyTo, and std::logic_error for a part with a row not ended.
  // `meanwhile`, when set, runs once every row is sent and before the
  // COPY's result is read: work of the caller's that overlaps PostgreSQL's
  // (it must not use the connection); what it throws is thrown, after the
  // COPY's result is read.
  static void CopyAllTo(pqxx::dbtransaction& tx, const std::string& table,
                        absl::Span<const char* const> columns,
                        absl::Span<const CopyBinary* const> parts,
                        const std::function<void()>& meanwhile = nullptr);

 private:
  void StartField(int32_t length);
  // An array field's header: one dimension of `n` elements of type
  // `element_oid` (none: zero dimensions), `payload` bytes of elements.
  void StartArray(int32_t element_oid, int32_t n, size_t payload);
  void Reset();

  std::string data_;
  size_t row_start_ = 0;  // offset of the current row's field count
  int fields_ = 0;        // fields of the current row so far
  size_t rows_ = 0;
};

}  // namespace shortener::pg

#endif  // SHORTENER_LIB_PG_COPY_BINARY_H_
