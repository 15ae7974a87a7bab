#include "lib/clicks/click_stats.h"

#include "absl/strings/str_cat.h"

namespace shortener::clicks {

absl::StatusOr<StatsRange> ResolveStatsRange(std::optional<absl::Time> start,
                                             std::optional<absl::Time> end,
                                             std::optional<StatsGranularity> granularity,
                                             absl::Time now) {
  StatsRange range;
  range.granularity = granularity.value_or(StatsGranularity::kDay);
  range.end = end.value_or(now);
  // A default window that shows something useful at either granularity: a
  // week of days, a day of hours.
  const absl::Duration window =
      range.granularity == StatsGranularity::kHour ? absl::Hours(24) : absl::Hours(24 * 7);
  range.start = start.value_or(range.end - window);
  if (range.start >= range.end) {
    return absl::InvalidArgumentError(absl::StrCat(
        "start_time: must be before end_time (start_time ", absl::FormatTime(range.start),
        ", end_time ", absl::FormatTime(range.end), end.has_value() ? "" : " (now)", ")"));
  }
  return range;
}

}  // namespace shortener::clicks
