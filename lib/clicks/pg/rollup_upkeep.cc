#include "lib/clicks/pg/rollup_upkeep.h"

#include <string>

#include "absl/strings/str_join.h"
#include "lib/common/log.h"

namespace shortener::clicks {

RollupMerge MergeRollups(PgClickStore& store, const RollupMergeOptions& options) {
  RollupMerge merge;
  for (int chunk = 0; chunk < options.max_chunks; ++chunk) {
    absl::StatusOr<int64_t> moved = store.MergePendingRollups(options.chunk_rows);
    if (!moved.ok()) {
      merge.status = moved.status();
      LogWarning("click rollups merge: %s (next try in a second)", merge.status.ToString());
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
