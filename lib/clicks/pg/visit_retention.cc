#include "lib/clicks/pg/visit_retention.h"

#include "absl/strings/str_join.h"
#include "absl/time/civil_time.h"
#include "lib/common/log.h"

namespace shortener::clicks {

VisitSweep SweepVisits(PgClickStore& store, const Clock& clock,
                       const VisitRetentionOptions& options) {
  const absl::TimeZone utc = absl::UTCTimeZone();
  const absl::CivilMonth this_month = absl::ToCivilMonth(clock.Now(), utc);
  VisitSweep sweep;
  if (options.record_visits) {
    sweep.prepared = store.PrepareVisitPartition(absl::FromCivil(this_month + 1, utc));
    if (!sweep.prepared.ok()) {
      LogWarning("visits partition for next month: %s (next try in a day)",
                 sweep.prepared.ToString());
    }
  }
  if (options.retention_months <= 0) return sweep;
  // Keeps the current month and the `retention_months` before it.
  sweep.dropped = store.DropVisitPartitionsOlderThan(
      absl::FromCivil(this_month - options.retention_months, utc));
  if (!sweep.dropped.ok()) {
    LogWarning("visits retention: %s (next try in a day)", sweep.dropped.status().ToString());
  } else if (!sweep.dropped->empty()) {
    LogInfo("visits retention: dropped %s", absl::StrJoin(*sweep.dropped, ", "));
  }
  return sweep;
}

}  // namespace shortener::clicks
