// Click statistics of one link over a time range, as a click store reads
// them (ClickStore::Stats, lib/clicks/click_store.h) and GetClickStats
// reports them: plain data, the defaults of a request's range, and how a
// range is cut into buckets (the one rule every ClickStore follows). No I/O,
// no clock.
//
// Thread safety: stateless functions and plain values.
#ifndef SHORTENER_LIB_CLICKS_CLICK_STATS_H_
#define SHORTENER_LIB_CLICKS_CLICK_STATS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace shortener::clicks {

// How statistics cut a range into buckets (UTC).
enum class StatsGranularity { kHour, kDay };

// One bucket of ClickStats: [start, start + one hour or day).
struct StatsBucket {
  absl::Time start;
  int64_t human_clicks = 0;
  int64_t bot_clicks = 0;
  // Distinct client ids among the bucket's human clicks (an estimate from
  // PgClickStore: ClickStore::Stats).
  int64_t unique_visitors = 0;
};

// One entry of a top list: a value and its human clicks.
struct CountedValue {
  std::string value;
  int64_t clicks = 0;
};

// What Stats returns, all of it from the click rollups (lib/clicks/rollups.h),
// whether visits are recorded or not.
struct ClickStats {
  // Every bucket of the range, oldest first, zeros included.
  std::vector<StatsBucket> buckets;
  int64_t total_human_clicks = 0;
  int64_t total_bot_clicks = 0;
  // Distinct client ids over the whole range (not a sum of the buckets').
  int64_t total_unique_visitors = 0;
  // Human clicks per value, most first, ties by value
  // (in byte order; PgClickStore in the database's collation, the same for
  // a C or C.UTF-8 database), at most kMaxTopEntries each; empty values are
  // left out.
  std::vector<CountedValue> top_browsers, top_os, top_devices, top_countries, top_referrers;
  // The same for region, city and network (lib/geoip/geo_db.h's forms:
  // "US-CA", "Springfield (US-IL)", "AS15169 Google LLC"); empty without a
  // City or ASN database.
  std::vector<CountedValue> top_regions, top_cities, top_networks;
};

// The range and granularity of a statistics request, defaults applied.
struct StatsRange {
  absl::Time start;
  absl::Time end;
  StatsGranularity granularity = StatsGranularity::kDay;
};

// Days back from the current UTC day for which statistics by HOUR are
// served: the hourly rollups of older days are folded into daily ones
// (lib/clicks/pg/rollup_upkeep.h keeps a day more).
inline constexpr int kHourlyStatsDays = 35;

// Applies GetClickStats' defaults (granularity DAY; end `now`; start 7 days
// before end for DAY, 24 hours for HOUR) and checks what is given:
// INVALID_ARGUMENT naming the field when start is not before end, or, for
// HOUR, when start is before the UTC day kHourlyStatsDays before `now`'s
// ("start_time: statistics by hour go back to 2030-01-01T00:00:00Z (35
// days); ask by day for older ones"). (The bucket limit is BucketRangeOf's,
// which the store applies to the widened buckets.)
absl::StatusOr<StatsRange> ResolveStatsRange(std::optional<absl::Time> start,
                                             std::optional<absl::Time> end,
                                             std::optional<StatsGranularity> granularity,
                                             absl::Time now);

// Entries per top list of ClickStats at most.
inline constexpr int kMaxTopEntries = 10;
// Buckets one statistics read may cover: 31 days of hours, 3 years of days.
inline constexpr int64_t kMaxHourBuckets = 31 * 24;
inline constexpr int64_t kMaxDayBuckets = 3 * 366;

// The buckets a statistics read covers: a range widened to whole UTC hours
// or days (Unix time has no leap seconds, so these are multiples of 3600 or
// 86400 seconds since the epoch).
struct BucketRange {
  absl::Time first;     // start of the first bucket
  absl::Time end;       // end of the last bucket (exclusive)
  absl::Duration step;  // one hour or one day
  int64_t count = 0;    // buckets in [first, end); 0 for an empty range

  // The position of the bucket holding `t`; -1 when `t` is outside
  // [first, end).
  int64_t IndexOf(absl::Time t) const;
  // The `count` buckets, oldest first, with their starts and zero counts.
  std::vector<StatsBucket> ZeroBuckets() const;
};

// [start, end) widened to whole buckets of `granularity`: start rounded
// down, end rounded up to a bucket boundary. INVALID_ARGUMENT for end
// before start ("end_time: before start_time") or more buckets than
// kMaxHourBuckets / kMaxDayBuckets ("granularity: at most 744 hourly
// buckets, got 745"). start == end gives no buckets.
absl::StatusOr<BucketRange> BucketRangeOf(absl::Time start, absl::Time end,
                                          StatsGranularity granularity);

}  // namespace shortener::clicks

#endif  // SHORTENER_LIB_CLICKS_CLICK_STATS_H_
