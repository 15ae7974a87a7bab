#include "lib/store/pg/copy_binary.h"

#include <endian.h>
#include <libpq-fe.h>

#include <cstring>
#include <limits>
#include <pqxx/except>
#include <pqxx/largeobject>
#include <stdexcept>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace shortener::store {
namespace {

// Signature, flags (no OIDs), header-extension length.
constexpr char kHeader[] = "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0";
constexpr size_t kHeaderSize = sizeof(kHeader) - 1;  // 19
static_assert(kHeaderSize == 19);

// PostgreSQL's timestamps count microseconds from 2000-01-01 00:00:00 UTC.
constexpr int64_t kPgEpochUnixMicros = 946684800LL * 1000000;

void PutBigEndian16(std::string& out, int16_t v) {
  uint16_t be = htobe16(static_cast<uint16_t>(v));
  out.append(reinterpret_cast<const char*>(&be), sizeof(be));
}
void PutBigEndian32(std::string& out, int32_t v) {
  uint32_t be = htobe32(static_cast<uint32_t>(v));
  out.append(reinterpret_cast<const char*>(&be), sizeof(be));
}
void PutBigEndian64(std::string& out, int64_t v) {
  uint64_t be = htobe64(static_cast<uint64_t>(v));
  out.append(reinterpret_cast<const char*>(&be), sizeof(be));
}

// libpqxx 6.4 hands a transaction's libpq connection only to largeobject and
// classes derived from it (a protected static member), and has no binary
// COPY of its own: tablewriter and stream_to write text.
class LibpqConnection : private pqxx::largeobject {
 public:
  static PGconn* Of(const pqxx::dbtransaction& tx) { return raw_connection(tx); }
};

// Reads what is left of the current command, so that the connection is idle
// (in its transaction) for the next one.
void DrainResults(PGconn* conn) {
  while (PGresult* rest = PQgetResult(conn)) PQclear(rest);
}

// Throws what libpqxx would for the failed `result` (or, when null, for the
// connection's last error), after draining the command's other results.
[[noreturn]] void ThrowError(PGconn* conn, PGresult* result, const std::string& sql) {
  std::string message = result != nullptr ? PQresultErrorMessage(result) : PQerrorMessage(conn);
  const char* field = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string sqlstate = field != nullptr ? field : "";
  PQclear(result);
  if (message.empty()) message = "COPY failed without a message from libpq";
  if (PQstatus(conn) == CONNECTION_BAD) throw pqxx::broken_connection(message);
  DrainResults(conn);
  if (sqlstate.empty()) throw pqxx::sql_error(message, sql);
  if (sqlstate == "23505") throw pqxx::unique_violation(message, sql, sqlstate.c_str());
  throw pqxx::sql_error(message, sql, sqlstate.c_str());
}

}  // namespace

CopyBinary::CopyBinary() { Reset(); }

void CopyBinary::Reset() {
  data_.assign(kHeader, kHeaderSize);
  row_start_ = std::string::npos;
  fields_ = 0;
  rows_ = 0;
}

void CopyBinary::StartField(int32_t length) {
  if (row_start_ == std::string::npos) {
    row_start_ = data_.size();
    PutBigEndian16(data_, 0);  // the field count, set by EndRow
  }
  ++fields_;
  PutBigEndian32(data_, length);
}

CopyBinary& CopyBinary::Text(absl::string_view text) { return Bytes(text); }

CopyBinary& CopyBinary::Text(const std::optional<std::string>& text) {
  return text.has_value() ? Text(absl::string_view(*text)) : Null();
}

CopyBinary& CopyBinary::Int64(int64_t number) {
  StartField(sizeof(int64_t));
  PutBigEndian64(data_, number);
  return *this;
}

CopyBinary& CopyBinary::Int64(const std::optional<int64_t>& number) {
  return number.has_value() ? Int64(*number) : Null();
}

CopyBinary& CopyBinary::Int64Array(absl::Span<const int64_t> numbers) {
  // PostgreSQL's array_send: dimensions, has-nulls flag, element type (int8,
  // OID 20), then per dimension its size and lower bound, then each element
  // as a length and its value.
  constexpr int32_t kInt8Oid = 20;
  const int32_t n = static_cast<int32_t>(numbers.size());
  StartField(12 + (n > 0 ? 8 : 0) + n * (4 + 8));
  PutBigEndian32(data_, n > 0 ? 1 : 0);
  PutBigEndian32(data_, 0);
  PutBigEndian32(data_, kInt8Oid);
  if (n > 0) {
    PutBigEndian32(data_, n);
    PutBigEndian32(data_, 1);
  }
  for (int64_t number : numbers) {
    PutBigEndian32(data_, sizeof(int64_t));
    PutBigEndian64(data_, number);
  }
  return *this;
}

CopyBinary& CopyBinary::Int16(int16_t number) {
  StartField(sizeof(int16_t));
  PutBigEndian16(data_, number);
  return *this;
}

CopyBinary& CopyBinary::Time(absl::Time t) {
  // absl::ToUnixMicros rounds down, as StoreTime does, and saturates for
  // times beyond int64 microseconds (absl's infinities among them). Those
  // become values one step inside PostgreSQL's infinities (INT64_MIN and
  // INT64_MAX) and beyond the range it accepts (4714 BC to AD 294276), so
  // that it rejects them as out of range: the saturated INT64_MAX would
  // otherwise read as a date in AD 294247.
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t unix_micros = absl::ToUnixMicros(t);
  int64_t pg_micros;
  if (unix_micros == kMax) {
    pg_micros = kMax - 1;
  } else if (unix_micros < kMin + 1 + kPgEpochUnixMicros) {
    pg_micros = kMin + 1;
  } else {
    pg_micros = unix_micros - kPgEpochUnixMicros;
  }
  StartField(sizeof(int64_t));
  PutBigEndian64(data_, pg_micros);
  return *this;
}

CopyBinary& CopyBinary::Time(const std::optional<absl::Time>& t) {
  return t.has_value() ? Time(*t) : Null();
}

CopyBinary& CopyBinary::Bytes(absl::string_view bytes) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    throw std::length_error("COPY field longer than 2 GB");
  }
  StartField(static_cast<int32_t>(bytes.size()));
  data_.append(bytes.data(), bytes.size());
  return *this;
}

CopyBinary& CopyBinary::Null() {
  StartField(-1);
  return *this;
}

void CopyBinary::EndRow() {
  if (row_start_ == std::string::npos) {
    // A row without fields: its count is all there is.
    row_start_ = data_.size();
    PutBigEndian16(data_, 0);
  }
  const uint16_t count = htobe16(static_cast<uint16_t>(fields_));
  std::memcpy(&data_[row_start_], &count, sizeof(count));
  row_start_ = std::string::npos;
  fields_ = 0;
  ++rows_;
}

void CopyBinary::CopyTo(pqxx::dbtransaction& tx, const std::string& table,
                        absl::Span<const char* const> columns) {
  if (rows_ == 0) {
    Reset();
    return;
  }
  std::string data = std::move(data_);
  Reset();
  PutBigEndian16(data, -1);  // the trailer
  if (data.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    throw std::length_error("COPY data longer than 2 GB");
  }
  const std::string sql = absl::StrCat("COPY ", table, " (", absl::StrJoin(columns, ", "),
                                       ") FROM STDIN (FORMAT binary)");
  PGconn* conn = LibpqConnection::Of(tx);
  PGresult* started = PQexec(conn, sql.c_str());
  if (PQresultStatus(started) != PGRES_COPY_IN) ThrowError(conn, started, sql);
  PQclear(started);
  // Blocking mode (libpqxx's): both calls return only when libpq has taken
  // all of the data, or failed.
  if (PQputCopyData(conn, data.data(), static_cast<int>(data.size())) != 1 ||
      PQputCopyEnd(conn, nullptr) != 1) {
    ThrowError(conn, nullptr, sql);
  }
  PGresult* ended = PQgetResult(conn);
  if (PQresultStatus(ended) != PGRES_COMMAND_OK) ThrowError(conn, ended, sql);
  PQclear(ended);
  DrainResults(conn);
}

}  // namespace shortener::store
