// PgClickStore: the ClickStore (lib/clicks/click_store.h) on PostgreSQL
// (schema in deploy/postgres/migrations/0004_clicks.sql), for any number of
// service replicas sharing one database. Besides the seam it has what only
// a database has: click budgets (links.max_clicks, shared with PgLinkStore)
// and visit partitions with their retention.
//
// Record writes one batch of clicks in one transaction with a constant
// number of statements: the batch id (a batch id recorded before makes the
// call a no-op, so the edge may retry freely), optionally one multi-row
// insert of its visits, one insert of its rollups (one pending row per
// subject and hour, lib/clicks/rollups.h), one upsert of its hourly counts
// (last: its row locks are what concurrent batches queue on), and the
// click-limit check. It returns only after the commit is flushed
// (synchronous_commit is forced on for the store's connections): an
// acknowledged batch survives a crash.
//
// Rollups: batches only append (click_rollup_pending), so they never wait
// for each other there. MergePendingRollups (every second, from any
// replica, one at a time) adds the pending rows into the hourly rollups and
// their sketches; FoldHourlyRollupsBefore (daily) folds old hours into
// days. Stats reads hourly, daily and pending rows in one snapshot, never
// visits, so what it answers does not depend on when merges run.
//
// Visits go into monthly partitions (visits_YYYY_MM, UTC) which the store
// creates when a batch first needs one (through the migration's
// create_visits_partition, serialised across replicas by an advisory lock)
// and then remembers for the life of the process. A partition dropped by
// another replica's retention sweep is noticed on insert and created again.
//
// Connections come from a lazy pool: Create does not connect, a database
// outage gives UNAVAILABLE, and the same store works again once the database
// is back.
//
// Thread-safe.
#ifndef SHORTENER_LIB_CLICKS_PG_PG_CLICK_STORE_H_
#define SHORTENER_LIB_CLICKS_PG_PG_CLICK_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <pqxx/pqxx>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "lib/clicks/click_stats.h"
#include "lib/clicks/click_store.h"
#include "lib/clicks/clicks.h"
#include "lib/clicks/rollups.h"
#include "lib/pg/connection_pool.h"

namespace shortener::clicks {

struct PgClickStoreOptions {
  // libpq connection string; may hold a password (never in a message).
  std::string conninfo;
  // Database connections at most. Default 4.
  int pool_size = 4;
  // How long a call waits for a free connection before UNAVAILABLE.
  // Default 5 s.
  absl::Duration acquire_timeout = absl::Seconds(5);
  // Record attempts when a transaction is chosen as a deadlock victim or
  // finds a visits partition dropped under it, before it gives up with
  // ABORTED. Default 3.
  int max_record_attempts = 3;
  // Click limits (links.max_clicks): when Record brings a link's human total
  // to its budget, it marks the link exhausted and NOTIFYs its code on this
  // channel, both in the batch's transaction, so every replica's listener
  // tells its edges to drop the link once (and only if) the count commits.
  // The channel of PgLinkStore's revocations. Must not be empty.
  std::string invalidation_channel = "shortener_invalidations";
  // The code edges know a link without an alias by (the codec's Encode of
  // its id). Required.
  std::function<absl::StatusOr<std::string>(int64_t id)> generated_code;
};

class PgClickStore final : public ClickStore {
 public:
  // INVALID_ARGUMENT for pool_size or max_record_attempts < 1, a
  // non-positive acquire_timeout, a malformed conninfo, an empty
  // invalidation_channel or no generated_code. Does not connect.
  static absl::StatusOr<std::unique_ptr<PgClickStore>> Create(PgClickStoreOptions options);

  // See ClickStore::Record. The batch id is stored in click_batches in the
  // transaction of the counts and visits, which is what makes a batch id
  // recorded before, by any replica, a duplicate.
  // Links with a click budget whose human total this batch brings to the
  // budget are marked exhausted and notified (see invalidation_channel) in
  // the same transaction; outcome.exhausted lists them. A link is marked by
  // exactly one batch, however many replicas record concurrently.
  // Errors: INVALID_ARGUMENT (batch_id empty, over 128 bytes or with a NUL
  // byte; a row's device not one of desktop, mobile, tablet, bot; a NUL byte
  // in a text field); UNAVAILABLE (database unreachable, or the connection
  // lost during the commit: the outcome is unknown, and sending the same
  // batch id again is always safe); ABORTED (max_record_attempts deadlocks);
  // DEADLINE_EXCEEDED (statement timeout); INTERNAL (anything else).
  absl::StatusOr<RecordOutcome> Record(const std::string& batch_id, absl::Span<const ClickRow> rows,
                                       bool record_visits) override;

  // Creates the visits partition of the UTC month `t` falls in, unless this
  // process knows it exists. Record does this by itself when a batch needs
  // it; calling it ahead (say, daily for next month) keeps the partition DDL,
  // which briefly locks the visits table, off the first batch of a month.
  // Errors as Record's.
  absl::Status PrepareVisitPartition(absl::Time t);

  // Retention: drops every visits partition whose month ends at or before
  // `cutoff` (so nothing at or after `cutoff` goes). Returns the names of the
  // partitions dropped, oldest first. Errors as Record's.
  absl::StatusOr<std::vector<std::string>> DropVisitPartitionsOlderThan(absl::Time cutoff);

  // See ClickStore::Stats. Two statements in one repeatable-read snapshot
  // over the rollups (hourly, daily for StatsGranularity::kDay, pending):
  // clicks and unique visitors per bucket and in total, then the top lists.
  // Unique visitors are HyperLogLog estimates (exact up to a few hundred
  // per sketch, then within kSketchStandardError). A day folded into a
  // daily rollup counts at kDay only: at kHour its hours are not known any
  // more and show as zeros (LinkStats refuses hourly ranges that old).
  // Errors: INVALID_ARGUMENT (BucketRangeOf's), and otherwise as Record's.
  absl::StatusOr<ClickStats> Stats(int64_t link_id, absl::Time start, absl::Time end,
                                   StatsGranularity granularity) override;

  // Moves up to `max_rows` of the oldest pending rollup rows into the
  // hourly rollups, in one transaction, keeping at most kMaxValuesPerHour
  // values per subject, hour and dimension (the rest into "other"). Returns
  // the rows moved: fewer than max_rows when no more were pending; -1 when
  // another replica's merge or fold holds the rollup lock (nothing done).
  // Errors as Record's.
  absl::StatusOr<int64_t> MergePendingRollups(int64_t max_rows);

  // Folds every UTC day that ends by `cutoff` out of the hourly rollups into
  // the daily ones, a day per transaction, oldest first (hourly rows of a
  // folded day that arrive later are folded into it by a later call).
  // Returns the days folded (their starts); stops early, returning what it
  // did, when another replica holds the rollup lock. Errors as Record's.
  absl::StatusOr<std::vector<absl::Time>> FoldHourlyRollupsBefore(absl::Time cutoff);

  // See ClickStore::HumanTotal (a sum over click_counts). Errors as
  // Record's.
  absl::StatusOr<int64_t> HumanTotal(int64_t link_id) override;

  // Its connection pool's use (metrics).
  pg::ConnectionPool::Stats pool_stats() const { return pool_.GetStats(); }

 private:
  explicit PgClickStore(PgClickStoreOptions options);

  absl::Time Deadline() const { return absl::Now() + options_.acquire_timeout; }
  // Stats of any subject (links today; labels next: docs/analytics.md).
  absl::StatusOr<ClickStats> SubjectStats(const Subject& subject, absl::Time start, absl::Time end,
                                          StatsGranularity granularity);
  // Inside Record's transaction, after the counts: marks the links of
  // `human_link_ids` (an array literal) whose budget is now spent, appends
  // their ids to `exhausted` and NOTIFYs their codes.
  absl::Status ApplyClickLimits(pqxx::work& tx, const std::string& human_link_ids,
                                std::vector<int64_t>& exhausted);
  // Creates the partitions of `months` (MonthStart values) this process has
  // not created or seen yet.
  absl::Status EnsurePartitions(const std::set<absl::Time>& months);
  void ForgetPartitions();

  const PgClickStoreOptions options_;
  pg::ConnectionPool pool_;
  std::mutex mu_;
  std::set<absl::Time> known_months_;  // guarded by mu_: partitions known to exist
};

}  // namespace shortener::clicks

#endif  // SHORTENER_LIB_CLICKS_PG_PG_CLICK_STORE_H_
