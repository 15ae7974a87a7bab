#include "lib/pg/copy_binary.h"

#include <arpa/inet.h>
#include <endian.h>
#include <libpq-fe.h>

#include <cstring>
#include <exception>
#include <limits>
#include <pqxx/dbtransaction>
#include <stdexcept>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/pg/raw_libpq.h"

namespace shortener::pg {
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

void CopyBinary::StartArray(int32_t element_oid, int32_t n, size_t payload) {
  // PostgreSQL's array_send: dimensions, has-nulls flag, element type, then
  // per dimension its size and lower bound, then each element as a length
  // and its value.
  const size_t length = 12 + (n > 0 ? 8 : 0) + payload;
  if (length > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    throw std::length_error("COPY field longer than 2 GB");
  }
  StartField(static_cast<int32_t>(length));
  PutBigEndian32(data_, n > 0 ? 1 : 0);
  PutBigEndian32(data_, 0);
  PutBigEndian32(data_, element_oid);
  if (n > 0) {
    PutBigEndian32(data_, n);
    PutBigEndian32(data_, 1);
  }
}

CopyBinary& CopyBinary::Int64Array(absl::Span<const int64_t> numbers) {
  constexpr int32_t kInt8Oid = 20;
  const int32_t n = static_cast<int32_t>(numbers.size());
  StartArray(kInt8Oid, n, numbers.size() * (4 + 8));
  for (int64_t number : numbers) {
    PutBigEndian32(data_, sizeof(int64_t));
    PutBigEndian64(data_, number);
  }
  return *this;
}

CopyBinary& CopyBinary::Int16Array(absl::Span<const int16_t> numbers) {
  constexpr int32_t kInt2Oid = 21;
  const int32_t n = static_cast<int32_t>(numbers.size());
  StartArray(kInt2Oid, n, numbers.size() * (4 + 2));
  for (int16_t number : numbers) {
    PutBigEndian32(data_, sizeof(int16_t));
    PutBigEndian16(data_, number);
  }
  return *this;
}

CopyBinary& CopyBinary::TextArray(absl::Span<const std::string> texts) {
  std::vector<absl::string_view> views(texts.begin(), texts.end());
  return TextArray(absl::Span<const absl::string_view>(views));
}

CopyBinary& CopyBinary::TextArray(absl::Span<const absl::string_view> texts) {
  constexpr int32_t kTextOid = 25;
  size_t payload = 0;
  for (absl::string_view t : texts) payload += 4 + t.size();
  StartArray(kTextOid, static_cast<int32_t>(texts.size()), payload);
  for (absl::string_view t : texts) {
    PutBigEndian32(data_, static_cast<int32_t>(t.size()));
    data_.append(t.data(), t.size());
  }
  return *this;
}

CopyBinary& CopyBinary::Int16(int16_t number) {
  StartField(sizeof(int16_t));
  PutBigEndian16(data_, number);
  return *this;
}

CopyBinary& CopyBinary::Int32(int32_t number) {
  StartField(sizeof(int32_t));
  PutBigEndian32(data_, number);
  return *this;
}

CopyBinary& CopyBinary::Bool(bool value) {
  StartField(1);
  data_.push_back(value ? '\1' : '\0');
  return *this;
}

CopyBinary& CopyBinary::Char(char value) {
  StartField(1);
  data_.push_back(value);
  return *this;
}

CopyBinary& CopyBinary::Inet(absl::string_view address) {
  if (address.empty()) return Null();
  // PostgreSQL's inet_send: family (its own numbers: 2 for IPv4, 3 for
  // IPv6), netmask bits, is-cidr flag, address length, address bytes.
  const std::string text(address);
  unsigned char bytes[16];
  if (inet_pton(AF_INET, text.c_str(), bytes) == 1) {
    StartField(4 + 4);
    data_.append({'\2', static_cast<char>(32), '\0', '\4'});
    data_.append(reinterpret_cast<const char*>(bytes), 4);
  } else if (inet_pton(AF_INET6, text.c_str(), bytes) == 1) {
    StartField(4 + 16);
    data_.append({'\3', static_cast<char>(128), '\0', static_cast<char>(16)});
    data_.append(reinterpret_cast<const char*>(bytes), 16);
  } else {
    throw std::invalid_argument(absl::StrCat("COPY inet: not an IP address: ", text));
  }
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
  const CopyBinary* parts[] = {this};
  try {
    CopyAllTo(tx, table, columns, parts);
  } catch (...) {
    Reset();
    throw;
  }
  Reset();
}

void CopyBinary::CopyAllTo(pqxx::dbtransaction& tx, const std::string& table,
                           absl::Span<const char* const> columns,
                           absl::Span<const CopyBinary* const> parts,
                           const std::function<void()>& meanwhile) {
  size_t rows = 0;
  size_t bytes = 0;
  for (const CopyBinary* part : parts) {
    if (part->row_start_ != std::string::npos) {
      throw std::logic_error("CopyBinary: a row is not ended");
    }
    rows += part->rows_;
    bytes += part->data_.size() - kHeaderSize;
  }
  if (rows == 0) {
    if (meanwhile) meanwhile();
    return;
  }
  if (bytes > static_cast<size_t>(std::numeric_limits<int>::max())) {
    throw std::length_error("COPY data longer than 2 GB");
  }
  const std::string sql = absl::StrCat("COPY ", table, " (", absl::StrJoin(columns, ", "),
                                       ") FROM STDIN (FORMAT binary)");
  PGconn* conn = internal::LibpqConnectionOf(tx);
  PGresult* started = PQexec(conn, sql.c_str());
  if (PQresultStatus(started) != PGRES_COPY_IN) internal::ThrowLibpqError(conn, started, sql);
  PQclear(started);
  // The header once, then each part's rows; the trailer. Blocking mode
  // (libpqxx's): each call returns only when libpq has taken the data, or
  // failed.
  std::string trailer;
  PutBigEndian16(trailer, -1);
  bool sent = PQputCopyData(conn, kHeader, static_cast<int>(kHeaderSize)) == 1;
  for (const CopyBinary* part : parts) {
    if (!sent || part->rows_ == 0) continue;
    sent = PQputCopyData(conn, part->data_.data() + kHeaderSize,
                         static_cast<int>(part->data_.size() - kHeaderSize)) == 1;
  }
  if (!sent || PQputCopyData(conn, trailer.data(), static_cast<int>(trailer.size())) != 1 ||
      PQputCopyEnd(conn, nullptr) != 1) {
    internal::ThrowLibpqError(conn, nullptr, sql);
  }
  std::exception_ptr thrown;
  if (meanwhile) {
    try {
      meanwhile();
    } catch (...) {
      thrown = std::current_exception();
    }
  }
  PGresult* ended = PQgetResult(conn);
  if (PQresultStatus(ended) != PGRES_COMMAND_OK) internal::ThrowLibpqError(conn, ended, sql);
  PQclear(ended);
  internal::DrainResults(conn);
  if (thrown) std::rethrow_exception(thrown);
}

}  // namespace shortener::pg
