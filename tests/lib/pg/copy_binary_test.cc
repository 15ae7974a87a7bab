// lib/pg/copy_binary.h on a private PostgreSQL: every field type reaches
// COPY byte for byte, NULLs stay NULL, and a refused COPY fails with
// PostgreSQL's SQLSTATE and leaves the connection usable.
#include "lib/pg/copy_binary.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <optional>
#include <pqxx/pqxx>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "lib/common/store_time.h"
#include "lib/pg/pg_error.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/status_matchers.h"

namespace shortener::pg {
namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;

TEST_CASE("CopyBinary rows reach PostgreSQL's COPY byte for byte and NULLs stay NULL",
          "[lib/pg][pg]") {
  // Bytes COPY's text format would give a meaning to, the literal text \N,
  // UTF-8; integers at their limits; times around both epochs, truncated
  // nanoseconds, and years 1 and 9999.
  const std::vector<std::string> texts = {"",
                                          "plain",
                                          "tab\there",
                                          "new\nline",
                                          "carriage\rreturn",
                                          "back\\slash",
                                          "\\N",
                                          "\\",
                                          "end\\",
                                          "\t\n\r\\",
                                          "caf\xc3\xa9 \xe2\x82\xac",
                                          "NULL",
                                          std::string(5000, 'x')};
  const std::string bytes("\x00\x01\\\t\xff", 5);
  const std::vector<int64_t> numbers = {0,
                                        1,
                                        -1,
                                        std::numeric_limits<int64_t>::max(),
                                        std::numeric_limits<int64_t>::min(),
                                        1732500000123456};
  const std::vector<int16_t> smalls = {0, 301, -1, std::numeric_limits<int16_t>::max(),
                                       std::numeric_limits<int16_t>::min()};
  const std::vector<absl::Time> times = {
      absl::UnixEpoch(),
      absl::FromUnixMicros(-1),
      absl::FromUnixSeconds(946684800),  // PostgreSQL's epoch
      absl::FromUnixSeconds(946684800) - absl::Microseconds(1),
      absl::FromUnixNanos(1732500000123456789),  // truncated to the microsecond
      absl::FromUnixNanos(-1),                   // down to -1 µs, as StoreTime
      absl::FromCivil(absl::CivilSecond(1, 1, 1, 0, 0, 0), absl::UTCTimeZone()),
      absl::FromCivil(absl::CivilSecond(9999, 12, 31, 23, 59, 59), absl::UTCTimeZone()) +
          absl::Microseconds(999999),
  };
  CopyBinary rows;
  CHECK(rows.empty());
  for (size_t i = 0; i < texts.size(); ++i) {
    rows.Int64(static_cast<int64_t>(i)).Text(texts[i]).Bytes(bytes);
    rows.Int64(numbers[i % numbers.size()]).Int16(smalls[i % smalls.size()]);
    rows.Time(times[i % times.size()]);
    rows.Int64(std::optional<int64_t>()).Text(std::optional<std::string>());
    rows.Time(std::optional<absl::Time>()).Null();
    rows.EndRow();
  }
  CHECK(rows.rows() == texts.size());
  pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
  pqxx::work tx(conn);
  tx.exec0(
      "CREATE TEMP TABLE copy_binary_check (i bigint, t text, b bytea, n bigint, s smallint,"
      " at timestamptz, nn bigint, nt text, nat timestamptz, nb bytea)");
  const char* const columns[] = {"i", "t", "b", "n", "s", "at", "nn", "nt", "nat", "nb"};
  rows.CopyTo(tx, "copy_binary_check", columns);
  CHECK(rows.empty());
  pqxx::result got = tx.exec(
      "SELECT i, t, encode(b, 'hex'), n, s, (extract(epoch FROM at) * 1000000)::bigint,"
      " nn IS NULL AND nt IS NULL AND nat IS NULL AND nb IS NULL"
      " FROM copy_binary_check ORDER BY i");
  REQUIRE(got.size() == texts.size());
  for (const pqxx::row& row : got) {
    const size_t i = row[0].as<size_t>();
    INFO("row " << i);
    CHECK(row[1].as<std::string>() == texts[i]);
    CHECK(row[2].as<std::string>() == "00015c09ff");
    CHECK(row[3].as<int64_t>() == numbers[i % numbers.size()]);
    CHECK(row[4].as<int>() == smalls[i % smalls.size()]);
    CHECK(row[5].as<int64_t>() == absl::ToUnixMicros(StoreTime(times[i % times.size()])));
    CHECK(row[6].as<bool>());
  }
  // The buffer starts over: a second COPY sends only its own rows.
  rows.Int64(int64_t{100}).Text(absl::string_view("again")).Bytes("").Int64(int64_t{0}).Int16(0);
  rows.Time(absl::UnixEpoch()).Null().Null().Null().Null();
  rows.EndRow();
  rows.CopyTo(tx, "copy_binary_check", columns);
  CHECK(tx.exec1("SELECT count(*) FROM copy_binary_check")[0].as<size_t>() == texts.size() + 1);
  CHECK(tx.exec1("SELECT t FROM copy_binary_check WHERE i = 100")[0].as<std::string>() == "again");
}

// Sends `rows` and expects PostgreSQL to refuse them with `sqlstate` and a
// message containing `message`.
void ExpectCopyRefused(CopyBinary& rows, pqxx::work& tx, const std::string& table,
                       absl::Span<const char* const> columns, const std::string& sqlstate,
                       const std::string& message) {
  try {
    rows.CopyTo(tx, table, columns);
    FAIL("COPY into " << table << " succeeded; expected SQLSTATE " << sqlstate);
  } catch (const pqxx::sql_error& e) {
    CHECK(e.sqlstate() == sqlstate);
    CHECK_THAT(e.what(), Catch::Contains(message));
  }
}

TEST_CASE("CopyBinary bigint arrays reach PostgreSQL's COPY element for element", "[lib/pg][pg]") {
  const std::vector<std::vector<int64_t>> arrays = {
      {}, {1}, {std::numeric_limits<int64_t>::min(), 0, std::numeric_limits<int64_t>::max(), 42}};
  CopyBinary rows;
  for (size_t i = 0; i < arrays.size(); ++i) {
    rows.Int64(static_cast<int64_t>(i)).Int64Array(arrays[i]);
    rows.EndRow();
  }
  pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
  pqxx::work tx(conn);
  tx.exec0("CREATE TEMP TABLE copy_array_check (i bigint, a bigint[])");
  const char* const columns[] = {"i", "a"};
  rows.CopyTo(tx, "copy_array_check", columns);
  pqxx::result got = tx.exec(
      "SELECT i, a IS NOT NULL, cardinality(a), coalesce(array_lower(a, 1), 1),"
      " array_to_string(a, ',') FROM copy_array_check ORDER BY i");
  REQUIRE(got.size() == arrays.size());
  for (const pqxx::row& row : got) {
    const size_t i = row[0].as<size_t>();
    INFO("row " << i);
    CHECK(row[1].as<bool>());
    CHECK(row[2].as<size_t>() == arrays[i].size());
    CHECK(row[3].as<int>() == 1);
    CHECK(row[4].as<std::string>() == absl::StrJoin(arrays[i], ","));
  }
}

TEST_CASE("CopyBinary integers, booleans, chars, inet and smallint and text arrays arrive intact",
          "[lib/pg][pg]") {
  struct Row {
    int32_t i32;
    bool flag;
    char c;
    std::string ip;  // CopyBinary::Inet's input; "" is NULL
    std::string ip_text;
    std::vector<int16_t> smalls;
    std::vector<std::string> texts;
  };
  const std::vector<Row> want = {
      {0, false, 'l', "", "", {}, {}},
      {std::numeric_limits<int32_t>::max(), true, 'c', "192.0.2.7", "192.0.2.7", {1, -1}, {""}},
      {std::numeric_limits<int32_t>::min(),
       false,
       '\x7f',
       "2001:db8:1::",
       "2001:db8:1::",
       {std::numeric_limits<int16_t>::min(), 0, std::numeric_limits<int16_t>::max()},
       {"a,b", "{x}", "\"quoted\"", "back\\slash", "NULL", "caf\xc3\xa9", std::string(3000, 'y')}},
      {7, true, 'x', "0.0.0.0", "0.0.0.0", {8}, {"one"}},
      {-7, false, 'y', "::", "::", {}, {"", ""}},
  };
  CopyBinary rows;
  for (size_t i = 0; i < want.size(); ++i) {
    const Row& w = want[i];
    rows.Int64(static_cast<int64_t>(i)).Int32(w.i32).Bool(w.flag).Char(w.c).Inet(w.ip);
    rows.Int16Array(w.smalls).TextArray(w.texts);
    rows.EndRow();
  }
  // Rows built elsewhere go in the same COPY after these, an empty part
  // between them changing nothing.
  CopyBinary more;
  more.Int64(100).Int32(1).Bool(true).Char('z').Inet("203.0.113.9");
  more.Int16Array(std::vector<int16_t>{3}).TextArray(std::vector<std::string>{"appended"});
  more.EndRow();
  const CopyBinary nothing;
  CHECK(rows.rows() == want.size());
  pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
  pqxx::work tx(conn);
  tx.exec0(
      "CREATE TEMP TABLE copy_kinds_check (i bigint, n integer, f boolean, c \"char\", ip inet,"
      " s smallint[], t text[])");
  const char* const columns[] = {"i", "n", "f", "c", "ip", "s", "t"};
  const CopyBinary* parts[] = {&rows, &nothing, &more};
  CopyBinary::CopyAllTo(tx, "copy_kinds_check", columns, parts);
  CHECK(rows.rows() == want.size());  // the parts are left as they are
  CHECK(tx.exec1("SELECT count(*) FROM copy_kinds_check")[0].as<size_t>() == want.size() + 1);
  for (size_t i = 0; i < want.size(); ++i) {
    const Row& w = want[i];
    INFO("row " << i);
    pqxx::row got = tx.exec1(
        "SELECT n, f, c::text, ip IS NULL, coalesce(host(ip), ''), coalesce(masklen(ip), 0),"
        " cardinality(s), array_to_string(s, ','), cardinality(t), coalesce(array_lower(t, 1), 1)"
        " FROM copy_kinds_check WHERE i = " +
        std::to_string(i));
    CHECK(got[0].as<int32_t>() == w.i32);
    CHECK(got[1].as<bool>() == w.flag);
    CHECK(got[2].as<std::string>() == std::string(1, w.c));
    CHECK(got[3].as<bool>() == w.ip.empty());
    CHECK(got[4].as<std::string>() == w.ip_text);
    if (!w.ip.empty()) CHECK(got[5].as<int>() == (w.ip.find(':') == std::string::npos ? 32 : 128));
    CHECK(got[6].as<size_t>() == w.smalls.size());
    std::string smalls;
    for (int16_t v : w.smalls) smalls += (smalls.empty() ? "" : ",") + std::to_string(v);
    CHECK(got[7].as<std::string>() == smalls);
    CHECK(got[8].as<size_t>() == w.texts.size());
    CHECK(got[9].as<int>() == 1);
    for (size_t k = 0; k < w.texts.size(); ++k) {
      CHECK(tx.exec1("SELECT t[" + std::to_string(k + 1) +
                     "] FROM copy_kinds_check WHERE i = " + std::to_string(i))[0]
                .as<std::string>() == w.texts[k]);
    }
  }
  CHECK(tx.exec1("SELECT t[1] FROM copy_kinds_check WHERE i = 100")[0].as<std::string>() ==
        "appended");
  // An address that is not one is refused before anything is sent.
  CopyBinary bad;
  CHECK_THROWS_AS(bad.Inet("not-an-ip"), std::invalid_argument);
  CHECK_THROWS_AS(bad.Inet("192.0.2.1/24"), std::invalid_argument);
}

TEST_CASE("CopyAllTo runs the caller's work while the COPY is in flight, and rethrows it after",
          "[lib/pg][pg]") {
  pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
  pqxx::work tx(conn);
  tx.exec0("CREATE TEMP TABLE copy_meanwhile (i bigint)");
  const char* const columns[] = {"i"};
  CopyBinary rows;
  for (int64_t i = 0; i < 1000; ++i) {
    rows.Int64(i);
    rows.EndRow();
  }
  const CopyBinary* parts[] = {&rows};
  int ran = 0;
  CopyBinary::CopyAllTo(tx, "copy_meanwhile", columns, parts, [&ran] { ++ran; });
  CHECK(ran == 1);
  CHECK(tx.exec1("SELECT count(*) FROM copy_meanwhile")[0].as<int>() == 1000);
  // What it throws comes out once the COPY is done: the rows are in and
  // the connection takes the next statement.
  CHECK_THROWS_WITH(CopyBinary::CopyAllTo(tx, "copy_meanwhile", columns, parts,
                                          [] { throw std::runtime_error("caller failed"); }),
                    "caller failed");
  CHECK(tx.exec1("SELECT count(*) FROM copy_meanwhile")[0].as<int>() == 2000);
  // With nothing to send, it still runs.
  const CopyBinary empty;
  const CopyBinary* none[] = {&empty};
  CopyBinary::CopyAllTo(tx, "copy_meanwhile", columns, none, [&ran] { ++ran; });
  CHECK(ran == 2);
}

TEST_CASE("CopyBinary fails with PostgreSQL's SQLSTATE and leaves the connection usable",
          "[lib/pg][pg]") {
  pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
  const char* const columns[] = {"k", "s"};
  {
    // A temporary table: each run of the test case (one per section) has
    // its own connection.
    pqxx::work setup(conn);
    setup.exec0("CREATE TEMP TABLE copy_binary_errors (k bigint PRIMARY KEY, s smallint)");
    setup.commit();
  }
  SECTION("a taken key is a unique violation") {
    pqxx::work tx(conn);
    CopyBinary rows;
    rows.Int64(int64_t{1}).Int16(1).EndRow();
    rows.Int64(int64_t{1}).Int16(2).EndRow();
    bool thrown = false;
    try {
      rows.CopyTo(tx, "copy_binary_errors", columns);
    } catch (const pqxx::unique_violation&) {
      thrown = true;
      CHECK_THAT(StatusFromCurrentException("copy"),
                 HasCodeAndMessage(absl::StatusCode::kAlreadyExists, "duplicate key"));
    }
    CHECK(thrown);
    CHECK(rows.empty());
  }
  SECTION("a field in the wrong binary form names the problem") {
    pqxx::work tx(conn);
    CopyBinary rows;
    rows.Int64(int64_t{1}).Int64(int64_t{2}).EndRow();  // 8 bytes for a smallint
    ExpectCopyRefused(rows, tx, "copy_binary_errors", columns, "22P03",
                      "incorrect binary data format");
  }
  SECTION("a time PostgreSQL cannot hold is out of range, never an infinity") {
    pqxx::work setup(conn);
    setup.exec0("CREATE TEMP TABLE copy_binary_times (at timestamptz)");
    setup.commit();
    const char* const time_column[] = {"at"};
    const absl::Time time = GENERATE(absl::InfinitePast(), absl::InfiniteFuture(),
                                     absl::FromUnixSeconds(-300000000000),   // 7537 BC
                                     absl::FromUnixSeconds(9300000000000));  // AD 296680
    pqxx::work tx(conn);
    CopyBinary rows;
    rows.Time(time).EndRow();
    ExpectCopyRefused(rows, tx, "copy_binary_times", time_column, "22008",
                      "timestamp out of range");
    return;  // the transaction failed: nothing more on it
  }
  SECTION("a row with too few fields names the problem") {
    pqxx::work tx(conn);
    CopyBinary rows;
    rows.Int64(int64_t{1}).EndRow();  // one field of two
    ExpectCopyRefused(rows, tx, "copy_binary_errors", columns, "22P04",
                      "row field count is 1, expected 2");
  }
  SECTION("a connection lost before the COPY is a broken connection") {
    pqxx::work tx(conn);
    const int64_t pid = tx.exec1("SELECT pg_backend_pid()")[0].as<int64_t>();
    pqxx::connection other(shortener::testing::SharedPgCluster().ConnInfo());
    pqxx::nontransaction killer(other);
    // With a timeout, pg_terminate_backend waits until the backend is gone.
    REQUIRE(killer.exec_params1("SELECT pg_terminate_backend($1, 10000)", pid)[0].as<bool>());
    CopyBinary rows;
    rows.Int64(int64_t{1}).Int16(1).EndRow();
    try {
      rows.CopyTo(tx, "copy_binary_errors", columns);
      FAIL("COPY on a terminated connection succeeded");
    } catch (...) {
      CHECK_THAT(StatusFromCurrentException("copy"), HasCode(absl::StatusCode::kUnavailable));
    }
    return;  // the connection is gone: nothing to check or clean up on it
  }
  // After the failed COPY and its rollback the same connection takes the next.
  pqxx::work tx(conn);
  CopyBinary rows;
  rows.Int64(int64_t{7}).Int16(7).EndRow();
  rows.CopyTo(tx, "copy_binary_errors", columns);
  CHECK(tx.exec1("SELECT s FROM copy_binary_errors WHERE k = 7")[0].as<int>() == 7);
}

}  // namespace
}  // namespace shortener::pg
