// A tiny MaxMind-format country database, written at test time by Debian's
// MaxMind::DB::Writer (package libmaxmind-db-writer-perl, installed by
// deploy/local/deps.sh) into a temp dir that is deleted on destruction.
// Networks (all documentation ranges, which real databases leave out):
//   203.0.113.0/24   country NL (registered_country NL)
//   2001:db8::/32    country JP
//   198.51.100.0/24  registered_country DE only (no country)
//   192.0.2.0/24     a record without any iso_code
// Everything else (10.0.0.1, 8.8.8.8, ...) is not in it.
#ifndef SHORTENER_TESTS_SUPPORT_TEST_GEOIP_DB_H_
#define SHORTENER_TESTS_SUPPORT_TEST_GEOIP_DB_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace shortener::testing {

class TestGeoIpDb {
 public:
  // Writes the database. FAILED_PRECONDITION naming the package when the
  // perl module is missing (the tests then fail, never skip); INTERNAL with
  // perl's output for other failures.
  static absl::StatusOr<std::unique_ptr<TestGeoIpDb>> Create();
  ~TestGeoIpDb();
  TestGeoIpDb(const TestGeoIpDb&) = delete;
  TestGeoIpDb& operator=(const TestGeoIpDb&) = delete;

  const std::string& dir() const { return dir_; }
  // The .mmdb file.
  std::string path() const { return dir_ + "/test-country.mmdb"; }

  // Writes the same networks to `out` with `iso` as 203.0.113.0/24's
  // country instead of NL (to test a reload). Errors as Create's.
  absl::Status WriteVariant(const std::string& out, const std::string& iso) const;

 private:
  explicit TestGeoIpDb(std::string dir) : dir_(std::move(dir)) {}

  std::string dir_;
};

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SUPPORT_TEST_GEOIP_DB_H_
