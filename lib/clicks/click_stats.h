// Click statistics of one link over a time range, as the click store reads
// them (PgClickStore::Stats) and GetClickStats reports them. Plain data.
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
  // Distinct client ids among the bucket's human visits.
  int64_t unique_visitors = 0;
};

// One entry of a top list: a value and its human clicks.
struct CountedValue {
  std::string value;
  int64_t clicks = 0;
};

// What Stats returns. Counts come from click_counts; uniques and the top
// lists from visits, so they are zero / empty when visits are not recorded.
struct ClickStats {
  // Every bucket of the range, oldest first, zeros included.
  std::vector<StatsBucket> buckets;
  int64_t total_human_clicks = 0;
  int64_t total_bot_clicks = 0;
  // Distinct client ids over the whole range (not a sum of the buckets').
  int64_t total_unique_visitors = 0;
  // Human clicks per value, most first (ties by value), at most
  // PgClickStore::kMaxTop each; empty values are left out.
  std::vector<CountedValue> top_browsers, top_os, top_devices, top_countries, top_referrers;
};

// The range and granularity of a statistics request, defaults applied.
struct StatsRange {
  absl::Time start;
  absl::Time end;
  StatsGranularity granularity = StatsGranularity::kDay;
};

// Applies GetClickStats' defaults (granularity DAY; end `now`; start 7 days
// before end for DAY, 24 hours for HOUR) and checks what is given:
// INVALID_ARGUMENT naming the field when start is not before end. (The
// bucket limit is the store's: it counts the widened buckets.)
absl::StatusOr<StatsRange> ResolveStatsRange(std::optional<absl::Time> start,
                                             std::optional<absl::Time> end,
                                             std::optional<StatsGranularity> granularity,
                                             absl::Time now);

// What GetClickStats and GetLink read: implemented by PgClickStore, faked
// in tests of the service logic. Both calls block (a database read).
class ClickStatsReader {
 public:
  virtual ~ClickStatsReader() = default;
  // Statistics of `link_id` over [start, end), widened to whole UTC buckets.
  // INVALID_ARGUMENT for end before start or too many buckets.
  virtual absl::StatusOr<ClickStats> Stats(int64_t link_id, absl::Time start, absl::Time end,
                                           StatsGranularity granularity) = 0;
  // Human clicks of `link_id` ever counted.
  virtual absl::StatusOr<int64_t> HumanTotal(int64_t link_id) = 0;
};

}  // namespace shortener::clicks

#endif  // SHORTENER_LIB_CLICKS_CLICK_STATS_H_
