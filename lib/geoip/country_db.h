// Country of a client IP from a MaxMind-format database (GeoLite2-Country,
// GeoIP2-City, DB-IP Lite, ...), through libmaxminddb.
//
// CountryDb is one opened file: memory-mapped, read-only after Open, so any
// number of threads may look up at once without locks. CountryDbHolder lets
// an operator replace the file while the service runs (Reload, on SIGHUP):
// callers take the current CountryDb once per batch (Current) and keep it
// alive as long as they use it.
#ifndef SHORTENER_LIB_GEOIP_COUNTRY_DB_H_
#define SHORTENER_LIB_GEOIP_COUNTRY_DB_H_

#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct MMDB_s;

namespace shortener::geoip {

class CountryDb {
 public:
  // Opens and maps `path`. NOT_FOUND when the file does not exist or cannot
  // be read, INVALID_ARGUMENT when it is not a MaxMind DB (or a corrupt
  // one); both messages name the path.
  static absl::StatusOr<std::unique_ptr<CountryDb>> Open(const std::string& path);
  ~CountryDb();
  CountryDb(const CountryDb&) = delete;
  CountryDb& operator=(const CountryDb&) = delete;

  // The ISO 3166-1 alpha-2 code ("NL") of the address `ip` (IPv4 or IPv6
  // text, as the edge reports it): the record's country.iso_code, else its
  // registered_country.iso_code (addresses of anycast networks and the like
  // carry only that). Empty when the address is not a literal IP, is not in
  // the database (private and reserved ranges never are), or its record has
  // no usable code. Thread-safe.
  std::string CountryOf(absl::string_view ip) const;

  // "GeoLite2-Country built 2026-11-17" (type and build date from the
  // file's metadata): what logs say was loaded.
  const std::string& description() const { return description_; }

 private:
  CountryDb();

  std::unique_ptr<MMDB_s> mmdb_;
  std::string description_;
};

// The CountryDb in effect, replaceable at run time. Thread-safe.
class CountryDbHolder {
 public:
  // Opens `path` (errors as CountryDb::Open).
  static absl::StatusOr<std::unique_ptr<CountryDbHolder>> Open(const std::string& path);

  // The database to use now; stays valid as long as the pointer is held,
  // even across a Reload.
  std::shared_ptr<const CountryDb> Current() const;

  // Opens the file again (an operator replaced it, e.g. the monthly
  // GeoLite2 update) and, if that works, makes it current; on failure the
  // old database stays in effect and the error is returned. Replace the file
  // by moving a new one into place (mv, rename): the database in effect is
  // memory-mapped, and writing into its file changes it under the readers.
  absl::Status Reload();

  const std::string& path() const { return path_; }

 private:
  CountryDbHolder(std::string path, std::shared_ptr<const CountryDb> db)
      : path_(std::move(path)), current_(std::move(db)) {}

  const std::string path_;
  mutable std::mutex mu_;
  std::shared_ptr<const CountryDb> current_;  // guarded by mu_
};

}  // namespace shortener::geoip

#endif  // SHORTENER_LIB_GEOIP_COUNTRY_DB_H_
