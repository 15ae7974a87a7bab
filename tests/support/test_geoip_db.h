// Tiny MaxMind-format databases in the three layouts the service reads,
// written at test time by Debian's MaxMind::DB::Writer (package
// libmaxmind-db-writer-perl, installed by deploy/local/deps.sh) into a temp
// dir that is deleted on destruction. Networks (documentation and shared
// ranges, which real databases leave out); everything else (10.0.0.1,
// 8.8.8.8, ...) is in none of them.
//
// Country (path(), type "Shortener-Test-Country"; VARIANT: the first
// network's country):
//   203.0.113.0/24   country NL (registered_country NL)
//   2001:db8::/32    country JP
//   198.51.100.0/24  registered_country DE only (no country)
//   192.0.2.0/24     a record without any iso_code
// City (city_path(), "Shortener-Test-City"; VARIANT: the first network's
// city name):
//   203.0.113.0/24   US, subdivisions IL then SAN, city Springfield
//   198.51.100.0/24  "us" (lower case), subdivision MO, city Springfield
//   2001:db8::/32    JP, subdivision 13, city "Tōkyō"
//   192.0.2.0/25     MC, no subdivision, city Monaco
//   192.0.2.128/25   registered_country DE only, subdivision BE, city Berlin
//   100.64.0.0/24    GB, subdivision ENG, city "  Lon\x01don\n" + 300 'x'
//   100.64.1.0/24    FR, subdivision "ÎDF" (not ASCII), city with a German
//                    name only
// ASN (asn_path(), "Shortener-Test-ASN"; VARIANT: the first network's
// organisation):
//   203.0.113.0/24   AS64500 "Example Net B.V."
//   2001:db8::/32    AS64501 "Beispiel GmbH & Co. KG"
//   198.51.100.0/24  AS4200000000, no organisation
//   192.0.2.0/24     AS0 (reserved) "Reserved"
//   100.64.0.0/24    AS64502 "Tab\tOrg " + 300 'y'
#ifndef SHORTENER_TESTS_SUPPORT_TEST_GEOIP_DB_H_
#define SHORTENER_TESTS_SUPPORT_TEST_GEOIP_DB_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace shortener::testing {

class TestGeoIpDb {
 public:
  enum class Layout { kCountry, kCity, kAsn };

  // Writes the three databases. FAILED_PRECONDITION naming the package when the
  // perl module is missing (the tests then fail, never skip); INTERNAL with
  // perl's output for other failures.
  static absl::StatusOr<std::unique_ptr<TestGeoIpDb>> Create();
  ~TestGeoIpDb();
  TestGeoIpDb(const TestGeoIpDb&) = delete;
  TestGeoIpDb& operator=(const TestGeoIpDb&) = delete;

  const std::string& dir() const { return dir_; }
  // The .mmdb files, as above.
  std::string path() const { return dir_ + "/test-country.mmdb"; }
  std::string city_path() const { return dir_ + "/test-city.mmdb"; }
  std::string asn_path() const { return dir_ + "/test-asn.mmdb"; }

  // Writes the same networks to `out` with `iso` as 203.0.113.0/24's
  // country instead of NL (to test a reload). Errors as Create's.
  absl::Status WriteVariant(const std::string& out, const std::string& iso) const;
  // Writes the networks of `layout` to `out` with its VARIANT (above) in
  // place of the default one (to test a reload). Errors as Create's.
  absl::Status Write(Layout layout, const std::string& out, const std::string& variant) const;

 private:
  explicit TestGeoIpDb(std::string dir) : dir_(std::move(dir)) {}
  // Runs the writer on LAYOUT OUTPUT VARIANT triples.
  absl::Status RunWriter(const std::vector<std::string>& triples) const;

  std::string dir_;
};

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SUPPORT_TEST_GEOIP_DB_H_
