#include "lib/clicks/pg/pg_click_store.h"

#include <pqxx/pqxx>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/clicks/pg/queries.h"
#include "lib/clicks/rollups.h"
#include "lib/pg/arrays.h"

namespace shortener::clicks {
namespace {

using pg::ArrayLiteral;

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

// The visit insert's twelve array parameters, in column order.
std::vector<std::string> BuildVisits(absl::Span<const ClickRow> rows) {
  ArrayLiteral times, link_ids, client_ids, ips, browsers, majors, oses, os_versions, devices, bots,
      referrers, countries;
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
  }
  return {times.Build(),    link_ids.Build(), client_ids.Build(), ips.Build(),
          browsers.Build(), majors.Build(),   oses.Build(),       os_versions.Build(),
          devices.Build(),  bots.Build(),     referrers.Build(),  countries.Build()};
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
  absl::Status valid = pg::ConnectionPool::Validate(
      pg::ConnectionPoolOptions{options.conninfo, options.pool_size, nullptr});
  if (!valid.ok()) return valid;
  return std::unique_ptr<PgClickStore>(new PgClickStore(std::move(options)));
}

PgClickStore::PgClickStore(PgClickStoreOptions options)
    : options_(std::move(options)),
      pool_(pg::ConnectionPoolOptions{options_.conninfo, options_.pool_size, PrepareClickQueries}) {
}

absl::StatusOr<RecordOutcome> PgClickStore::Record(const std::string& batch_id,
                                                   absl::Span<const ClickRow> rows,
                                                   bool record_visits) {
  absl::Status valid = ValidateClickBatch(batch_id, rows);
  if (!valid.ok()) return valid;
  // Everything the statements take is built once, outside the retry loop.
  const std::vector<HourlyCount> grouped = GroupHourly(rows);
  const CountArrays counts = BuildCounts(grouped);
  const std::string human_link_ids = HumanLinkIds(grouped);
  const std::vector<std::string> pending = BuildPending(GroupRollups(rows));
  const bool write_visits = record_visits && !rows.empty();
  std::vector<std::string> visits;
  std::set<absl::Time> months;
  if (write_visits) {
    visits = BuildVisits(rows);
    for (const ClickRow& r : rows) months.insert(MonthStart(r.time));
  }
  const int events = static_cast<int>(rows.size());

  absl::Status status;
  for (int attempt = 0; attempt < options_.max_record_attempts; ++attempt) {
    status = EnsurePartitions(months);
    if (!status.ok()) return status;
    RecordOutcome outcome;
    bool partition_missing = false;
    status = pool_.Run("record clicks", Deadline(), [&](pqxx::connection& conn) -> absl::Status {
      try {
        pqxx::work tx(conn);
        if (tx.exec_prepared(pg_queries::kInsertBatch.name, batch_id, events).empty()) {
          // Recorded before: leave without writing (the transaction rolls
          // back, which releases nothing of value: it wrote nothing).
          outcome.duplicate = true;
          return absl::OkStatus();
        }
        // Visits and rollups first: they lock nothing another batch needs. The counts
        // upsert takes row locks that every concurrent batch for the same
        // links and hour waits for until this one commits; taking them last
        // keeps that wait to the upsert, the limit check and the commit.
        if (write_visits) {
          try {
            tx.exec_prepared(pg_queries::kInsertVisits.name, visits[0], visits[1], visits[2],
                             visits[3], visits[4], visits[5], visits[6], visits[7], visits[8],
                             visits[9], visits[10], visits[11]);
          } catch (const pqxx::check_violation&) {
            // The only CHECK a validated visit can fail is "no partition for
            // the row" (device was checked above).
            throw PartitionMissing{};
          }
          outcome.visits = events;
        }
        // Rollups: appended, so no lock either (the merge adds them up).
        if (!rows.empty()) {
          tx.exec_prepared(pg_queries::kInsertPending.name, pending[0], pending[1], pending[2],
                           pending[3], pending[4], pending[5], pending[6], pending[7], pending[8],
                           pending[9]);
          tx.exec_prepared(pg_queries::kUpsertCounts.name, counts.link_ids, counts.hours,
                           counts.bots, counts.counts);
        }
        if (!human_link_ids.empty()) {
          absl::Status limits = ApplyClickLimits(tx, human_link_ids, outcome.exhausted);
          if (!limits.ok()) return limits;  // rolls back
        }
        tx.commit();
        outcome.counted = events;
        return absl::OkStatus();
      } catch (const PartitionMissing&) {
        partition_missing = true;
        return absl::AbortedError("record clicks: a visits partition was dropped meanwhile");
      }
    });
    if (status.ok()) return outcome;
    if (partition_missing) ForgetPartitions();
    // A deadlock victim or a dropped partition left nothing behind: try again.
    if (!absl::IsAborted(status)) return status;
  }
  return status;
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

absl::StatusOr<std::vector<absl::Time>> PgClickStore::FoldHourlyRollupsBefore(absl::Time cutoff) {
  std::vector<absl::Time> folded;
  while (true) {
    bool done = false;
    absl::Status status = pool_.Run("fold click rollups", Deadline(), [&](pqxx::connection& conn) {
      pqxx::work tx(conn);
      if (!tx.exec_prepared1(pg_queries::kTryRollupLock.name)[0].as<bool>()) {
        done = true;  // another replica is at it
        return absl::OkStatus();
      }
      pqxx::row oldest =
          tx.exec_prepared1(pg_queries::kOldestHourBefore.name, pg::PgTimestamp(cutoff));
      if (oldest[0].is_null()) {
        done = true;
        return absl::OkStatus();
      }
      const absl::Duration day = absl::Hours(24);
      const absl::Time start =
          absl::UnixEpoch() +
          absl::Floor(absl::FromUnixSeconds(oldest[0].as<int64_t>()) - absl::UnixEpoch(), day);
      if (start + day > cutoff) {
        done = true;  // a cutoff inside a day leaves that day hourly
        return absl::OkStatus();
      }
      tx.exec_prepared1(pg_queries::kFoldDay.name, pg::PgTimestamp(start),
                        pg::PgTimestamp(start + day), kMaxValuesPerDay);
      tx.commit();
      folded.push_back(start);
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    if (done) return folded;
  }
}

}  // namespace shortener::clicks
