// CountryDb and CountryDbHolder against a MaxMind database written at test
// time: IPv4 and IPv6 look-ups, the registered_country fallback, addresses
// that are not in it or not addresses at all, files that are missing or not
// MaxMind DBs, concurrent look-ups, and a reload that keeps the old database
// when the new file is bad.
#include "lib/geoip/country_db.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "tests/support/status_matchers.h"
#include "tests/support/test_geoip_db.h"

namespace shortener::geoip {
namespace {

using shortener::testing::HasCode;
using shortener::testing::IsOk;
using shortener::testing::TestGeoIpDb;

std::unique_ptr<TestGeoIpDb> MakeTestDb() {
  auto db = TestGeoIpDb::Create();
  INFO(db.status().ToString());
  REQUIRE(db.ok());
  return *std::move(db);
}

TEST_CASE("countries of IPv4 and IPv6 addresses, with the registered country as fallback",
          "[lib/geoip]") {
  auto file = MakeTestDb();
  auto db = CountryDb::Open(file->path());
  REQUIRE_THAT(db, IsOk());
  CHECK((*db)->CountryOf("203.0.113.7") == "NL");
  CHECK((*db)->CountryOf("203.0.113.255") == "NL");
  CHECK((*db)->CountryOf("2001:db8::1") == "JP");
  CHECK((*db)->CountryOf("2001:db8:ffff:1::42") == "JP");
  CHECK((*db)->CountryOf("::ffff:203.0.113.9") == "NL");  // IPv4-mapped
  CHECK((*db)->CountryOf("198.51.100.20") == "DE");       // registered_country only
  CHECK(absl::StrContains((*db)->description(), "Shortener-Test-Country built "));
}

TEST_CASE("addresses not in the database and non-addresses have no country", "[lib/geoip]") {
  auto file = MakeTestDb();
  auto db = CountryDb::Open(file->path());
  REQUIRE_THAT(db, IsOk());
  const char* none[] = {
      "10.0.0.1",
      "192.168.1.1",
      "127.0.0.1",
      "8.8.8.8",
      "2001:db9::1",
      "::1",
      "203.0.114.1",
      "192.0.2.1",  // no iso_code
      "",
      "garbage",
      "example.com",
      "203.0.113",
      "203.0.113.7:80",
      "[2001:db8::1]",
      "2001:db8::1%eth0",
      "203.0.113.7 ",
  };
  for (const char* ip : none) {
    INFO("ip \"" << ip << "\"");
    CHECK((*db)->CountryOf(ip).empty());
  }
  CHECK((*db)->CountryOf(std::string(1000, '1')).empty());
  CHECK((*db)->CountryOf(std::string("203.0.113.7\0x", 13)).empty());
}

TEST_CASE("a missing file or one that is not a MaxMind DB is refused naming the path",
          "[lib/geoip]") {
  auto file = MakeTestDb();
  const std::string missing = file->dir() + "/nope.mmdb";
  auto db = CountryDb::Open(missing);
  CHECK_THAT(db.status(), HasCode(absl::StatusCode::kNotFound));
  CHECK(absl::StrContains(db.status().message(), missing));

  const std::string text = file->dir() + "/not-a-db.mmdb";
  std::ofstream(text) << "this is not a MaxMind database\n";
  db = CountryDb::Open(text);
  CHECK_THAT(db.status(), HasCode(absl::StatusCode::kInvalidArgument));
  CHECK(absl::StrContains(db.status().message(), text));
  CHECK(absl::StrContains(db.status().message(), "not a usable MaxMind DB"));

  // A real database cut in half.
  const std::string cut = file->dir() + "/cut.mmdb";
  std::filesystem::copy_file(file->path(), cut);
  std::filesystem::resize_file(cut, std::filesystem::file_size(cut) / 2);
  db = CountryDb::Open(cut);
  CHECK_THAT(db.status(), HasCode(absl::StatusCode::kInvalidArgument));

  db = CountryDb::Open(file->dir());  // a directory
  CHECK_FALSE(db.ok());
  CHECK(absl::StrContains(db.status().message(), file->dir()));
}

TEST_CASE("many threads look up at once and a reload swaps under them", "[lib/geoip][concurrent]") {
  auto file = MakeTestDb();
  const std::string live = file->dir() + "/live.mmdb";
  std::filesystem::copy_file(file->path(), live);
  REQUIRE_THAT(file->WriteVariant(file->dir() + "/be.mmdb", "BE"), IsOk());
  auto holder = CountryDbHolder::Open(live);
  REQUIRE_THAT(holder, IsOk());
  const CountryDbHolder* shared = holder->get();
  std::atomic<bool> stop{false};
  std::vector<int> wrong(4, 0), lookups(4, 0);
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([shared, &stop, &wrong, &lookups, t] {
      while (!stop.load()) {
        // One database per "batch", as the click recorder does.
        std::shared_ptr<const CountryDb> db = shared->Current();
        const std::string v4 = db->CountryOf("203.0.113.1");
        if ((v4 != "NL" && v4 != "BE") || db->CountryOf("2001:db8::7") != "JP" ||
            !db->CountryOf("10.1.2.3").empty()) {
          ++wrong[t];
        }
        ++lookups[t];
      }
    });
  }
  // Meanwhile the file is replaced and reloaded, back and forth.
  int reload_failures = 0;
  for (int i = 0; i < 20; ++i) {
    const std::string next = file->dir() + "/next.mmdb";
    std::filesystem::copy_file(i % 2 == 0 ? file->dir() + "/be.mmdb" : file->path(), next);
    std::filesystem::rename(next, live);
    if (!(*holder)->Reload().ok()) ++reload_failures;
  }
  stop.store(true);
  for (std::thread& th : readers) th.join();
  CHECK(reload_failures == 0);
  for (int t = 0; t < 4; ++t) {
    CHECK(wrong[t] == 0);
    CHECK(lookups[t] > 0);
  }
  CHECK((*holder)->Current()->CountryOf("203.0.113.1") == "NL");  // 20 swaps: back to NL
}

TEST_CASE("a reload switches to the new file and keeps the old one when the new is bad",
          "[lib/geoip]") {
  auto file = MakeTestDb();
  const std::string live = file->dir() + "/live.mmdb";
  std::filesystem::copy_file(file->path(), live);
  auto holder = CountryDbHolder::Open(live);
  REQUIRE_THAT(holder, IsOk());
  std::shared_ptr<const CountryDb> before = (*holder)->Current();
  CHECK(before->CountryOf("203.0.113.1") == "NL");

  // The monthly update: a new file moved into place.
  REQUIRE_THAT(file->WriteVariant(file->dir() + "/next.mmdb", "BE"), IsOk());
  std::filesystem::rename(file->dir() + "/next.mmdb", live);
  REQUIRE_THAT((*holder)->Reload(), IsOk());
  CHECK((*holder)->Current()->CountryOf("203.0.113.1") == "BE");
  // Whoever still holds the old one keeps a working database.
  CHECK(before->CountryOf("203.0.113.1") == "NL");

  // A broken update is refused and the database in effect stays. (Updates
  // are moved into place: the database in effect is mapped, and writing into
  // its file would change it under the readers.)
  std::ofstream(file->dir() + "/broken.mmdb") << "oops";
  std::filesystem::rename(file->dir() + "/broken.mmdb", live);
  absl::Status reload = (*holder)->Reload();
  CHECK_THAT(reload, HasCode(absl::StatusCode::kInvalidArgument));
  CHECK((*holder)->Current()->CountryOf("203.0.113.1") == "BE");
  std::filesystem::remove(live);
  CHECK_THAT((*holder)->Reload(), HasCode(absl::StatusCode::kNotFound));
  CHECK((*holder)->Current()->CountryOf("2001:db8::1") == "JP");
}

}  // namespace
}  // namespace shortener::geoip
