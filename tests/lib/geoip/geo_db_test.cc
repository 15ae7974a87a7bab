// GeoDb, GeoDbHolder and GeoSnapshot against MaxMind databases written at
// test time in the Country, City and ASN layouts: IPv4 and IPv6 look-ups,
// the registered_country fallback, regions, cities and networks and how
// their values are formed and cleaned, addresses that are not in a
// database or not addresses at all, files that are missing, not MaxMind DBs
// or of the wrong kind for their role, concurrent look-ups, and reloads that
// keep the old database when the new file is bad.
#include "lib/geoip/geo_db.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "lib/common/utf8.h"
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

// A snapshot of the database at `path` in `role` alone.
GeoSnapshot Only(const std::string& path, GeoRole role) {
  auto db = GeoDb::Open(path, role);
  REQUIRE_THAT(db, IsOk());
  std::shared_ptr<const GeoDb> shared(*std::move(db));
  return role == GeoRole::kLocation ? GeoSnapshot(shared, nullptr) : GeoSnapshot(nullptr, shared);
}

std::string CountryOf(const GeoSnapshot& geo, absl::string_view ip) {
  return geo.PlaceOf(ip).country;
}

TEST_CASE("countries of IPv4 and IPv6 addresses, with the registered country as fallback",
          "[lib/geoip]") {
  auto file = MakeTestDb();
  auto db = GeoDb::Open(file->path(), GeoRole::kLocation);
  REQUIRE_THAT(db, IsOk());
  CHECK(absl::StrContains((*db)->description(), "Shortener-Test-Country built "));
  const GeoSnapshot geo(std::shared_ptr<const GeoDb>(*std::move(db)), nullptr);
  CHECK(CountryOf(geo, "203.0.113.7") == "NL");
  CHECK(CountryOf(geo, "203.0.113.255") == "NL");
  CHECK(CountryOf(geo, "2001:db8::1") == "JP");
  CHECK(CountryOf(geo, "2001:db8:ffff:1::42") == "JP");
  CHECK(CountryOf(geo, "::ffff:203.0.113.9") == "NL");  // IPv4-mapped
  CHECK(CountryOf(geo, "198.51.100.20") == "DE");       // registered_country only
  // A Country database fills the country only.
  CHECK(geo.PlaceOf("203.0.113.7") == Place{"NL", "", "", ""});
}

TEST_CASE("addresses not in the database and non-addresses have no country", "[lib/geoip]") {
  auto file = MakeTestDb();
  GeoSnapshot geo(GeoDb::Open(file->city_path(), GeoRole::kLocation).value(),
                  GeoDb::Open(file->asn_path(), GeoRole::kNetwork).value());
  const char* none[] = {
      "10.0.0.1",       "192.168.1.1",   "127.0.0.1",
      "8.8.8.8",        "2001:db9::1",   "::1",
      "203.0.114.1",    "100.64.2.1",    "",
      "garbage",        "example.com",   "203.0.113",
      "203.0.113.7:80", "[2001:db8::1]", "2001:db8::1%eth0",
      "203.0.113.7 ",
  };
  for (const char* ip : none) {
    INFO("ip \"" << ip << "\"");
    CHECK(geo.PlaceOf(ip) == Place{});
  }
  CHECK(geo.PlaceOf(std::string(1000, '1')) == Place{});
  CHECK(geo.PlaceOf(std::string("203.0.113.7\0x", 13)) == Place{});
  // A record without any iso_code gives no country.
  CHECK(Only(file->path(), GeoRole::kLocation).PlaceOf("192.0.2.1") == Place{});
  // No database at all: nothing, whatever the address.
  CHECK(GeoSnapshot().empty());
  CHECK(GeoSnapshot().PlaceOf("203.0.113.7") == Place{});
}

TEST_CASE("a City database gives country, ISO 3166-2 region and a city named with its region",
          "[lib/geoip]") {
  auto file = MakeTestDb();
  const GeoSnapshot geo = Only(file->city_path(), GeoRole::kLocation);
  // The first (most general) subdivision is the region.
  CHECK(geo.PlaceOf("203.0.113.7") == Place{"US", "US-IL", "Springfield (US-IL)", ""});
  CHECK(geo.PlaceOf("::ffff:203.0.113.7") == Place{"US", "US-IL", "Springfield (US-IL)", ""});
  // The other Springfield is another value; codes are upper-cased.
  CHECK(geo.PlaceOf("198.51.100.1") == Place{"US", "US-MO", "Springfield (US-MO)", ""});
  CHECK(geo.PlaceOf("2001:db8:1::5") == Place{"JP", "JP-13", "T\xC5\x8Dky\xC5\x8D (JP-13)", ""});
  // No subdivision: the city is named with its country.
  CHECK(geo.PlaceOf("192.0.2.1") == Place{"MC", "", "Monaco (MC)", ""});
  // A registered_country alone gives the country, never a region or city.
  CHECK(geo.PlaceOf("192.0.2.200") == Place{"DE", "", "", ""});
  // A subdivision code that is not 1-3 ASCII letters or digits is no
  // region; a city without an English name is no city.
  CHECK(geo.PlaceOf("100.64.1.1") == Place{"FR", "", "", ""});
}

TEST_CASE("names from a database are cleaned: trimmed, control characters replaced, bounded",
          "[lib/geoip]") {
  auto file = MakeTestDb();
  GeoSnapshot geo(GeoDb::Open(file->city_path(), GeoRole::kLocation).value(),
                  GeoDb::Open(file->asn_path(), GeoRole::kNetwork).value());
  const Place place = geo.PlaceOf("100.64.0.9");
  CHECK(place.country == "GB");
  CHECK(place.region == "GB-ENG");
  // "  Lon\x01don\n" + 300 'x': blanks off, controls -> U+FFFD, cut.
  const std::string name =
      "Lon\xEF\xBF\xBD"
      "don\xEF\xBF\xBD" +
      std::string(kMaxNameBytes - 12, 'x');
  CHECK(place.city == name + " (GB-ENG)");
  const std::string organisation = "Tab\xEF\xBF\xBDOrg " + std::string(kMaxNameBytes - 10, 'y');
  CHECK(place.network == "AS64502 " + organisation);
  for (const std::string* value : {&place.country, &place.region, &place.city, &place.network}) {
    CHECK(value->size() <= kMaxPlaceValueBytes);
    CHECK(utf8::IsCleanText(*value, kMaxPlaceValueBytes));
  }
}

TEST_CASE("an ASN database gives the network as AS number and organisation", "[lib/geoip]") {
  auto file = MakeTestDb();
  const GeoSnapshot geo = Only(file->asn_path(), GeoRole::kNetwork);
  CHECK(geo.PlaceOf("203.0.113.7") == Place{"", "", "", "AS64500 Example Net B.V."});
  CHECK(geo.PlaceOf("2001:db8::1") == Place{"", "", "", "AS64501 Beispiel GmbH & Co. KG"});
  CHECK(geo.PlaceOf("198.51.100.1").network == "AS4200000000");  // 32-bit, no organisation
  CHECK(geo.PlaceOf("192.0.2.1").network.empty());               // AS0 is reserved: none
  CHECK(geo.PlaceOf("10.0.0.1") == Place{});
}

TEST_CASE("a City and an ASN database together fill all four from one look-up", "[lib/geoip]") {
  auto file = MakeTestDb();
  auto location = GeoDbHolder::Open(file->city_path(), GeoRole::kLocation);
  auto network = GeoDbHolder::Open(file->asn_path(), GeoRole::kNetwork);
  REQUIRE_THAT(location, IsOk());
  REQUIRE_THAT(network, IsOk());
  const GeoLocator locator(*std::move(location), *std::move(network));
  const GeoSnapshot geo = locator.Current();
  CHECK(geo.PlaceOf("203.0.113.7") ==
        Place{"US", "US-IL", "Springfield (US-IL)", "AS64500 Example Net B.V."});
  CHECK(geo.PlaceOf("2001:db8::1") ==
        Place{"JP", "JP-13", "T\xC5\x8Dky\xC5\x8D (JP-13)", "AS64501 Beispiel GmbH & Co. KG"});
  // Either database alone.
  CHECK(GeoLocator(nullptr, GeoDbHolder::Open(file->asn_path(), GeoRole::kNetwork).value())
            .Current()
            .PlaceOf("203.0.113.7") == Place{"", "", "", "AS64500 Example Net B.V."});
  CHECK(GeoLocator(nullptr, nullptr).Current().empty());
}

TEST_CASE("a database of the wrong kind for its role is refused naming the file and its type",
          "[lib/geoip]") {
  auto file = MakeTestDb();
  auto asn_as_location = GeoDb::Open(file->asn_path(), GeoRole::kLocation);
  CHECK_THAT(asn_as_location.status(), HasCode(absl::StatusCode::kInvalidArgument));
  CHECK(asn_as_location.status().message() ==
        "geoip database " + file->asn_path() +
            " is a Shortener-Test-ASN database, not a country or city database (its type must "
            "name Country, City or Enterprise)");
  for (const std::string& path : {file->path(), file->city_path()}) {
    auto location_as_network = GeoDb::Open(path, GeoRole::kNetwork);
    CHECK_THAT(location_as_network.status(), HasCode(absl::StatusCode::kInvalidArgument));
    CHECK(absl::StrContains(location_as_network.status().message(), path));
    CHECK(absl::StrContains(location_as_network.status().message(),
                            "database, not an ASN database (its type must name ASN or ISP)"));
  }
  CHECK_THAT(GeoDbHolder::Open(file->asn_path(), GeoRole::kLocation).status(),
             HasCode(absl::StatusCode::kInvalidArgument));
}

TEST_CASE("a missing file or one that is not a MaxMind DB is refused naming the path",
          "[lib/geoip]") {
  auto file = MakeTestDb();
  const std::string missing = file->dir() + "/nope.mmdb";
  auto db = GeoDb::Open(missing, GeoRole::kLocation);
  CHECK_THAT(db.status(), HasCode(absl::StatusCode::kNotFound));
  CHECK(absl::StrContains(db.status().message(), missing));

  const std::string text = file->dir() + "/not-a-db.mmdb";
  std::ofstream(text) << "this is not a MaxMind database\n";
  db = GeoDb::Open(text, GeoRole::kNetwork);
  CHECK_THAT(db.status(), HasCode(absl::StatusCode::kInvalidArgument));
  CHECK(absl::StrContains(db.status().message(), text));
  CHECK(absl::StrContains(db.status().message(), "not a usable MaxMind DB"));

  // A real database cut in half.
  const std::string cut = file->dir() + "/cut.mmdb";
  std::filesystem::copy_file(file->path(), cut);
  std::filesystem::resize_file(cut, std::filesystem::file_size(cut) / 2);
  db = GeoDb::Open(cut, GeoRole::kLocation);
  CHECK_THAT(db.status(), HasCode(absl::StatusCode::kInvalidArgument));

  db = GeoDb::Open(file->dir(), GeoRole::kLocation);  // a directory
  CHECK_FALSE(db.ok());
  CHECK(absl::StrContains(db.status().message(), file->dir()));
}

TEST_CASE("many threads look up at once and a reload swaps under them", "[lib/geoip][concurrent]") {
  auto file = MakeTestDb();
  const std::string live = file->dir() + "/live.mmdb";
  std::filesystem::copy_file(file->path(), live);
  REQUIRE_THAT(file->WriteVariant(file->dir() + "/be.mmdb", "BE"), IsOk());
  auto holder = GeoDbHolder::Open(live, GeoRole::kLocation);
  REQUIRE_THAT(holder, IsOk());
  auto asn = GeoDbHolder::Open(file->asn_path(), GeoRole::kNetwork);
  REQUIRE_THAT(asn, IsOk());
  GeoDbHolder* location = holder->get();
  const GeoLocator locator(*std::move(holder), *std::move(asn));
  std::atomic<bool> stop{false};
  std::vector<int> wrong(4, 0), lookups(4, 0);
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&locator, &stop, &wrong, &lookups, t] {
      while (!stop.load()) {
        // One snapshot per "batch", as the click recorder does.
        const GeoSnapshot geo = locator.Current();
        const Place v4 = geo.PlaceOf("203.0.113.1");
        if ((v4.country != "NL" && v4.country != "BE") ||
            v4.network != "AS64500 Example Net B.V." || CountryOf(geo, "2001:db8::7") != "JP" ||
            !(geo.PlaceOf("10.1.2.3") == Place{})) {
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
    if (!location->Reload().ok()) ++reload_failures;
  }
  stop.store(true);
  for (std::thread& th : readers) th.join();
  CHECK(reload_failures == 0);
  for (int t = 0; t < 4; ++t) {
    CHECK(wrong[t] == 0);
    CHECK(lookups[t] > 0);
  }
  CHECK(CountryOf(locator.Current(), "203.0.113.1") == "NL");  // 20 swaps: back to NL
}

TEST_CASE("a reload switches to the new file and keeps the old one when the new is bad",
          "[lib/geoip]") {
  auto file = MakeTestDb();
  const std::string live = file->dir() + "/live.mmdb";
  std::filesystem::copy_file(file->path(), live);
  auto holder = GeoDbHolder::Open(live, GeoRole::kLocation);
  REQUIRE_THAT(holder, IsOk());
  const GeoSnapshot before((*holder)->Current(), nullptr);
  CHECK(CountryOf(before, "203.0.113.1") == "NL");
  auto now = [&holder](absl::string_view ip) {
    return GeoSnapshot((*holder)->Current(), nullptr).PlaceOf(ip);
  };

  // The monthly update: a new file moved into place.
  REQUIRE_THAT(file->WriteVariant(file->dir() + "/next.mmdb", "BE"), IsOk());
  std::filesystem::rename(file->dir() + "/next.mmdb", live);
  REQUIRE_THAT((*holder)->Reload(), IsOk());
  CHECK(now("203.0.113.1").country == "BE");
  // Whoever still holds the old one keeps a working database.
  CHECK(CountryOf(before, "203.0.113.1") == "NL");

  // A broken update is refused and the database in effect stays. (Updates
  // are moved into place: the database in effect is mapped, and writing into
  // its file would change it under the readers.)
  std::ofstream(file->dir() + "/broken.mmdb") << "oops";
  std::filesystem::rename(file->dir() + "/broken.mmdb", live);
  absl::Status reload = (*holder)->Reload();
  CHECK_THAT(reload, HasCode(absl::StatusCode::kInvalidArgument));
  CHECK(now("203.0.113.1").country == "BE");
  std::filesystem::remove(live);
  CHECK_THAT((*holder)->Reload(), HasCode(absl::StatusCode::kNotFound));
  CHECK(now("2001:db8::1").country == "JP");

  // A Country database replaced by a City one: now regions and cities too.
  std::filesystem::copy_file(file->city_path(), live);
  REQUIRE_THAT((*holder)->Reload(), IsOk());
  CHECK(now("203.0.113.1") == Place{"US", "US-IL", "Springfield (US-IL)", ""});
  // An ASN database in its place is of the wrong kind: refused, the City
  // one stays.
  std::filesystem::copy_file(file->asn_path(), file->dir() + "/next.mmdb");
  std::filesystem::rename(file->dir() + "/next.mmdb", live);
  reload = (*holder)->Reload();
  CHECK_THAT(reload, HasCode(absl::StatusCode::kInvalidArgument));
  CHECK(absl::StrContains(reload.message(), "is a Shortener-Test-ASN database"));
  CHECK(now("203.0.113.1").city == "Springfield (US-IL)");
}

TEST_CASE("City and ASN databases reload like the country one", "[lib/geoip]") {
  auto file = MakeTestDb();
  const std::string city = file->dir() + "/city.mmdb";
  const std::string asn = file->dir() + "/asn.mmdb";
  std::filesystem::copy_file(file->city_path(), city);
  std::filesystem::copy_file(file->asn_path(), asn);
  auto location = GeoDbHolder::Open(city, GeoRole::kLocation);
  auto network = GeoDbHolder::Open(asn, GeoRole::kNetwork);
  REQUIRE_THAT(location, IsOk());
  REQUIRE_THAT(network, IsOk());
  const GeoLocator locator(*std::move(location), *std::move(network));
  const GeoSnapshot before = locator.Current();

  REQUIRE_THAT(file->Write(TestGeoIpDb::Layout::kCity, file->dir() + "/next.mmdb", "Shelbyville"),
               IsOk());
  std::filesystem::rename(file->dir() + "/next.mmdb", city);
  REQUIRE_THAT(file->Write(TestGeoIpDb::Layout::kAsn, file->dir() + "/next.mmdb", "Other Net"),
               IsOk());
  std::filesystem::rename(file->dir() + "/next.mmdb", asn);
  REQUIRE_THAT(locator.location()->Reload(), IsOk());
  CHECK(locator.Current().PlaceOf("203.0.113.1") ==
        Place{"US", "US-IL", "Shelbyville (US-IL)", "AS64500 Example Net B.V."});
  REQUIRE_THAT(locator.network()->Reload(), IsOk());
  CHECK(locator.Current().PlaceOf("203.0.113.1") ==
        Place{"US", "US-IL", "Shelbyville (US-IL)", "AS64500 Other Net"});
  // A snapshot taken before keeps its databases.
  CHECK(before.PlaceOf("203.0.113.1") ==
        Place{"US", "US-IL", "Springfield (US-IL)", "AS64500 Example Net B.V."});

  // A City database where the ASN one was: refused, the ASN one stays.
  std::filesystem::copy_file(file->city_path(), file->dir() + "/next.mmdb");
  std::filesystem::rename(file->dir() + "/next.mmdb", asn);
  CHECK_THAT(locator.network()->Reload(), HasCode(absl::StatusCode::kInvalidArgument));
  CHECK(locator.Current().PlaceOf("203.0.113.1").network == "AS64500 Other Net");
}

}  // namespace
}  // namespace shortener::geoip
