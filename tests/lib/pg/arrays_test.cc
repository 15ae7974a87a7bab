// lib/pg/arrays.h on a private PostgreSQL: timestamps arrive at the exact
// microsecond, and array literals carry any text, NULLs, numbers, times and
// bytes through unchanged.
#include "lib/pg/arrays.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "lib/common/store_time.h"
#include "tests/support/pg_cluster.h"

namespace shortener::pg {
namespace {

TEST_CASE("PgTimestamp gives PostgreSQL the exact microsecond for any year it can hold",
          "[lib/pg][pg]") {
  std::vector<absl::Time> times = {
      absl::UnixEpoch(),
      absl::FromUnixMicros(1),
      absl::FromUnixMicros(-1),  // 1969-12-31 23:59:59.999999
      absl::FromUnixMicros(1732500000123456),
      absl::FromUnixNanos(1732500000123456789),  // truncated to the microsecond
      absl::FromCivil(absl::CivilSecond(1, 1, 1, 0, 0, 0), absl::UTCTimeZone()),
      absl::FromCivil(absl::CivilSecond(999, 3, 4, 5, 6, 7), absl::UTCTimeZone()),
      absl::FromCivil(absl::CivilSecond(9999, 12, 31, 23, 59, 59), absl::UTCTimeZone()) +
          absl::Microseconds(999999),
      absl::FromCivil(absl::CivilSecond(2024, 2, 29, 12, 0, 0), absl::UTCTimeZone()),
      absl::FromCivil(absl::CivilSecond(12345, 6, 7, 8, 9, 10), absl::UTCTimeZone()),
  };
  pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
  pqxx::nontransaction tx(conn);
  for (absl::Time t : times) {
    const std::string text = PgTimestamp(t);
    INFO(text);
    int64_t back =
        tx.exec_params1("SELECT (extract(epoch FROM $1::timestamptz) * 1000000)::bigint", text)[0]
            .as<int64_t>();
    CHECK(back == absl::ToUnixMicros(StoreTime(t)));
    // Four-digit years: the same text as the general formatter (the hand
    // path only pads years below 1000, which %Y leaves unpadded).
    const int64_t year = absl::ToCivilYear(t, absl::UTCTimeZone()).year();
    if (year >= 1000) {
      CHECK(text == absl::FormatTime("%Y-%m-%d %H:%M:%E6S+00", StoreTime(t), absl::UTCTimeZone()));
    }
  }
  CHECK(PgTimestamp(absl::FromCivil(absl::CivilSecond(1, 1, 1, 0, 0, 0), absl::UTCTimeZone())) ==
        "0001-01-01 00:00:00.000000+00");
}

TEST_CASE("array literals carry any text, NULLs, numbers, times and bytes unchanged",
          "[lib/pg][pg]") {
  // Text that array syntax gives a meaning to: quotes, backslashes, commas,
  // braces, spaces, the word NULL, an empty string; and UTF-8.
  const std::vector<std::optional<std::string>> texts = {
      "plain", "",         "NULL",       "null",        std::nullopt,
      "a,b",   "{x}",      "say \"hi\"", "back\\slash", "\\",
      "\"",    " padded ", "tab\there",  "new\nline",   "caf\xc3\xa9 \xe2\x82\xac"};
  ArrayLiteral text_array;
  CHECK(text_array.empty());
  for (const std::optional<std::string>& t : texts) text_array.Add(t);
  CHECK_FALSE(text_array.empty());
  const std::vector<int64_t> numbers = {0, -1, std::numeric_limits<int64_t>::max(),
                                        std::numeric_limits<int64_t>::min()};
  ArrayLiteral number_array;
  for (int64_t n : numbers) number_array.Add(n);
  const absl::Time t0 = absl::FromUnixNanos(1732500000123456789);
  ArrayLiteral time_array;
  time_array.AddTime(t0).AddTime(std::optional<absl::Time>()).AddTime(absl::FromUnixMicros(-1));
  const std::string bytes("\x00\x01\\\"{,}\xff", 8);
  ArrayLiteral bytes_array;
  bytes_array.AddBytes(bytes).AddBytes("").AddNull();
  CHECK(ArrayLiteral().Build() == "{}");

  pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
  pqxx::nontransaction tx(conn);
  const pqxx::result got_texts = tx.exec_params(
      "SELECT t, t IS NULL FROM unnest($1::text[]) WITH ORDINALITY AS u(t, i) ORDER BY i",
      text_array.Build());
  REQUIRE(got_texts.size() == texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    INFO(i);
    CHECK(got_texts[i][1].as<bool>() == !texts[i].has_value());
    if (texts[i].has_value()) CHECK(got_texts[i][0].as<std::string>() == *texts[i]);
  }
  const pqxx::result got_numbers =
      tx.exec_params("SELECT n FROM unnest($1::bigint[]) WITH ORDINALITY AS u(n, i) ORDER BY i",
                     number_array.Build());
  REQUIRE(got_numbers.size() == numbers.size());
  for (size_t i = 0; i < numbers.size(); ++i) CHECK(got_numbers[i][0].as<int64_t>() == numbers[i]);
  const pqxx::result got_times = tx.exec_params(
      "SELECT (extract(epoch FROM t) * 1000000)::bigint, t IS NULL"
      " FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(t, i) ORDER BY i",
      time_array.Build());
  REQUIRE(got_times.size() == 3);
  CHECK(got_times[0][0].as<int64_t>() == absl::ToUnixMicros(StoreTime(t0)));
  CHECK(got_times[1][1].as<bool>());
  CHECK(got_times[2][0].as<int64_t>() == -1);
  const pqxx::result got_bytes = tx.exec_params(
      "SELECT encode(b, 'hex'), b IS NULL"
      " FROM unnest($1::bytea[]) WITH ORDINALITY AS u(b, i) ORDER BY i",
      bytes_array.Build());
  REQUIRE(got_bytes.size() == 3);
  CHECK(got_bytes[0][0].as<std::string>() == "00015c227b2c7dff");
  CHECK(got_bytes[1][0].as<std::string>() == "");
  CHECK(got_bytes[2][1].as<bool>());
}

TEST_CASE("AppendHex writes lower-case hex and appends", "[lib/pg][pg]") {
  std::string out = "\\x";
  AppendHex(std::string("\x00\x0f\xa0\xff", 4), &out);
  CHECK(out == "\\x000fa0ff");
  AppendHex("", &out);
  CHECK(out == "\\x000fa0ff");
}

}  // namespace
}  // namespace shortener::pg
