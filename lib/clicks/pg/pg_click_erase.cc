// PgClickStore's erasure of deleted links' clicks (EraseLinks,
// ForgetErasedBefore; migration 0014).
#include <pqxx/pqxx>

#include "lib/clicks/pg/pg_click_store.h"
#include "lib/clicks/pg/queries.h"
#include "lib/pg/arrays.h"

namespace shortener::clicks {

absl::Status PgClickStore::EraseLinks(absl::Span<const int64_t> link_ids, absl::Time when) {
  if (link_ids.empty()) return absl::OkStatus();
  pg::ArrayLiteral ids;
  for (int64_t id : link_ids) ids.Add(id);
  const std::string ids_literal = ids.Build();
  absl::Status status = pool_.Run("erase clicks", Deadline(), [&](pqxx::connection& conn) {
    pqxx::work tx(conn);
    // Batches in flight first (kRecordLock), then a merge's chunk (the
    // rollup lock), in that order: neither ever waits for the other lock.
    tx.exec_prepared(pg_queries::kEraseLock.name);
    tx.exec_prepared(pg_queries::kRollupLock.name);
    tx.exec_prepared(pg_queries::kEraseClicks.name, ids_literal, pg::PgTimestamp(when));
    tx.commit();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  // Outside the locks: a link's visits may be many, and a batch that
  // starts now leaves these links out.
  return pool_.Run("erase visits", Deadline(), [&](pqxx::connection& conn) {
    pqxx::nontransaction tx(conn);
    tx.exec_prepared(pg_queries::kEraseVisits.name, ids_literal);
    return absl::OkStatus();
  });
}

absl::Status PgClickStore::ForgetErasedBefore(absl::Time before) {
  return pool_.Run("forget erased links", Deadline(), [&](pqxx::connection& conn) {
    pqxx::nontransaction tx(conn);
    tx.exec_prepared(pg_queries::kForgetErased.name, pg::PgTimestamp(before));
    return absl::OkStatus();
  });
}

}  // namespace shortener::clicks
