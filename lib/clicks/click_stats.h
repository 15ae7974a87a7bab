// Click statistics of one link over a time range, as the click store reads
// them (PgClickStore::Stats) and GetClickStats reports them. Plain data.
#ifndef SHORTENER_LIB_CLICKS_CLICK_STATS_H_
#define SHORTENER_LIB_CLICKS_CLICK_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

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

}  // namespace shortener::clicks

#endif  // SHORTENER_LIB_CLICKS_CLICK_STATS_H_
