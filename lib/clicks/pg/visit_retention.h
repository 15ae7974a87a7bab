// The daily upkeep of the visits table (shorten-service runs it once a day,
// services/shorten/server.cc): next month's partition created ahead of time,
// so that its DDL, which briefly locks the visits table, never holds up the
// first batch of a month; and retention by whole UTC months
// (--visits_retention_months), dropping partitions. Click counts are never
// touched. The month is read from the Clock it is given.
//
// Thread safety: as PgClickStore; sweeps of several replicas may overlap
// (the partition functions serialise themselves in the database).
#ifndef SHORTENER_LIB_CLICKS_PG_VISIT_RETENTION_H_
#define SHORTENER_LIB_CLICKS_PG_VISIT_RETENTION_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/clicks/pg/pg_click_store.h"
#include "lib/common/clock.h"

namespace shortener::clicks {

struct VisitRetentionOptions {
  // Visits are being recorded (--record_visits): prepare next month's
  // partition. Default true.
  bool record_visits = true;
  // Whole months of visits kept before the current month; older partitions
  // are dropped. 0: keep everything. Default 0.
  int retention_months = 0;
};

// What one sweep did; every failure is also logged as a warning (the next
// sweep, a day later, tries again).
struct VisitSweep {
  // Next month's partition: OK when prepared or when not asked for.
  absl::Status prepared;
  // Names of the partitions dropped, oldest first (none without retention).
  absl::StatusOr<std::vector<std::string>> dropped = std::vector<std::string>{};
};

// One sweep at clock.Now(): with record_visits, creates the partition of
// the UTC month after the current one (PgClickStore::PrepareVisitPartition);
// with retention_months = N > 0, drops every partition of a month before
// the N months that precede the current one (at 2030-03-15, N = 1 keeps
// February and March and drops January and older).
VisitSweep SweepVisits(PgClickStore& store, const Clock& clock,
                       const VisitRetentionOptions& options);

}  // namespace shortener::clicks

#endif  // SHORTENER_LIB_CLICKS_PG_VISIT_RETENTION_H_
