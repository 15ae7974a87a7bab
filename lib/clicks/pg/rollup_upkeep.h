// The upkeep of the click rollups (lib/clicks/rollups.h) that shorten-service
// runs in the background (services/shorten/service_parts.cc):
//  - the merge, every --rollup_merge_interval (5 s): the rows batches append to
//    click_rollup_pending are added into the hourly rollups, in chunks, so
//    that what a read adds up stays a few seconds of batches;
//  - the fold, daily: hours older than the hourly retention are folded into
//    daily rollups (a 35-day window of hours stays, the longest hourly read
//    being 31 days). The day is read from the Clock it is given.
// Reads are right whenever these run (they add pending rows, and daily ones
// at day granularity): they bound the work of a read and the storage.
//
// Thread safety: as PgClickStore; runs of several replicas may overlap (one
// at a time does the work: a merge that finds the rollup lock taken skips,
// a fold waits for it, then finds nothing left if another replica folded).
#ifndef SHORTENER_LIB_CLICKS_PG_ROLLUP_UPKEEP_H_
#define SHORTENER_LIB_CLICKS_PG_ROLLUP_UPKEEP_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/clicks/pg/pg_click_store.h"
#include "lib/common/clock.h"

namespace shortener::clicks {

// Days of hourly rollups kept before the current UTC day, after which the
// fold makes them daily. One more than kHourlyStatsDays (click_stats.h), the
// range LinkStats serves hourly statistics for, so that replicas whose
// clocks disagree a little never fold an hour a reader may still ask for.
inline constexpr int kHourlyRollupDays = 36;

struct RollupMergeOptions {
  // Pending rows (one per link and hour of a batch) per merge transaction.
  // Default 20 000 (tens of milliseconds).
  int64_t chunk_rows = 20000;
  // Transactions per run at most, so that a run after an outage ends and
  // the next one continues. Default 50.
  int max_chunks = 50;
};

// What one merge run did; a failure is also logged as a warning, at most
// once a minute (the next run, a second later, tries again).
struct RollupMerge {
  absl::Status status;
  int64_t rows = 0;   // pending rows merged
  bool busy = false;  // another replica held the rollup lock
};

// Merges pending rows until none are left, max_chunks were done, or another
// replica holds the lock. (A run after an outage's backlog ends after
// max_chunks; the next, a second later, goes on.)
RollupMerge MergeRollups(PgClickStore& store, const RollupMergeOptions& options = {});

// Folds every day before the current UTC day minus kHourlyRollupDays
// (clock.Now()) into daily rollups. Returns the days folded; failures are
// also logged as warnings.
absl::StatusOr<std::vector<absl::Time>> FoldRollups(PgClickStore& store, const Clock& clock);

// The fold's cutoff at `now`: the start of the UTC day kHourlyRollupDays
// before the day of `now`.
absl::Time RollupFoldCutoff(absl::Time now);

}  // namespace shortener::clicks

#endif  // SHORTENER_LIB_CLICKS_PG_ROLLUP_UPKEEP_H_
