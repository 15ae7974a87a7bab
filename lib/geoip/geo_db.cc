#include "lib/geoip/geo_db.h"

#include <maxminddb.h>
#include <netdb.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "lib/common/utf8.h"

namespace shortener::geoip {
namespace {

// The UTF-8 string at the path of `entry` (NULL-terminated, as
// MMDB_aget_value takes it); empty when absent or not a string.
absl::string_view StringAt(MMDB_entry_s* entry, const char* const* path) {
  MMDB_entry_data_s data;
  if (MMDB_aget_value(entry, &data, path) != MMDB_SUCCESS || !data.has_data ||
      data.type != MMDB_DATA_TYPE_UTF8_STRING) {
    return {};
  }
  return absl::string_view(data.utf8_string, data.data_size);
}

// `code` upper-cased when it is `min`..`max` ASCII letters or digits (letters
// only with `letters_only`); empty otherwise: not a code we would store.
std::string CodeOf(absl::string_view code, size_t min, size_t max, bool letters_only) {
  if (code.size() < min || code.size() > max) return "";
  for (char c : code) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (!(absl::ascii_isalpha(u) || (!letters_only && absl::ascii_isdigit(u)))) return "";
  }
  return absl::AsciiStrToUpper(code);
}

// The ISO 3166-1 alpha-2 code of `record` ("country" or
// "registered_country") of `entry`, upper case; empty when absent or not
// two ASCII letters.
std::string CountryCodeAt(MMDB_entry_s* entry, const char* record) {
  const char* const path[] = {record, "iso_code", nullptr};
  return CodeOf(StringAt(entry, path), 2, 2, /*letters_only=*/true);
}

// A name from a database as a value may hold it: surrounding blanks off,
// clean text, at most kMaxNameBytes.
std::string CleanName(absl::string_view raw) {
  return utf8::Sanitize(absl::StripAsciiWhitespace(raw), kMaxNameBytes);
}

// The words of a database_type, lower case: "GeoLite2-City" -> geolite2, city.
std::vector<std::string> TypeWords(absl::string_view type) {
  std::vector<std::string> words;
  for (absl::string_view w :
       absl::StrSplit(type, absl::ByAnyChar(" -_.()=,/"), absl::SkipEmpty())) {
    words.push_back(absl::AsciiStrToLower(w));
  }
  return words;
}

bool Names(absl::string_view type, std::initializer_list<absl::string_view> wanted) {
  for (const std::string& word : TypeWords(type)) {
    for (absl::string_view w : wanted) {
      if (word == w) return true;
    }
  }
  return false;
}

// Empty if a database of `type` serves `role`; otherwise why not.
std::string RoleProblem(absl::string_view type, GeoRole role) {
  switch (role) {
    case GeoRole::kLocation:
      if (Names(type, {"country", "city", "enterprise"})) return "";
      return "its type must name Country, City or Enterprise";
    case GeoRole::kNetwork:
      if (Names(type, {"asn", "isp"})) return "";
      return "its type must name ASN or ISP";
  }
  return "unknown role";
}

}  // namespace

absl::string_view GeoRoleName(GeoRole role) {
  return role == GeoRole::kLocation ? "country or city" : "ASN";
}

GeoDb::GeoDb(GeoRole role) : role_(role), mmdb_(std::make_unique<MMDB_s>()) {}

GeoDb::~GeoDb() { MMDB_close(mmdb_.get()); }

absl::StatusOr<std::unique_ptr<GeoDb>> GeoDb::Open(const std::string& path, GeoRole role) {
  std::unique_ptr<GeoDb> db(new GeoDb(role));
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
  const std::string type = utf8::Sanitize(
      m.metadata.database_type != nullptr ? m.metadata.database_type : "", kMaxNameBytes);
  if (std::string problem = RoleProblem(type, role); !problem.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "geoip database ", path, " is a ", type.empty() ? "unnamed" : type, " database, not ",
        role == GeoRole::kLocation ? "a " : "an ", GeoRoleName(role), " database (", problem, ")"));
  }
  db->description_ = absl::StrCat(
      type, " built ",
      absl::FormatTime("%Y-%m-%d",
                       absl::FromUnixSeconds(static_cast<int64_t>(m.metadata.build_epoch)),
                       absl::UTCTimeZone()));
  return db;
}

void GeoDb::Fill(const sockaddr& address, Place& place) const {
  int mmdb_error = 0;
  MMDB_lookup_result_s result = MMDB_lookup_sockaddr(mmdb_.get(), &address, &mmdb_error);
  if (mmdb_error != MMDB_SUCCESS || !result.found_entry) return;
  if (role_ == GeoRole::kLocation) {
    FillLocation(&result.entry, place);
  } else {
    FillNetwork(&result.entry, place);
  }
}

void GeoDb::FillLocation(void* opaque, Place& place) const {
  MMDB_entry_s* entry = static_cast<MMDB_entry_s*>(opaque);
  const std::string own_country = CountryCodeAt(entry, "country");
  place.country = own_country.empty() ? CountryCodeAt(entry, "registered_country") : own_country;
  if (own_country.empty()) return;  // region and city belong to a country of the record
  // ISO 3166-2 subdivision codes are 1 to 3 letters or digits.
  const char* const subdivision[] = {"subdivisions", "0", "iso_code", nullptr};
  const std::string code = CodeOf(StringAt(entry, subdivision), 1, 3, /*letters_only=*/false);
  place.region = code.empty() ? "" : absl::StrCat(own_country, "-", code);
  const char* const city[] = {"city", "names", "en", nullptr};
  const std::string name = CleanName(StringAt(entry, city));
  place.city = name.empty() ? ""
                            : absl::StrCat(name, " (",
                                           place.region.empty() ? own_country : place.region, ")");
}

void GeoDb::FillNetwork(void* opaque, Place& place) const {
  MMDB_entry_s* entry = static_cast<MMDB_entry_s*>(opaque);
  MMDB_entry_data_s data;
  const char* const number_path[] = {"autonomous_system_number", nullptr};
  if (MMDB_aget_value(entry, &data, number_path) != MMDB_SUCCESS || !data.has_data) return;
  uint64_t number = 0;
  switch (data.type) {
    case MMDB_DATA_TYPE_UINT16:
      number = data.uint16;
      break;
    case MMDB_DATA_TYPE_UINT32:
      number = data.uint32;
      break;
    case MMDB_DATA_TYPE_UINT64:
      number = data.uint64;
      break;
    default:
      return;
  }
  if (number == 0 || number > 0xFFFFFFFFu) return;  // AS numbers are 32 bits; 0 is reserved
  const char* const organisation[] = {"autonomous_system_organization", nullptr};
  const std::string name = CleanName(StringAt(entry, organisation));
  place.network = name.empty() ? absl::StrCat("AS", number) : absl::StrCat("AS", number, " ", name);
}

absl::StatusOr<std::unique_ptr<GeoDbHolder>> GeoDbHolder::Open(const std::string& path,
                                                               GeoRole role) {
  absl::StatusOr<std::unique_ptr<GeoDb>> db = GeoDb::Open(path, role);
  if (!db.ok()) return db.status();
  return std::unique_ptr<GeoDbHolder>(
      new GeoDbHolder(path, role, std::shared_ptr<const GeoDb>(*std::move(db))));
}

std::shared_ptr<const GeoDb> GeoDbHolder::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

absl::Status GeoDbHolder::Reload() {
  // Opened outside the lock: lookups go on with the old file meanwhile.
  absl::StatusOr<std::unique_ptr<GeoDb>> db = GeoDb::Open(path_, role_);
  if (!db.ok()) return db.status();
  std::shared_ptr<const GeoDb> fresh(*std::move(db));
  std::lock_guard<std::mutex> lock(mu_);
  current_ = std::move(fresh);
  return absl::OkStatus();
}

Place GeoSnapshot::PlaceOf(absl::string_view ip) const {
  Place place;
  // A literal address is at most 45 characters (IPv4-mapped IPv6); anything
  // longer is not one, and getaddrinfo below must never see a name.
  if (empty() || ip.empty() || ip.size() > 45 || ip.find('\0') != absl::string_view::npos) {
    return place;
  }
  const std::string text(ip);  // getaddrinfo wants a NUL-terminated string
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_flags = AI_NUMERICHOST;  // no DNS, ever (as MMDB_lookup_string)
  addrinfo* addresses = nullptr;
  if (getaddrinfo(text.c_str(), nullptr, &hints, &addresses) != 0 || addresses == nullptr) {
    return place;
  }
  // One parse for both databases.
  if (location_ != nullptr) location_->Fill(*addresses->ai_addr, place);
  if (network_ != nullptr) network_->Fill(*addresses->ai_addr, place);
  freeaddrinfo(addresses);
  return place;
}

GeoSnapshot GeoLocator::Current() const {
  return GeoSnapshot(location_ != nullptr ? location_->Current() : nullptr,
                     network_ != nullptr ? network_->Current() : nullptr);
}

}  // namespace shortener::geoip
