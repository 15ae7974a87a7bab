// The rows of one statement with its results in PostgreSQL's binary format
// (libpq's resultFormat 1), for reads of many array fields: each field
// arrives as its type's send form (an integer as 8 big-endian bytes, an
// array as a header and length-prefixed elements), so PostgreSQL runs no
// output function (array_out) and the reader parses no text. libpqxx 6.4
// has no binary results; CopyBinary (copy_binary.h) is the writing side.
//
// Format (PostgreSQL's array_send): dimensions (int32), has-nulls flag
// (int32), element type OID (int32), per dimension its size and lower bound
// (int32 each), then each element as a length (int32, -1 for NULL) and its
// bytes. The readers check the element type and every length, and throw
// pqxx::data_exception for anything else than what they read.
//
// Thread-compatible; a BinaryResult owns its rows and outlives the
// transaction it was read in.
#ifndef SHORTENER_LIB_PG_BINARY_RESULT_H_
#define SHORTENER_LIB_PG_BINARY_RESULT_H_

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <pqxx/dbtransaction>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace shortener::pg {

class BinaryResult {
 public:
  // Runs `sql` in `tx` (parameters as text, $1...; results in binary).
  // Throws pqxx exceptions: pqxx::sql_error carrying the server's SQLSTATE,
  // or pqxx::broken_connection.
  static BinaryResult Exec(pqxx::dbtransaction& tx, const std::string& sql,
                           absl::Span<const std::string> params);

  int rows() const;
  int columns() const;
  bool IsNull(int row, int column) const;
  // The field as the type's binary form. Each throws pqxx::data_exception
  // for a NULL or a field of another length or element type.
  char Char(int row, int column) const;                           // "char"
  int64_t Int64(int row, int column) const;                       // bigint
  absl::string_view Text(int row, int column) const;              // text (the bytes)
  std::vector<int64_t> Int64Array(int row, int column) const;     // bigint[], no NULLs
  std::vector<int16_t> Int16Array(int row, int column) const;     // smallint[], no NULLs
  std::vector<std::string> TextArray(int row, int column) const;  // text[], NULLs as ""

 private:
  struct Clear {
    void operator()(PGresult* r) const { PQclear(r); }
  };
  explicit BinaryResult(PGresult* result) : result_(result) {}
  absl::string_view Field(int row, int column) const;  // throws for NULL

  std::unique_ptr<PGresult, Clear> result_;
};

}  // namespace shortener::pg

#endif  // SHORTENER_LIB_PG_BINARY_RESULT_H_
