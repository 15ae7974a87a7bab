#include "lib/clicks/pg/pg_click_store.h"

#include <algorithm>
#include <exception>
#include <pqxx/pqxx>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "lib/clicks/pg/queries.h"
#include "lib/clicks/rollups.h"
#include "lib/common/status_macros.h"
#include "lib/pg/arrays.h"
#include "lib/pg/copy_binary.h"

namespace shortener::clicks {
namespace {

using pg::ArrayLiteral;
using pg::CopyBinary;

// The count upsert's four array parameters.
struct CountArrays {
  std::string link_ids, hours, bots, counts;
};

CountArrays BuildCounts(const std::vector<HourlyCount>& grouped) {
  ArrayLiteral link_ids, hours, bots, counts;
  for (const HourlyCount& c : grouped) {
    link_ids.Add(c.link_id);
    hours.AddTime(c.hour);
    bots.Add(absl::string_view(c.bot ? "t" : "f"));
    counts.Add(c.count);
  }
  return {link_ids.Build(), hours.Build(), bots.Build(), counts.Build()};
}

// The ids of the links `grouped` counts human clicks for: the only ones a
// batch can exhaust. Sorted (grouped is) and distinct.
std::string HumanLinkIds(const std::vector<HourlyCount>& grouped) {
  ArrayLiteral ids;
  int64_t last = 0;
  bool any = false;
  for (const HourlyCount& c : grouped) {
    if (c.bot || (any && c.link_id == last)) continue;
    ids.Add(c.link_id);
    last = c.link_id;
    any = true;
  }
  return any ? ids.Build() : std::string();
}

// The visits of `rows` as COPY rows, in kCopyVisits' column order.
CopyBinary BuildVisits(absl::Span<const ClickRow> rows) {
  CopyBinary copy;
  // Unknown values are NULL (migration 0004's convention), except in the
  // NOT NULL columns.
  auto text_or_null = [&copy](const std::string& text) -> CopyBinary& {
    return text.empty() ? copy.Null() : copy.Text(text);
  };
  for (const ClickRow& r : rows) {
    copy.Time(r.time).Int64(r.link_id).Text(r.client_id).Inet(r.ip).Text(r.browser);
    copy.Int32(r.browser_major).Text(r.os).Text(r.os_version).Text(r.device).Bool(r.bot);
    text_or_null(r.referrer_host);
    text_or_null(r.country);
    text_or_null(r.region);
    text_or_null(r.city);
    text_or_null(r.network);
    copy.EndRow();
  }
  return copy;
}

// The distinct link ids of `grouped` (sorted by link id), as an array
// literal.
std::string LinkIds(const std::vector<HourlyCount>& grouped) {
  ArrayLiteral ids;
  for (size_t i = 0; i < grouped.size(); ++i) {
    if (i == 0 || grouped[i].link_id != grouped[i - 1].link_id) ids.Add(grouped[i].link_id);
  }
  return ids.Build();
}

// The pending rollup rows of `rollups` (the GroupRollups of batches)
// summed per subject and hour under their links and `labels`, as COPY rows
// in kCopyPending's column order.
CopyBinary BuildPending(absl::Span<const std::vector<RollupDelta>* const> rollups,
                        const LinkLabels& labels) {
  CopyBinary copy;
  std::vector<int16_t> dims;
  std::vector<absl::string_view> values;
  std::vector<int64_t> humans, bots;
  ForEachMergedDelta(rollups, labels, [&](const Subject& subject, const RollupDelta& d) {
    dims.clear();
    values.clear();
    humans.clear();
    bots.clear();
    for (const DimensionCount& c : d.dims) {
      dims.push_back(static_cast<int16_t>(c.dim));
      values.push_back(c.value);
      humans.push_back(c.human);
      bots.push_back(c.bot);
    }
    copy.Char(static_cast<char>(subject.kind)).Int64(subject.id).Time(d.hour);
    copy.Int64(d.human).Int64(d.bot).Int64Array(d.visitors).Int16Array(dims).TextArray(values);
    copy.Int64Array(humans).Int64Array(bots);
    copy.EndRow();
  });
  return copy;
}

void PrepareClickQueries(pqxx::connection& conn) {
  {
    pqxx::nontransaction tx(conn);
    tx.exec1(pg_queries::kSynchronousCommit);
  }
  for (const pg_queries::Query& q : pg_queries::kAllQueries) conn.prepare(q.name, q.sql);
}

// Thrown out of the write transaction when an insert found no partition for
// a visit (dropped by a retention sweep after this process cached it).
struct PartitionMissing {};

}  // namespace

absl::StatusOr<std::unique_ptr<PgClickStore>> PgClickStore::Create(PgClickStoreOptions options) {
  if (options.max_record_attempts < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_record_attempts: must be at least 1, got ", options.max_record_attempts));
  }
  if (options.acquire_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("acquire_timeout: must be positive");
  }
  if (options.invalidation_channel.empty()) {
    return absl::InvalidArgumentError("invalidation_channel: must not be empty");
  }
  if (!options.generated_code) {
    return absl::InvalidArgumentError("generated_code: must be set");
  }
  if (options.record_group_batches < 1 || options.record_transactions < 1 ||
      options.record_queue < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "record_group_batches, record_transactions, record_queue: must be at least 1, got ",
        options.record_group_batches, ", ", options.record_transactions, ", ",
        options.record_queue));
  }
  absl::Status valid = pg::ConnectionPool::Validate(
      pg::ConnectionPoolOptions{options.conninfo, options.pool_size, nullptr});
  if (!valid.ok()) return valid;
  return std::unique_ptr<PgClickStore>(new PgClickStore(std::move(options)));
}

namespace {

batching::AdaptiveBatcherOptions GroupCommitOptions(const PgClickStoreOptions& options) {
  batching::AdaptiveBatcherOptions o;
  o.max_batch = options.record_group_batches;
  o.max_in_flight = options.record_transactions;
  // A second transaction starts only for a full group queued behind the
  // first: bigger groups (fewer pending and count rows per click) until one
  // transaction cannot keep up.
  o.parallel_backlog = options.record_group_batches;
  o.max_queued = options.record_queue;
  return o;
}

}  // namespace

PgClickStore::PgClickStore(PgClickStoreOptions options)
    : options_(std::move(options)),
      pool_(pg::ConnectionPoolOptions{options_.conninfo, options_.pool_size, PrepareClickQueries}),
      batcher_(GroupCommitOptions(options_), &writer_) {}

absl::StatusOr<RecordOutcome> PgClickStore::Record(const std::string& batch_id,
                                                   absl::Span<const ClickRow> rows,
                                                   bool record_visits) {
  absl::Status valid = ValidateClickBatch(batch_id, rows);
  if (!valid.ok()) return valid;
  // The per-click work here, on the caller's thread (callers run in
  // parallel), so that the one transaction writing a group only adds up.
  const PreparedBatch prepared = PrepareBatch(rows, record_visits);
  std::promise<absl::StatusOr<RecordOutcome>> result;
  std::future<absl::StatusOr<RecordOutcome>> answer = result.get_future();
  batcher_.Submit(PendingBatch{BatchToRecord{batch_id, rows, record_visits, &prepared}, &result});
  return answer.get();
}

PgClickStore::PreparedBatch PgClickStore::PrepareBatch(absl::Span<const ClickRow> rows,
                                                       bool record_visits) {
  PreparedBatch p;
  p.hourly = GroupHourly(rows);
  p.rollups = GroupRollups(rows);
  if (record_visits) {
    p.visits = BuildVisits(rows);
    for (const ClickRow& r : rows) p.months.insert(MonthStart(r.time));
  }
  return p;
}

void PgClickStore::GroupWriter::Run(std::vector<PendingBatch> batch) {
  std::vector<BatchToRecord> batches;
  batches.reserve(batch.size());
  for (PendingBatch& p : batch) batches.push_back(p.batch);
  std::vector<absl::StatusOr<RecordOutcome>> results;
  try {
    results = store_->RecordGroup(batches);
  } catch (const std::exception& e) {
    results.assign(batch.size(), absl::InternalError(absl::StrCat(
                                     "record clicks: unexpected exception: ", e.what())));
  }
  for (size_t i = 0; i < batch.size(); ++i) batch[i].result->set_value(std::move(results[i]));
}

void PgClickStore::GroupWriter::Refuse(absl::Span<PendingBatch> items,
                                       const batching::Refusal& why) {
  absl::Status status =
      why.reason == batching::Refusal::Reason::kQueueFull
          ? absl::UnavailableError(absl::StrCat("record clicks: ", why.queued,
                                                " batches are waiting for a transaction already "
                                                "(record_queue ",
                                                why.max_queued, "); send this one again later"))
          : absl::UnavailableError("record clicks: the click store is shutting down");
  for (PendingBatch& p : items) p.result->set_value(status);
}

PgClickStore::GroupStats PgClickStore::group_stats() const {
  GroupStats stats;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats = group_stats_;
  }
  stats.queued = static_cast<int64_t>(batcher_.GetStats().queued);
  return stats;
}

std::vector<absl::StatusOr<RecordOutcome>> PgClickStore::RecordGroup(
    absl::Span<const BatchToRecord> batches) {
  std::vector<absl::StatusOr<RecordOutcome>> results(batches.size(), RecordOutcome{});
  // The batches to write: the first of each valid batch id, in id order
  // (kInsertBatches locks in that order). A repeated id is a duplicate of
  // its first: written once if that one is new, never if it is not.
  std::vector<size_t> writes;
  std::vector<size_t> repeats;
  absl::flat_hash_set<absl::string_view> ids_seen;
  for (size_t i = 0; i < batches.size(); ++i) {
    absl::Status valid = ValidateClickBatch(batches[i].batch_id, batches[i].rows);
    if (!valid.ok()) {
      results[i] = valid;
    } else if (ids_seen.insert(batches[i].batch_id).second) {
      writes.push_back(i);
    } else {
      repeats.push_back(i);
    }
  }
  if (writes.empty()) return results;
  std::sort(writes.begin(), writes.end(),
            [&](size_t a, size_t b) { return batches[a].batch_id < batches[b].batch_id; });
  // What Record prepared on its callers' threads; the rest prepared here.
  std::vector<PreparedBatch> prepared_here;
  prepared_here.reserve(writes.size());
  std::vector<const PreparedBatch*> prepared;
  ArrayLiteral batch_ids, batch_events;
  std::set<absl::Time> months;
  for (size_t i : writes) {
    const BatchToRecord& b = batches[i];
    batch_ids.Add(b.batch_id);
    batch_events.Add(static_cast<int64_t>(b.rows.size()));
    if (b.prepared == nullptr) {
      prepared_here.push_back(PrepareBatch(b.rows, b.record_visits));
      prepared.push_back(&prepared_here.back());
    } else {
      prepared.push_back(b.prepared);
    }
    months.insert(prepared.back()->months.begin(), prepared.back()->months.end());
  }
  const std::string ids_literal = batch_ids.Build();
  const std::string events_literal = batch_events.Build();

  absl::Status status;
  std::vector<RecordOutcome> outcomes;
  for (int attempt = 0; attempt < options_.max_record_attempts; ++attempt) {
    status = EnsurePartitions(months);
    if (!status.ok()) break;
    bool partition_missing = false;
    status = pool_.Run("record clicks", Deadline(), [&](pqxx::connection& conn) -> absl::Status {
      try {
        outcomes.assign(writes.size(), RecordOutcome{});
        pqxx::work tx(conn);
        tx.exec_prepared(pg_queries::kRecordLock.name);
        absl::flat_hash_set<std::string> fresh;
        for (const pqxx::row& row :
             tx.exec_prepared(pg_queries::kInsertBatches.name, ids_literal, events_literal)) {
          fresh.insert(row[0].as<std::string>());
        }
        // The new batches: all of them counted, some as visits.
        std::vector<size_t> fresh_writes;
        for (size_t k = 0; k < writes.size(); ++k) {
          const BatchToRecord& b = batches[writes[k]];
          if (!fresh.contains(b.batch_id)) {
            outcomes[k].duplicate = true;
            continue;
          }
          outcomes[k].counted = static_cast<int64_t>(b.rows.size());
          if (b.record_visits) outcomes[k].visits = static_cast<int64_t>(b.rows.size());
          if (!b.rows.empty()) fresh_writes.push_back(k);
        }
        if (!fresh_writes.empty()) {
          SHORTENER_RETURN_IF_ERROR(
              WriteClicks(tx, fresh_writes, writes, batches, prepared, outcomes));
        }
        tx.commit();
        return absl::OkStatus();
      } catch (const PartitionMissing&) {
        partition_missing = true;
        return absl::AbortedError("record clicks: a visits partition was dropped meanwhile");
      }
    });
    if (status.ok()) break;
    if (partition_missing) ForgetPartitions();
    // A deadlock victim or a dropped partition left nothing behind: try again.
    if (!absl::IsAborted(status)) break;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++group_stats_.transactions;
    group_stats_.batches += static_cast<int64_t>(batches.size());
    group_stats_.largest = std::max(group_stats_.largest, static_cast<int64_t>(batches.size()));
  }
  for (size_t k = 0; k < writes.size(); ++k) {
    results[writes[k]] = status.ok() ? absl::StatusOr<RecordOutcome>(std::move(outcomes[k]))
                                     : absl::StatusOr<RecordOutcome>(status);
  }
  RecordOutcome duplicate;
  duplicate.duplicate = true;
  for (size_t i : repeats) {
    results[i] = status.ok() ? absl::StatusOr<RecordOutcome>(duplicate)
                             : absl::StatusOr<RecordOutcome>(status);
  }
  return results;
}

absl::Status PgClickStore::WriteClicks(pqxx::work& tx, const std::vector<size_t>& fresh,
                                       const std::vector<size_t>& writes,
                                       absl::Span<const BatchToRecord> batches,
                                       absl::Span<const PreparedBatch* const> prepared,
                                       std::vector<RecordOutcome>& outcomes) {
  std::vector<const std::vector<HourlyCount>*> hourly;
  for (size_t k : fresh) hourly.push_back(&prepared[k]->hourly);
  std::vector<HourlyCount> grouped = SumHourlyCounts(hourly);
  // The labels the clicked links carry now: their clicks count under them.
  LinkLabels labels;
  absl::flat_hash_set<int64_t> erased;
  for (const pqxx::row& row : tx.exec_prepared(pg_queries::kLinkLabels.name, LinkIds(grouped))) {
    if (row[1].is_null()) {
      erased.insert(row[0].as<int64_t>());
    } else {
      labels[row[0].as<int64_t>()].push_back(row[1].as<int64_t>());
    }
  }
  // Rare (a batch in flight while its links were erased): the batches
  // that hold erased links' rows are prepared again without them.
  std::vector<PreparedBatch> without_erased;
  std::vector<const PreparedBatch*> in_use(prepared.begin(), prepared.end());
  if (!erased.empty()) {
    LeaveOutErased(erased, fresh, writes, batches, without_erased, in_use, outcomes);
    hourly.clear();
    for (size_t k : fresh) hourly.push_back(&in_use[k]->hourly);
    grouped = SumHourlyCounts(hourly);
    if (grouped.empty()) return absl::OkStatus();
  }
  std::vector<const std::vector<RollupDelta>*> rollups;
  std::vector<const CopyBinary*> visits;
  for (size_t k : fresh) {
    rollups.push_back(&in_use[k]->rollups);
    if (batches[writes[k]].record_visits) visits.push_back(&in_use[k]->visits);
  }
  // Visits and rollups first: they lock nothing another transaction needs.
  // The counts upsert takes row locks that every concurrent transaction for
  // the same links and hour waits for until this one commits; taking them
  // last keeps that wait to the upsert, the limit check and the commit.
  // The group's rollups are added up while PostgreSQL takes the visits.
  CopyBinary pending;
  auto add_up_rollups = [&] { pending = BuildPending(rollups, labels); };
  if (!visits.empty()) {
    try {
      CopyBinary::CopyAllTo(tx, pg_queries::kCopyVisits.table, pg_queries::kCopyVisits.columns,
                            visits, add_up_rollups);
    } catch (const pqxx::sql_error& e) {
      // The only CHECK a validated visit can fail is "no partition for
      // the row" (device was checked above).
      if (e.sqlstate() == "23514") throw PartitionMissing{};
      throw;
    }
  } else {
    add_up_rollups();
  }
  // Rollups: appended, so no lock either (the merge adds them up).
  pending.CopyTo(tx, pg_queries::kCopyPending.table, pg_queries::kCopyPending.columns);
  const CountArrays counts = BuildCounts(grouped);
  tx.exec_prepared(pg_queries::kUpsertCounts.name, counts.link_ids, counts.hours, counts.bots,
                   counts.counts);
  const std::string human_link_ids = HumanLinkIds(grouped);
  if (human_link_ids.empty()) return absl::OkStatus();
  std::vector<int64_t> exhausted;
  SHORTENER_RETURN_IF_ERROR(ApplyClickLimits(tx, human_link_ids, exhausted));  // rolls back
  // Each exhausted link goes to the first new batch (in the order written)
  // that counted a human click for it, so that one outcome reports it.
  for (int64_t link : exhausted) {
    for (size_t k = 0; k < writes.size(); ++k) {
      if (outcomes[k].duplicate || outcomes[k].counted == 0) continue;
      const absl::Span<const ClickRow> rows = batches[writes[k]].rows;
      if (std::any_of(rows.begin(), rows.end(),
                      [&](const ClickRow& r) { return r.link_id == link && !r.bot; })) {
        outcomes[k].exhausted.push_back(link);
        break;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status PgClickStore::ApplyClickLimits(pqxx::work& tx, const std::string& human_link_ids,
                                            std::vector<int64_t>& exhausted) {
  pqxx::result limited = tx.exec_prepared(pg_queries::kLockLimited.name, human_link_ids);
  if (limited.empty()) return absl::OkStatus();  // the common case: no budgets
  ArrayLiteral ids;
  for (const pqxx::row& row : limited) ids.Add(row[0].as<int64_t>());
  pqxx::result marked = tx.exec_prepared(pg_queries::kExhaust.name, ids.Build());
  if (marked.empty()) return absl::OkStatus();
  ArrayLiteral codes;
  for (const pqxx::row& row : marked) {
    const int64_t id = row[0].as<int64_t>();
    if (!row[1].is_null()) {
      codes.Add(row[1].as<std::string>());
    } else {
      absl::StatusOr<std::string> code = options_.generated_code(id);
      if (!code.ok()) {
        return absl::InternalError(absl::StrCat("record clicks: no code for exhausted link ", id,
                                                ": ", code.status().message()));
      }
      codes.Add(*code);
    }
    exhausted.push_back(id);
  }
  tx.exec_prepared(pg_queries::kNotifyCodes.name, options_.invalidation_channel, codes.Build());
  return absl::OkStatus();
}

absl::Status PgClickStore::EnsurePartitions(const std::set<absl::Time>& months) {
  for (absl::Time month : months) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (known_months_.count(month) > 0) continue;
    }
    absl::Status status =
        pool_.Run("create visits partition", Deadline(), [&](pqxx::connection& conn) {
          pqxx::nontransaction tx(conn);
          tx.exec_prepared(pg_queries::kCreatePartition.name, pg::PgTimestamp(month));
          return absl::OkStatus();
        });
    if (!status.ok()) return status;
    std::lock_guard<std::mutex> lock(mu_);
    known_months_.insert(month);
  }
  return absl::OkStatus();
}

absl::Status PgClickStore::PrepareVisitPartition(absl::Time t) {
  return EnsurePartitions({MonthStart(t)});
}

void PgClickStore::ForgetPartitions() {
  std::lock_guard<std::mutex> lock(mu_);
  known_months_.clear();
}

absl::StatusOr<std::vector<std::string>> PgClickStore::DropVisitPartitionsOlderThan(
    absl::Time cutoff) {
  std::vector<std::string> dropped;
  absl::Status status =
      pool_.Run("drop visits partitions", Deadline(), [&](pqxx::connection& conn) {
        pqxx::nontransaction tx(conn);
        for (const pqxx::row& row :
             tx.exec_prepared(pg_queries::kDropPartitions.name, pg::PgTimestamp(cutoff))) {
          dropped.push_back(row[0].as<std::string>());
        }
        return absl::OkStatus();
      });
  // Even on failure some may be gone: look them up again when needed.
  ForgetPartitions();
  if (!status.ok()) return status;
  return dropped;
}

}  // namespace shortener::clicks
