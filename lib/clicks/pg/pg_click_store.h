// PgClickStore: the ClickStore (lib/clicks/click_store.h) on PostgreSQL
// (schema in deploy/postgres/migrations/0004_clicks.sql), for any number of
// service replicas sharing one database. Besides the seam it has what only
// a database has: click budgets (links.max_clicks, shared with PgLinkStore)
// and visit partitions with their retention.
//
// Record writes batches of clicks with a constant number of statements per
// transaction: the batch ids (a batch id recorded before makes that batch a
// no-op, so the edge may retry freely), the label ids of the clicked links
// (their clicks also count under each label, lib/clicks/rollups.h),
// optionally the visits by binary COPY, the rollups by binary COPY (one
// pending row per subject and hour), one upsert of the hourly counts
// (last: its row locks are what concurrent transactions queue on), and the
// click-limit check. It returns only after the commit is flushed
// (synchronous_commit is forced on for the store's connections): an
// acknowledged batch survives a crash. The per-click work (hourly counts,
// rollups per link, visit rows) is done by Record on its caller's thread
// (PrepareBatch), so that the transaction that writes a group only adds up
// what its batches prepared.
//
// Group commit: the batches that arrive while a transaction is in flight
// queue (at most record_queue of them) and the next transaction to start
// takes up to record_group_batches of them (lib/batching/adaptive_batcher.h);
// a second transaction (up to record_transactions) starts only when a full
// group is queued. One transaction for several batches
// writes one pending row and one count row per subject (or link) and hour
// instead of one per batch, and concurrent batches of the same links stop
// waiting for each other's count row locks. Each batch keeps its own
// outcome: a duplicate batch in a group writes nothing and answers
// duplicate; a failed transaction fails every batch in it (each may be sent
// again, as after any error).
//
// Rollups: batches only append (click_rollup_pending), so they never wait
// for each other there. MergePendingRollups (every --rollup_merge_interval, from any
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
#include <future>
#include <memory>
#include <mutex>
#include <pqxx/pqxx>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "lib/batching/adaptive_batcher.h"
#include "lib/clicks/click_stats.h"
#include "lib/clicks/click_store.h"
#include "lib/clicks/clicks.h"
#include "lib/clicks/rollups.h"
#include "lib/pg/connection_pool.h"
#include "lib/pg/copy_binary.h"

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
  // Group commit (see the file comment): batches per transaction at most
  // (1: every batch in a transaction of its own). Default 8.
  int record_group_batches = 8;
  // Record transactions in flight at most. Default 2.
  int record_transactions = 2;
  // Batches waiting for a transaction at most; a Record beyond it is
  // answered UNAVAILABLE at once (the edge retries it). Default 64.
  int record_queue = 64;
};

class PgClickStore final : public ClickStore {
 public:
  // INVALID_ARGUMENT for pool_size or max_record_attempts < 1, a
  // non-positive acquire_timeout, a malformed conninfo, an empty
  // invalidation_channel, no generated_code, or a record_* option below 1.
  // Does not connect.
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
  // UNAVAILABLE also when record_queue batches are waiting already.
  absl::StatusOr<RecordOutcome> Record(const std::string& batch_id, absl::Span<const ClickRow> rows,
                                       bool record_visits) override;

  // What a transaction writes for one batch, worked out from its rows
  // alone: its hourly counts (GroupHourly), its rollups under its links
  // (GroupRollups, no labels: those are read in the transaction), and its
  // visits as COPY rows with their months (when recorded).
  struct PreparedBatch {
    std::vector<HourlyCount> hourly;
    std::vector<RollupDelta> rollups;
    pg::CopyBinary visits;
    std::set<absl::Time> months;
  };
  static PreparedBatch PrepareBatch(absl::Span<const ClickRow> rows, bool record_visits);

  // One batch of RecordGroup.
  struct BatchToRecord {
    std::string batch_id;
    absl::Span<const ClickRow> rows;  // outlives the call
    bool record_visits = true;
    // PrepareBatch(rows, record_visits), done by Record on its caller's
    // thread (outlives the call); null: RecordGroup prepares it.
    const PreparedBatch* prepared = nullptr;
  };
  // Writes `batches` in one transaction (what Record's group commit does
  // with the batches it groups; public for tests). One result per batch, in
  // order, each as Record's: a batch ValidateClickBatch refuses gets its
  // INVALID_ARGUMENT and the others are written; a batch id recorded before,
  // or earlier in `batches`, answers duplicate and writes nothing; any other
  // error fails every batch (nothing of any was written).
  std::vector<absl::StatusOr<RecordOutcome>> RecordGroup(absl::Span<const BatchToRecord> batches);

  // What the group commit did, since start (metrics, tests).
  struct GroupStats {
    int64_t transactions = 0;  // RecordGroup transactions committed or failed
    int64_t batches = 0;       // batches in them
    int64_t largest = 0;       // most batches in one
    int64_t queued = 0;        // batches waiting for a transaction now
  };
  GroupStats group_stats() const;

  // See ClickStore::Stats, for any subject: a link's (Stats) or a label's
  // (SubjectKind::kLabel: the clicks of every link while it carried the
  // label). Errors as Stats'.
  absl::StatusOr<ClickStats> SubjectStats(const Subject& subject, absl::Time start, absl::Time end,
                                          StatsGranularity granularity) override;

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
  // Returns the days folded (their starts). Each day's transaction waits
  // for the rollup lock (a merge holds it for one chunk; a fold that
  // skipped would leave its days hourly until the next day's run). Errors
  // as Record's.
  absl::StatusOr<std::vector<absl::Time>> FoldHourlyRollupsBefore(absl::Time cutoff);

  // See ClickStore::HumanTotal (a sum over click_counts). Errors as
  // Record's.
  absl::StatusOr<int64_t> HumanTotal(int64_t link_id) override;
  absl::StatusOr<std::vector<int64_t>> HumanTotals(absl::Span<const int64_t> link_ids) override;

  // See ClickStore::EraseLinks. One transaction records the links in
  // erased_links and deletes their counts, rollups and ListLinks rank,
  // after waiting for the Record transactions in flight and for a rollup
  // merge's chunk (queries.h, kRecordLock); then one statement deletes
  // their visits (outside those locks: a link's visits may be millions).
  // Record leaves out the rows of links in erased_links.
  absl::Status EraseLinks(absl::Span<const int64_t> link_ids, absl::Time when) override;

  // Its connection pool's use (metrics).
  pg::ConnectionPool::Stats pool_stats() const { return pool_.GetStats(); }

 private:
  explicit PgClickStore(PgClickStoreOptions options);

  // A Record waiting for its group's transaction.
  struct PendingBatch {
    BatchToRecord batch;
    std::promise<absl::StatusOr<RecordOutcome>>* result = nullptr;
  };
  // Runs a group of pending batches with RecordGroup.
  class GroupWriter final : public batching::BlockingBatchExecutor<PendingBatch> {
   public:
    explicit GroupWriter(PgClickStore* store) : store_(store) {}
    void Run(std::vector<PendingBatch> batch) override;
    void Refuse(absl::Span<PendingBatch> items, const batching::Refusal& why) override;

   private:
    PgClickStore* const store_;
  };

  absl::Time Deadline() const { return absl::Now() + options_.acquire_timeout; }
  // Inside RecordGroup's transaction, after the batch ids: writes what the
  // new batches add (`fresh`: indexes into `writes`, `prepared` and
  // `outcomes`; `writes` indexes into `batches`): visits, rollups (under
  // each link and its labels), counts, click limits; the links a batch
  // exhausted go to its entry of `outcomes`.
  absl::Status WriteClicks(pqxx::work& tx, const std::vector<size_t>& fresh,
                           const std::vector<size_t>& writes,
                           absl::Span<const BatchToRecord> batches,
                           absl::Span<const PreparedBatch* const> prepared,
                           std::vector<RecordOutcome>& outcomes);
  // WriteClicks' rare path (pg_click_erase.cc): each batch of `fresh` that
  // holds rows of `erased` links is prepared again without them, into
  // `without_erased` (reserved for every batch, so its elements stay put),
  // `in_use[k]` then pointing at it and outcomes[k] counting what is left.
  static void LeaveOutErased(const absl::flat_hash_set<int64_t>& erased,
                             const std::vector<size_t>& fresh, const std::vector<size_t>& writes,
                             absl::Span<const BatchToRecord> batches,
                             std::vector<PreparedBatch>& without_erased,
                             std::vector<const PreparedBatch*>& in_use,
                             std::vector<RecordOutcome>& outcomes);
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
  mutable std::mutex mu_;
  std::set<absl::Time> known_months_;  // guarded by mu_: partitions known to exist
  GroupStats group_stats_;             // guarded by mu_
  // Last: destroyed first, so its Shutdown writes what is queued while the
  // pool is still there.
  GroupWriter writer_{this};
  batching::AdaptiveBatcher<PendingBatch> batcher_;
};

}  // namespace shortener::clicks

#endif  // SHORTENER_LIB_CLICKS_PG_PG_CLICK_STORE_H_
