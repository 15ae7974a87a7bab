// PgClickStore's erasure of deleted links' clicks (EraseLinks; migration
// 0014), and Record's leaving out of erased links' rows.
#include <pqxx/pqxx>

#include "lib/clicks/pg/pg_click_store.h"
#include "lib/clicks/pg/queries.h"
#include "lib/pg/arrays.h"

namespace shortener::clicks {
namespace {

// Visits deleted per statement at most (about: ties of one microsecond).
constexpr int kVisitsPerStatement = 10000;

}  // namespace

void PgClickStore::LeaveOutErased(const absl::flat_hash_set<int64_t>& erased,
                                  const std::vector<size_t>& fresh,
                                  const std::vector<size_t>& writes,
                                  absl::Span<const BatchToRecord> batches,
                                  std::vector<PreparedBatch>& without_erased,
                                  std::vector<const PreparedBatch*>& in_use,
                                  std::vector<RecordOutcome>& outcomes) {
  without_erased.reserve(fresh.size());
  for (size_t k : fresh) {
    const BatchToRecord& b = batches[writes[k]];
    std::vector<ClickRow> kept;
    for (const ClickRow& r : b.rows) {
      if (!erased.contains(r.link_id)) kept.push_back(r);
    }
    if (kept.size() == b.rows.size()) continue;
    without_erased.push_back(PrepareBatch(kept, b.record_visits));
    in_use[k] = &without_erased.back();
    outcomes[k].counted = static_cast<int64_t>(kept.size());
    if (b.record_visits) outcomes[k].visits = static_cast<int64_t>(kept.size());
  }
}

absl::Status PgClickStore::EraseLinks(absl::Span<const int64_t> link_ids, absl::Time when) {
  if (link_ids.empty()) return absl::OkStatus();
  pg::ArrayLiteral ids;
  for (int64_t id : link_ids) ids.Add(id);
  const std::string ids_literal = ids.Build();
  absl::Status status = pool_.Run("erase clicks", Deadline(), [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    // The rollup lock first: a merge chunk or a day's fold may hold it, and
    // Record transactions queue behind a waiting kEraseLock. Neither lock's
    // holders ever wait for the other lock. A Record transaction that runs
    // long makes this one give up (and the next pass try again) rather
    // than hold every new batch up.
    tx.exec_prepared(pg_queries::kRollupLock.name);
    tx.exec_prepared(pg_queries::kEraseLockTimeout.name);
    tx.exec_prepared(pg_queries::kEraseLock.name);
    tx.exec_prepared(pg_queries::kEraseClicks.name, ids_literal, pg::PgTimestamp(when));
    tx.commit();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  // Outside the locks, in bounded statements: a link's visits may be
  // millions.
  for (int64_t id : link_ids) {
    for (;;) {
      size_t deleted = 0;
      status = pool_.Run("erase visits", Deadline(), [&](pqxx::connection& conn) {
        pqxx::nontransaction tx(conn);
        deleted = tx.exec_prepared(pg_queries::kEraseVisits.name, id, kVisitsPerStatement)
                      .affected_rows();
        return absl::OkStatus();
      });
      if (!status.ok()) return status;
      if (deleted == 0) break;
    }
  }
  return absl::OkStatus();
}

}  // namespace shortener::clicks
