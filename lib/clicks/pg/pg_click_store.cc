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

namespace shortener::clicks {
namespace {

using pg::ArrayLiteral;

// The rows of several batches as one range (what one transaction writes).
class ClickRowRange {
 public:
  explicit ClickRowRange(absl::Span<const absl::Span<const ClickRow>> batches)
      : batches_(batches) {}

  class Iterator {
   public:
    Iterator(absl::Span<const absl::Span<const ClickRow>> batches, size_t batch)
        : batches_(batches), batch_(batch) {
      SkipEmpty();
    }
    const ClickRow& operator*() const { return batches_[batch_][row_]; }
    Iterator& operator++() {
      ++row_;
      SkipEmpty();
      return *this;
    }
    bool operator!=(const Iterator& other) const {
      return batch_ != other.batch_ || row_ != other.row_;
    }

   private:
    void SkipEmpty() {
      while (batch_ < batches_.size() && row_ == batches_[batch_].size()) {
        ++batch_;
        row_ = 0;
      }
    }
    absl::Span<const absl::Span<const ClickRow>> batches_;
    size_t batch_ = 0;
    size_t row_ = 0;
  };
  Iterator begin() const { return Iterator(batches_, 0); }
  Iterator end() const { return Iterator(batches_, batches_.size()); }

 private:
  absl::Span<const absl::Span<const ClickRow>> batches_;
};

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

// The visit insert's fifteen array parameters, in column order.
std::vector<std::string> BuildVisits(const ClickRowRange& rows) {
  ArrayLiteral times, link_ids, client_ids, ips, browsers, majors, oses, os_versions, devices, bots,
      referrers, countries, regions, cities, networks;
  for (const ClickRow& r : rows) {
    times.AddTime(r.time);
    link_ids.Add(r.link_id);
    client_ids.Add(r.client_id);
    r.ip.empty() ? ips.AddNull() : ips.Add(r.ip);
    browsers.Add(r.browser);
    majors.Add(static_cast<int64_t>(r.browser_major));
    oses.Add(r.os);
    os_versions.Add(r.os_version);
    devices.Add(r.device);
    bots.Add(absl::string_view(r.bot ? "t" : "f"));
    r.referrer_host.empty() ? referrers.AddNull() : referrers.Add(r.referrer_host);
    r.country.empty() ? countries.AddNull() : countries.Add(r.country);
    r.region.empty() ? regions.AddNull() : regions.Add(r.region);
    r.city.empty() ? cities.AddNull() : cities.Add(r.city);
    r.network.empty() ? networks.AddNull() : networks.Add(r.network);
  }
  return {times.Build(),    link_ids.Build(), client_ids.Build(), ips.Build(),
          browsers.Build(), majors.Build(),   oses.Build(),       os_versions.Build(),
          devices.Build(),  bots.Build(),     referrers.Build(),  countries.Build(),
          regions.Build(),  cities.Build(),   networks.Build()};
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

// The pending-rollup insert's ten array parameters (kInsertPending).
std::vector<std::string> BuildPending(const std::vector<RollupDelta>& deltas) {
  ArrayLiteral kinds, subjects, hours, humans, bots, visitors, dims, values, dim_humans, dim_bots;
  for (const RollupDelta& d : deltas) {
    const char kind = static_cast<char>(d.subject.kind);
    kinds.Add(absl::string_view(&kind, 1));
    subjects.Add(d.subject.id);
    hours.AddTime(d.hour);
    humans.Add(d.human);
    bots.Add(d.bot);
    // Each row's arrays as array literals, parsed by the statement's casts.
    ArrayLiteral v, dim, value, human, bot;
    for (int64_t h : d.visitors) v.Add(h);
    for (const DimensionCount& c : d.dims) {
      dim.Add(static_cast<int64_t>(c.dim));
      value.Add(c.value);
      human.Add(c.human);
      bot.Add(c.bot);
    }
    visitors.Add(v.Build());
    dims.Add(dim.Build());
    values.Add(value.Build());
    dim_humans.Add(human.Build());
    dim_bots.Add(bot.Build());
  }
  return {kinds.Build(),    subjects.Build(), hours.Build(),  humans.Build(),     bots.Build(),
          visitors.Build(), dims.Build(),     values.Build(), dim_humans.Build(), dim_bots.Build()};
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
  std::promise<absl::StatusOr<RecordOutcome>> result;
  std::future<absl::StatusOr<RecordOutcome>> answer = result.get_future();
  batcher_.Submit(PendingBatch{BatchToRecord{batch_id, rows, record_visits}, &result});
  return answer.get();
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
  ArrayLiteral batch_ids, batch_events;
  std::set<absl::Time> months;
  for (size_t i : writes) {
    batch_ids.Add(batches[i].batch_id);
    batch_events.Add(static_cast<int64_t>(batches[i].rows.size()));
    if (!batches[i].record_visits) continue;
    for (const ClickRow& r : batches[i].rows) months.insert(MonthStart(r.time));
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
        absl::flat_hash_set<std::string> fresh;
        for (const pqxx::row& row :
             tx.exec_prepared(pg_queries::kInsertBatches.name, ids_literal, events_literal)) {
          fresh.insert(row[0].as<std::string>());
        }
        // The rows of the new batches, all of them counted, some as visits.
        std::vector<absl::Span<const ClickRow>> counted, visited;
        for (size_t k = 0; k < writes.size(); ++k) {
          const BatchToRecord& b = batches[writes[k]];
          if (!fresh.contains(b.batch_id)) {
            outcomes[k].duplicate = true;
            continue;
          }
          outcomes[k].counted = static_cast<int64_t>(b.rows.size());
          if (b.rows.empty()) continue;
          counted.push_back(b.rows);
          if (b.record_visits) {
            visited.push_back(b.rows);
            outcomes[k].visits = static_cast<int64_t>(b.rows.size());
          }
        }
        if (!counted.empty()) {
          SHORTENER_RETURN_IF_ERROR(WriteClicks(tx, counted, visited, writes, batches, outcomes));
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

absl::Status PgClickStore::WriteClicks(pqxx::work& tx,
                                       absl::Span<const absl::Span<const ClickRow>> counted,
                                       absl::Span<const absl::Span<const ClickRow>> visited,
                                       const std::vector<size_t>& writes,
                                       absl::Span<const BatchToRecord> batches,
                                       std::vector<RecordOutcome>& outcomes) {
  const std::vector<HourlyCount> grouped = GroupHourlyOfBatches(counted);
  // The labels the clicked links carry now: their clicks count under them.
  LinkLabels labels;
  for (const pqxx::row& row : tx.exec_prepared(pg_queries::kLinkLabels.name, LinkIds(grouped))) {
    labels[row[0].as<int64_t>()].push_back(row[1].as<int64_t>());
  }
  // Visits and rollups first: they lock nothing another transaction needs.
  // The counts upsert takes row locks that every concurrent transaction for
  // the same links and hour waits for until this one commits; taking them
  // last keeps that wait to the upsert, the limit check and the commit.
  if (!visited.empty()) {
    const std::vector<std::string> visits = BuildVisits(ClickRowRange(visited));
    try {
      tx.exec_prepared(pg_queries::kInsertVisits.name, visits[0], visits[1], visits[2], visits[3],
                       visits[4], visits[5], visits[6], visits[7], visits[8], visits[9], visits[10],
                       visits[11], visits[12], visits[13], visits[14]);
    } catch (const pqxx::check_violation&) {
      // The only CHECK a validated visit can fail is "no partition for
      // the row" (device was checked above).
      throw PartitionMissing{};
    }
  }
  // Rollups: appended, so no lock either (the merge adds them up).
  const std::vector<std::string> pending = BuildPending(GroupRollupsOfBatches(counted, labels));
  tx.exec_prepared(pg_queries::kInsertPending.name, pending[0], pending[1], pending[2], pending[3],
                   pending[4], pending[5], pending[6], pending[7], pending[8], pending[9]);
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
