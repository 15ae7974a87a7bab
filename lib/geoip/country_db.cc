#include "lib/geoip/country_db.h"

#include <maxminddb.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace shortener::geoip {
namespace {

// The ISO code at `path` ("country" or "registered_country", then
// "iso_code") of `entry`; empty when absent or not two ASCII letters.
std::string IsoCodeAt(MMDB_entry_s* entry, const char* record) {
  MMDB_entry_data_s data;
  if (MMDB_get_value(entry, &data, record, "iso_code", nullptr) != MMDB_SUCCESS || !data.has_data ||
      data.type != MMDB_DATA_TYPE_UTF8_STRING || data.data_size != 2) {
    return "";
  }
  std::string code(data.utf8_string, data.data_size);
  if (!absl::ascii_isalpha(static_cast<unsigned char>(code[0])) ||
      !absl::ascii_isalpha(static_cast<unsigned char>(code[1]))) {
    return "";  // not a code we would store
  }
  absl::AsciiStrToUpper(&code);
  return code;
}

}  // namespace

CountryDb::CountryDb() : mmdb_(std::make_unique<MMDB_s>()) {}

CountryDb::~CountryDb() { MMDB_close(mmdb_.get()); }

absl::StatusOr<std::unique_ptr<CountryDb>> CountryDb::Open(const std::string& path) {
  std::unique_ptr<CountryDb> db(new CountryDb());
  errno = 0;
  const int status = MMDB_open(path.c_str(), MMDB_MODE_MMAP, db->mmdb_.get());
  if (status == MMDB_FILE_OPEN_ERROR || status == MMDB_IO_ERROR) {
    const int err = errno;
    // MMDB_open freed what it allocated but left the pointers behind: a
    // zeroed struct is what the destructor's MMDB_close can take.
    db->mmdb_.reset(new MMDB_s());
    std::string why = MMDB_strerror(status);
    if (err != 0) absl::StrAppend(&why, " (", std::strerror(err), ")");
    return absl::NotFoundError(absl::StrCat("geoip database ", path, ": ", why));
  }
  if (status != MMDB_SUCCESS) {
    db->mmdb_.reset(new MMDB_s());  // as above
    return absl::InvalidArgumentError(absl::StrCat(
        "geoip database ", path, ": not a usable MaxMind DB file (", MMDB_strerror(status), ")"));
  }
  const MMDB_s& m = *db->mmdb_;
  db->description_ = absl::StrCat(
      m.metadata.database_type != nullptr ? m.metadata.database_type : "unnamed database",
      " built ",
      absl::FormatTime("%Y-%m-%d",
                       absl::FromUnixSeconds(static_cast<int64_t>(m.metadata.build_epoch)),
                       absl::UTCTimeZone()));
  return db;
}

std::string CountryDb::CountryOf(absl::string_view ip) const {
  // A literal address is at most 45 characters (IPv4-mapped IPv6); anything
  // longer is not one, and getaddrinfo below must never see a name.
  if (ip.empty() || ip.size() > 45 || ip.find('\0') != absl::string_view::npos) return "";
  const std::string text(ip);  // MMDB wants a NUL-terminated string
  int gai_error = 0, mmdb_error = 0;
  // MMDB_lookup_string resolves with AI_NUMERICHOST: no DNS, ever.
  MMDB_lookup_result_s result =
      MMDB_lookup_string(mmdb_.get(), text.c_str(), &gai_error, &mmdb_error);
  if (gai_error != 0 || mmdb_error != MMDB_SUCCESS || !result.found_entry) return "";
  std::string code = IsoCodeAt(&result.entry, "country");
  if (code.empty()) code = IsoCodeAt(&result.entry, "registered_country");
  return code;
}

absl::StatusOr<std::unique_ptr<CountryDbHolder>> CountryDbHolder::Open(const std::string& path) {
  absl::StatusOr<std::unique_ptr<CountryDb>> db = CountryDb::Open(path);
  if (!db.ok()) return db.status();
  return std::unique_ptr<CountryDbHolder>(
      new CountryDbHolder(path, std::shared_ptr<const CountryDb>(*std::move(db))));
}

std::shared_ptr<const CountryDb> CountryDbHolder::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

absl::Status CountryDbHolder::Reload() {
  // Opened outside the lock: lookups go on with the old file meanwhile.
  absl::StatusOr<std::unique_ptr<CountryDb>> db = CountryDb::Open(path_);
  if (!db.ok()) return db.status();
  std::shared_ptr<const CountryDb> fresh(*std::move(db));
  std::lock_guard<std::mutex> lock(mu_);
  current_ = std::move(fresh);
  return absl::OkStatus();
}

}  // namespace shortener::geoip
