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
  if (range.granularity == StatsGranularity::kHour) {
    const absl::Duration day = absl::Hours(24);
    const absl::Time oldest =
        absl::UnixEpoch() + absl::Floor(now - absl::UnixEpoch(), day) - kHourlyStatsDays * day;
    if (range.start < oldest) {
      return absl::InvalidArgumentError(
          absl::StrCat("start_time: statistics by hour go back to ",
                       absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", oldest, absl::UTCTimeZone()), " (",
                       kHourlyStatsDays, " days); ask by day for older ones"));
    }
  }
  return range;
}

int64_t BucketRange::IndexOf(absl::Time t) const {
  if (t < first || t >= end) return -1;
  return (t - first) / step;
}

std::vector<StatsBucket> BucketRange::ZeroBuckets() const {
  std::vector<StatsBucket> buckets;
  buckets.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) buckets.push_back(StatsBucket{first + i * step});
  return buckets;
}

absl::StatusOr<BucketRange> BucketRangeOf(absl::Time start, absl::Time end,
                                          StatsGranularity granularity) {
  if (end < start) return absl::InvalidArgumentError("end_time: before start_time");
  const bool hourly = granularity == StatsGranularity::kHour;
  const absl::Duration step = hourly ? absl::Hours(1) : absl::Hours(24);
  // Floors since the epoch: UTC boundaries, also before 1970.
  const absl::Time first = absl::UnixEpoch() + absl::Floor(start - absl::UnixEpoch(), step);
  absl::Time last = absl::UnixEpoch() + absl::Floor(end - absl::UnixEpoch(), step);
  if (last < end) last += step;
  const int64_t count = (last - first) / step;
  const int64_t max = hourly ? kMaxHourBuckets : kMaxDayBuckets;
  if (count > max) {
    return absl::InvalidArgumentError(absl::StrCat(
        "granularity: at most ", max, hourly ? " hourly" : " daily", " buckets, got ", count));
  }
  BucketRange range;
  range.first = first;
  range.end = last;
  range.step = step;
  range.count = count;
  return range;
}

}  // namespace shortener::clicks
