// Pure logic of click statistics, between the RecordClicks RPC and the click
// store: what a click becomes before it is written (ClickRow), IP
// anonymisation, the client id, the referrer host, hour buckets, and the
// per-batch grouping of clicks into hourly counts. No I/O, no clock.
//
// Thread safety: stateless functions; ClickRow is a plain value.
#ifndef SHORTENER_LIB_CLICKS_CLICKS_H_
#define SHORTENER_LIB_CLICKS_CLICKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "lib/useragent/user_agent.h"

namespace shortener::clicks {

// One click as the store writes it: the count key (link_id, hour of time,
// bot) and the visit's fields, already derived (client id, anonymised IP,
// classified User-Agent). An empty ip, referrer_host, country, region, city
// or network is stored as NULL.
struct ClickRow {
  int64_t link_id = 0;
  absl::Time time;
  bool bot = false;
  std::string client_id;      // ClientId(full ip, user agent)
  std::string ip;             // AnonymizeIp or CanonicalIp; empty: unknown
  std::string browser;        // "Chrome", "Other", ...
  int browser_major = 0;      // 0: unknown
  std::string os;             // "Android", "Other", ...
  std::string os_version;     // empty: unknown
  std::string device;         // "desktop", "mobile", "tablet" or "bot"
  std::string referrer_host;  // ReferrerHost(referer); empty: none
  // Where the client was, from the GeoIP databases (lib/geoip/geo_db.h,
  // Place: the forms of the values are its rules); empty: unknown.
  std::string country;  // ISO 3166-1 alpha-2: "US"
  std::string region;   // ISO 3166-2: "US-CA" (a City database)
  std::string city;     // "Springfield (US-IL)" (a City database)
  std::string network;  // "AS15169 Google LLC" (an ASN database)
};

// The canonical text form of an IPv4 or IPv6 address ("192.0.2.7",
// "2001:db8::1"); an IPv4-mapped IPv6 address becomes its IPv4 form. Empty
// for anything that is not a literal address (names, ports, brackets, zone
// ids, garbage).
std::string CanonicalIp(absl::string_view ip);

// CanonicalIp with the host part removed: IPv4 keeps its first three octets
// (last one zeroed, "192.0.2.0"), IPv6 its first 48 bits ("2001:db8:1::").
// Empty for an invalid address.
std::string AnonymizeIp(absl::string_view ip);

// Lower-case hex of the first 16 bytes of SHA-256(ip + "\n" + user_agent)
// (32 characters). Computed from the full IP as received, before
// anonymisation, so that two clients behind one /24 stay apart.
std::string ClientId(absl::string_view ip, absl::string_view user_agent);

// The host of a Referer URL ("https://User@Example.COM:8443/x" ->
// "example.com"): the URL must start with scheme "://"; userinfo and port are
// dropped, letters lower-cased; an IPv6 literal keeps its brackets. Empty for
// an empty, relative or malformed referer or an implausible host.
std::string ReferrerHost(absl::string_view referer);

// `t` rounded down to the start of its hour (UTC; hours are the same in
// every zone with whole-hour offsets, and counts are kept in UTC).
absl::Time TruncateToHour(absl::Time t);

// The first instant of the UTC month `t` falls in.
absl::Time MonthStart(absl::Time t);

// The visits.device value of a device type: "desktop", "mobile", "tablet",
// "bot" (the words of the table's CHECK constraint).
std::string DeviceColumn(useragent::DeviceType device);

// One click as the RecordClicks RPC delivers it, once its code is resolved.
struct ClickEvent {
  int64_t link_id = 0;
  absl::Time time;
  absl::string_view client_ip;  // as the edge saw it; may be empty or garbage
  absl::string_view user_agent;
  absl::string_view referer;
};

// The row to store for `event`, whose User-Agent classified as `client`: the
// client id from the full IP, the IP anonymised unless `keep_full_ip`, the
// referrer host. No country (that needs a GeoIP lookup).
ClickRow MakeClickRow(const ClickEvent& event, const useragent::ClientInfo& client,
                      bool keep_full_ip);

// One row of click_counts.
struct HourlyCount {
  int64_t link_id = 0;
  absl::Time hour;
  bool bot = false;
  int64_t count = 0;

  friend bool operator==(const HourlyCount& a, const HourlyCount& b) {
    return a.link_id == b.link_id && a.hour == b.hour && a.bot == b.bot && a.count == b.count;
  }
};

// Groups a batch into one count per (link_id, hour, bot), sorted by that key:
// one upsert row per key (an upsert may not touch one row twice), and the
// same lock order in every transaction, so concurrent batches that share keys
// wait for each other instead of deadlocking.
std::vector<HourlyCount> GroupHourly(absl::Span<const ClickRow> rows);
// The GroupHourly of several batches written together summed into one count
// per key of all their rows, sorted the same way: what PgClickStore's group
// commit writes, from batches grouped on their callers' threads.
std::vector<HourlyCount> SumHourlyCounts(absl::Span<const std::vector<HourlyCount>* const> batches);

}  // namespace shortener::clicks

#endif  // SHORTENER_LIB_CLICKS_CLICKS_H_
