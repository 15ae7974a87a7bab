// lib/pg/binary_result.h on a private PostgreSQL: numbers, text and arrays
// arrive as stored through binary results, and a field read as the wrong
// type is refused rather than misread.
#include "lib/pg/binary_result.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "tests/support/pg_cluster.h"

namespace shortener::pg {
namespace {

TEST_CASE("BinaryResult reads numbers, chars, text and arrays as PostgreSQL sends them",
          "[lib/pg][pg]") {
  pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
  pqxx::work tx(conn);
  const std::string limit = "2";
  const BinaryResult r = BinaryResult::Exec(
      tx,
      "SELECT * FROM (VALUES"
      " ('l'::\"char\", 9223372036854775807::bigint, 'caf\xc3\xa9'::text,"
      "  ARRAY[-9223372036854775808, 0, 42]::bigint[], ARRAY[1, -1, 32767]::smallint[],"
      "  ARRAY['a,b', '', NULL, '{x}']::text[]),"
      " ('c'::\"char\", -1::bigint, ''::text, '{}'::bigint[], '{}'::smallint[], '{}'::text[]),"
      " ('x'::\"char\", 0::bigint, NULL::text, NULL::bigint[], NULL::smallint[], NULL::text[]))"
      " AS v LIMIT $1",
      {&limit, 1});
  REQUIRE(r.rows() == 2);
  REQUIRE(r.columns() == 6);
  CHECK(r.Char(0, 0) == 'l');
  CHECK(r.Int64(0, 1) == std::numeric_limits<int64_t>::max());
  CHECK(r.Text(0, 2) == "caf\xc3\xa9");
  CHECK(r.Int64Array(0, 3) == std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 0, 42});
  CHECK(r.Int16Array(0, 4) == std::vector<int16_t>{1, -1, 32767});
  CHECK(r.TextArray(0, 5) == std::vector<std::string>{"a,b", "", "", "{x}"});  // NULL as ""
  CHECK(r.Char(1, 0) == 'c');
  CHECK(r.Int64(1, 1) == -1);
  CHECK(r.Text(1, 2).empty());
  CHECK(r.Int64Array(1, 3).empty());
  CHECK(r.Int16Array(1, 4).empty());
  CHECK(r.TextArray(1, 5).empty());
  CHECK_FALSE(r.IsNull(1, 2));

  // The wrong type, or a field that is not there, is an error, not a guess.
  CHECK_THROWS_AS(r.Int16Array(0, 3), pqxx::data_exception);  // bigint[] as smallint[]
  CHECK_THROWS_AS(r.TextArray(0, 4), pqxx::data_exception);
  CHECK_THROWS_AS(r.Int64(0, 0), pqxx::data_exception);  // one byte as eight
  CHECK_THROWS_AS(r.Char(0, 1), pqxx::data_exception);
  CHECK_THROWS_AS(r.Int64(2, 1), pqxx::range_error);
  CHECK_THROWS_AS(r.Int64(0, 6), pqxx::range_error);
}

TEST_CASE("BinaryResult refuses NULLs where a value is read, and reports SQL errors",
          "[lib/pg][pg]") {
  pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
  {
    pqxx::work tx(conn);
    const BinaryResult r =
        BinaryResult::Exec(tx, "SELECT NULL::bigint, NULL::bigint[], ARRAY[1, NULL]::bigint[]", {});
    CHECK(r.IsNull(0, 0));
    CHECK_THROWS_AS(r.Int64(0, 0), pqxx::data_exception);
    CHECK_THROWS_AS(r.Int64Array(0, 1), pqxx::data_exception);
    CHECK_THROWS_AS(r.Int64Array(0, 2), pqxx::data_exception);  // a NULL element
  }
  pqxx::work tx(conn);
  try {
    (void)BinaryResult::Exec(tx, "SELECT 1/0", {});
    FAIL("division by zero succeeded");
  } catch (const pqxx::sql_error& e) {
    CHECK(e.sqlstate() == "22012");
  }
}

TEST_CASE("BinaryResult refuses an array whose header claims more than its bytes hold",
          "[lib/pg][pg]") {
  // bytea fields holding array_send forms by hand: one dimension of bigint
  // (OID 20) claiming 2^31 - 1 elements with one present, and a text[]
  // (OID 25) claiming 2^31 - 1 with none. Read, not allocated for.
  pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
  pqxx::work tx(conn);
  const BinaryResult r =
      BinaryResult::Exec(tx,
                         "SELECT '\\x0000000100000000000000147fffffff00000001'::bytea"
                         "       || '\\x00000008000000000000002a'::bytea,"
                         "       '\\x0000000100000000000000197fffffff00000001'::bytea",
                         {});
  CHECK_THROWS_AS(r.Int64Array(0, 0), pqxx::data_exception);
  CHECK_THROWS_AS(r.TextArray(0, 1), pqxx::data_exception);
}

TEST_CASE("BinaryResult leaves the connection usable for libpqxx", "[lib/pg][pg]") {
  pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
  pqxx::work tx(conn);
  const BinaryResult r = BinaryResult::Exec(tx, "SELECT 7::bigint", {});
  CHECK(r.Int64(0, 0) == 7);
  CHECK(tx.exec1("SELECT 8")[0].as<int>() == 8);
  tx.commit();
}

}  // namespace
}  // namespace shortener::pg
