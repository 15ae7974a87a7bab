#include "lib/clicks/pg/rollup_upkeep.h"

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "lib/common/log.h"

namespace shortener::clicks {

RollupMerge MergeRollups(PgClickStore& store, const RollupMergeOptions& options) {
  RollupMerge merge;
  for (int chunk = 0; chunk < options.max_chunks; ++chunk) {
    absl::StatusOr<int64_t> moved = store.MergePendingRollups(options.chunk_rows);
    if (!moved.ok()) {
      merge.status = moved.status();
      // Once a minute at most: during a database outage every run fails.
      static std::atomic<int64_t> last_warning{0};
      const int64_t now = absl::ToUnixSeconds(absl::Now());
      int64_t last = last_warning.load();
      if (now - last >= 60 && last_warning.compare_exchange_strong(last, now)) {
        LogWarning(
            "click rollups merge: %s (retried every --rollup_merge_interval; logged once a minute)",
            merge.status.ToString());
      }
      return merge;
    }
    if (*moved < 0) {
      merge.busy = true;
      return merge;
    }
    merge.rows += *moved;
    if (*moved < options.chunk_rows) break;
  }
  return merge;
}

absl::Time RollupFoldCutoff(absl::Time now) {
  const absl::Duration day = absl::Hours(24);
  return absl::UnixEpoch() + absl::Floor(now - absl::UnixEpoch(), day) - kHourlyRollupDays * day;
}

absl::StatusOr<std::vector<absl::Time>> FoldRollups(PgClickStore& store, const Clock& clock) {
  absl::StatusOr<std::vector<absl::Time>> folded =
      store.FoldHourlyRollupsBefore(RollupFoldCutoff(clock.Now()));
  if (!folded.ok()) {
    LogWarning("click rollups fold: %s (next try in a day)", folded.status().ToString());
  } else if (!folded->empty()) {
    LogInfo("click rollups: folded the hours of %s into days",
            absl::StrJoin(*folded, ", ", [](std::string* out, absl::Time t) {
              out->append(absl::FormatTime("%Y-%m-%d", t, absl::UTCTimeZone()));
            }));
  }
  return folded;
}

}  // namespace shortener::clicks
