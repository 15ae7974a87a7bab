#include "lib/pg/binary_result.h"

#include <endian.h>

#include <algorithm>
#include <cstring>
#include <pqxx/except>

#include "absl/strings/str_cat.h"
#include "lib/pg/raw_libpq.h"

namespace shortener::pg {
namespace {

constexpr uint32_t kInt2Oid = 21;
constexpr uint32_t kInt8Oid = 20;
constexpr uint32_t kTextOid = 25;

// Reads big-endian integers off the front of a field, checking its length.
class Reader {
 public:
  explicit Reader(absl::string_view bytes) : bytes_(bytes) {}
  int32_t Int32() { return static_cast<int32_t>(be32toh(Take<uint32_t>())); }
  int16_t Int16() { return static_cast<int16_t>(be16toh(Take<uint16_t>())); }
  int64_t Int64() { return static_cast<int64_t>(be64toh(Take<uint64_t>())); }
  absl::string_view Bytes(size_t n) {
    if (n > bytes_.size()) Fail();
    absl::string_view out = bytes_.substr(0, n);
    bytes_.remove_prefix(n);
    return out;
  }
  bool done() const { return bytes_.empty(); }
  size_t left() const { return bytes_.size(); }
  [[noreturn]] static void Fail() {
    throw pqxx::data_exception("binary result: a field is shorter than its format says");
  }

 private:
  template <typename T>
  T Take() {
    T v;
    if (bytes_.size() < sizeof(T)) Fail();
    std::memcpy(&v, bytes_.data(), sizeof(T));
    bytes_.remove_prefix(sizeof(T));
    return v;
  }
  absl::string_view bytes_;
};

// The header of a one-dimensional array of `oid` elements: their count.
size_t ArrayLength(Reader& r, uint32_t oid) {
  const int32_t dims = r.Int32();
  r.Int32();  // has-nulls flag: each element's length says
  const uint32_t element = static_cast<uint32_t>(r.Int32());
  if (element != oid) {
    throw pqxx::data_exception(
        absl::StrCat("binary result: array of type ", element, ", expected ", oid));
  }
  if (dims == 0) return 0;
  if (dims != 1) throw pqxx::data_exception("binary result: array of more than one dimension");
  const int32_t n = r.Int32();
  r.Int32();  // lower bound
  if (n < 0) Reader::Fail();
  return static_cast<size_t>(n);
}

template <typename T, typename ReadOne>
std::vector<T> NumberArray(absl::string_view field, uint32_t oid, ReadOne read_one) {
  Reader r(field);
  const size_t n = ArrayLength(r, oid);
  std::vector<T> out;
  out.reserve(std::min(n, r.left() / (4 + sizeof(T))));  // a count the bytes cannot hold fails
  for (size_t i = 0; i < n; ++i) {
    if (r.Int32() != static_cast<int32_t>(sizeof(T))) {
      throw pqxx::data_exception("binary result: a NULL or mis-sized number in an array");
    }
    out.push_back(read_one(r));
  }
  if (!r.done()) Reader::Fail();
  return out;
}

}  // namespace

BinaryResult BinaryResult::Exec(pqxx::dbtransaction& tx, const std::string& sql,
                                absl::Span<const std::string> params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const std::string& p : params) values.push_back(p.c_str());
  PGconn* conn = internal::LibpqConnectionOf(tx);
  PGresult* result = PQexecParams(conn, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                  values.data(), nullptr, nullptr, /*resultFormat=*/1);
  if (PQresultStatus(result) != PGRES_TUPLES_OK) internal::ThrowLibpqError(conn, result, sql);
  internal::DrainResults(conn);
  return BinaryResult(result);
}

int BinaryResult::rows() const { return PQntuples(result_.get()); }
int BinaryResult::columns() const { return PQnfields(result_.get()); }

bool BinaryResult::IsNull(int row, int column) const {
  return PQgetisnull(result_.get(), row, column) != 0;
}

absl::string_view BinaryResult::Field(int row, int column) const {
  if (row < 0 || row >= rows() || column < 0 || column >= columns()) {
    throw pqxx::range_error(absl::StrCat("binary result: no field ", row, ", ", column));
  }
  if (IsNull(row, column)) throw pqxx::data_exception("binary result: unexpected NULL");
  return absl::string_view(PQgetvalue(result_.get(), row, column),
                           static_cast<size_t>(PQgetlength(result_.get(), row, column)));
}

char BinaryResult::Char(int row, int column) const {
  absl::string_view f = Field(row, column);
  if (f.size() != 1) Reader::Fail();
  return f[0];
}

int64_t BinaryResult::Int64(int row, int column) const {
  Reader r(Field(row, column));
  const int64_t v = r.Int64();
  if (!r.done()) Reader::Fail();
  return v;
}

absl::string_view BinaryResult::Text(int row, int column) const { return Field(row, column); }

std::vector<int64_t> BinaryResult::Int64Array(int row, int column) const {
  return NumberArray<int64_t>(Field(row, column), kInt8Oid, [](Reader& r) { return r.Int64(); });
}

std::vector<int16_t> BinaryResult::Int16Array(int row, int column) const {
  return NumberArray<int16_t>(Field(row, column), kInt2Oid, [](Reader& r) { return r.Int16(); });
}

std::vector<std::string> BinaryResult::TextArray(int row, int column) const {
  Reader r(Field(row, column));
  const size_t n = ArrayLength(r, kTextOid);
  std::vector<std::string> out;
  out.reserve(std::min(n, r.left() / 4));
  for (size_t i = 0; i < n; ++i) {
    const int32_t length = r.Int32();
    if (length < 0) {
      out.emplace_back();  // NULL
      continue;
    }
    out.emplace_back(r.Bytes(static_cast<size_t>(length)));
  }
  if (!r.done()) Reader::Fail();
  return out;
}

}  // namespace shortener::pg
