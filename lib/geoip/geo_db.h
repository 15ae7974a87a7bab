// Where a client IP is, from MaxMind-format databases (libmaxminddb): its
// country, region and city from a location database (GeoLite2-Country or
// -City, GeoIP2, DB-IP Lite, ...; --geoip_db) and its network (autonomous
// system) from an ASN database (GeoLite2-ASN, GeoIP2-ISP, DB-IP ASN Lite;
// --geoip_asn_db). docs/analytics.md, "Where people are (GeoIP)".
//
// GeoDb is one opened file: memory-mapped, read-only after Open, so any
// number of threads may look up at once without locks. GeoDbHolder lets an
// operator replace its file while the service runs (Reload, on SIGHUP).
// GeoLocator holds the service's databases (either, both) and hands out
// GeoSnapshot, the databases in effect, which callers take once per batch
// and keep alive as long as they use it. GeoSnapshot::PlaceOf is the one
// look-up: it gives a Place, every value already in the form visits and
// rollups store (the rules of those forms are here and nowhere else).
#ifndef SHORTENER_LIB_GEOIP_GEO_DB_H_
#define SHORTENER_LIB_GEOIP_GEO_DB_H_

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct MMDB_s;
struct sockaddr;

namespace shortener::geoip {

// Where an address is. Every field is empty when unknown, else clean text
// (lib/common/utf8.h: well-formed UTF-8, no control characters) of at most
// kMaxPlaceValueBytes bytes.
struct Place {
  // ISO 3166-1 alpha-2, upper case: "US". The record's country, else its
  // registered_country (anycast ranges and the like carry only that).
  std::string country;
  // ISO 3166-2: the country, '-', the iso_code of the record's first (most
  // general) subdivision, upper case: "US-CA", "GB-ENG". Only with a
  // country of the record's own (not a registered_country).
  std::string region;
  // The English name of the city, then its region (else its country) in
  // brackets, so that one value is one place: "Springfield (US-IL)",
  // "Springfield (US-MO)", "Monaco (MC)". Only with a country. The name is
  // cut to kMaxNameBytes.
  std::string city;
  // "AS" and the autonomous system number, then a space and its
  // organisation when the record has one: "AS15169 Google LLC", "AS64500".
  // The organisation is cut to kMaxNameBytes.
  std::string network;

  friend bool operator==(const Place& a, const Place& b) {
    return a.country == b.country && a.region == b.region && a.city == b.city &&
           a.network == b.network;
  }
};

// The most bytes of a name taken from a database (a city's, an
// organisation's), cut at a character boundary: longer than any real one.
inline constexpr size_t kMaxNameBytes = 100;
// The most bytes of any Place value ("AS4294967295 " and a name of
// kMaxNameBytes; a name of kMaxNameBytes and " (XX-XXX)").
inline constexpr size_t kMaxPlaceValueBytes = kMaxNameBytes + 13;

// What a database is opened for, which decides what it must be and what it
// fills: its metadata's database_type, read as words split at anything
// that is not a letter or digit, case ignored, must name it.
enum class GeoRole {
  // Country, region and city: a type naming "Country", "City" or
  // "Enterprise" ("GeoLite2-Country", "GeoIP2-City", "DBIP-City-Lite").
  // A Country database fills only the country.
  kLocation,
  // Network: a type naming "ASN" or "ISP" ("GeoLite2-ASN", "GeoIP2-ISP",
  // "DBIP-ASN-Lite"), with autonomous_system_number and
  // autonomous_system_organization at the top of its records.
  kNetwork,
};

// "country or city" / "ASN": what a database of `role` is called in messages.
absl::string_view GeoRoleName(GeoRole role);

class GeoDb {
 public:
  // Opens and maps `path` for `role`. NOT_FOUND when the file does not exist
  // or cannot be read; INVALID_ARGUMENT when it is not a MaxMind DB (or a
  // corrupt one), or is one of another kind than `role` needs ("geoip
  // database PATH is a GeoLite2-ASN database, not a country or city
  // database (its type must name Country, City or Enterprise)", "... not an
  // ASN database (its type must name ASN or ISP)"). Every message names the
  // path.
  static absl::StatusOr<std::unique_ptr<GeoDb>> Open(const std::string& path, GeoRole role);
  ~GeoDb();
  GeoDb(const GeoDb&) = delete;
  GeoDb& operator=(const GeoDb&) = delete;

  // Sets the fields of `place` that this database's role fills, from the
  // record of `address` (an AF_INET or AF_INET6 socket address); leaves
  // them alone when the address is not in the database (private and
  // reserved ranges never are) or its record lacks them. Thread-safe.
  void Fill(const sockaddr& address, Place& place) const;

  GeoRole role() const { return role_; }
  // "GeoLite2-City built 2026-11-17" (type and build date from the file's
  // metadata): what logs say was loaded.
  const std::string& description() const { return description_; }

 private:
  explicit GeoDb(GeoRole role);
  // `entry` is the record found, an MMDB_entry_s* (a type kept out of this
  // header).
  void FillLocation(void* entry, Place& place) const;
  void FillNetwork(void* entry, Place& place) const;

  const GeoRole role_;
  std::unique_ptr<MMDB_s> mmdb_;
  std::string description_;
};

// The GeoDb of one file in effect, replaceable at run time. Thread-safe.
class GeoDbHolder {
 public:
  // Opens `path` for `role` (errors as GeoDb::Open).
  static absl::StatusOr<std::unique_ptr<GeoDbHolder>> Open(const std::string& path, GeoRole role);

  // The database to use now; stays valid as long as the pointer is held,
  // even across a Reload.
  std::shared_ptr<const GeoDb> Current() const;

  // Opens the file again (an operator replaced it, e.g. the weekly
  // GeoLite2 update) for the same role and, if that works, makes it
  // current; on failure (including a file of the wrong kind) the old
  // database stays in effect and the error is returned. Replace the file by
  // moving a new one into place (mv, rename): the database in effect is
  // memory-mapped, and writing into its file changes it under the readers.
  absl::Status Reload();

  const std::string& path() const { return path_; }
  GeoRole role() const { return role_; }

 private:
  GeoDbHolder(std::string path, GeoRole role, std::shared_ptr<const GeoDb> db)
      : path_(std::move(path)), role_(role), current_(std::move(db)) {}

  const std::string path_;
  const GeoRole role_;
  mutable std::mutex mu_;
  std::shared_ptr<const GeoDb> current_;  // guarded by mu_
};

// The databases in effect at one moment (either may be absent). A plain
// value: copy it, keep it for a batch. Thread-safe.
class GeoSnapshot {
 public:
  GeoSnapshot() = default;
  GeoSnapshot(std::shared_ptr<const GeoDb> location, std::shared_ptr<const GeoDb> network)
      : location_(std::move(location)), network_(std::move(network)) {}

  // Where `ip` is (IPv4 or IPv6 text, as the edge reports it; IPv4-mapped
  // IPv6 is looked up as IPv4): each database fills its fields. An empty
  // Place when `ip` is not a literal address (names, ports, brackets, zone
  // ids: never resolved, no DNS) or is in neither database.
  Place PlaceOf(absl::string_view ip) const;

  // Whether there is any database to look in.
  bool empty() const { return location_ == nullptr && network_ == nullptr; }

 private:
  std::shared_ptr<const GeoDb> location_;
  std::shared_ptr<const GeoDb> network_;
};

// A service's GeoIP databases: a location one, a network one, either, both
// (nullptr: none of that role). Thread-safe.
class GeoLocator {
 public:
  GeoLocator(std::unique_ptr<GeoDbHolder> location, std::unique_ptr<GeoDbHolder> network)
      : location_(std::move(location)), network_(std::move(network)) {}

  // The databases in effect now.
  GeoSnapshot Current() const;

  // The holders, to reload them; null when the service has none of that role.
  GeoDbHolder* location() const { return location_.get(); }
  GeoDbHolder* network() const { return network_.get(); }

 private:
  const std::unique_ptr<GeoDbHolder> location_;
  const std::unique_ptr<GeoDbHolder> network_;
};

}  // namespace shortener::geoip

#endif  // SHORTENER_LIB_GEOIP_GEO_DB_H_
