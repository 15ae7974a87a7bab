// The two database phases of PgLinkStore::CreateLinks, and the decoding of
// link rows. Internal to lib/store/pg.
//
// Thread-compatible: each function uses only the transaction it is given.
// They throw libpqxx exceptions; PgLinkStore translates them.
#ifndef SHORTENER_LIB_STORE_PG_PG_BATCH_H_
#define SHORTENER_LIB_STORE_PG_PG_BATCH_H_

#include <cstdint>
#include <optional>
#include <pqxx/connection>
#include <pqxx/dbtransaction>
#include <pqxx/row>
#include <pqxx/transaction_base>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "lib/store/create_planner.h"
#include "lib/store/link.h"

namespace shortener::store {

// Prepares every statement of pg_queries on `conn` (one round trip each).
void PrepareLinkQueries(pqxx::connection& conn);

// The link in pg_queries::kLinkColumns order starting at column `first`;
// nullopt when its id is NULL (a LEFT JOIN found no link).
std::optional<Link> ParseLink(const pqxx::row& row, int first);

// (tenant, key, value) -> the label's id (migration 0010).
using LabelIds = absl::flat_hash_map<std::tuple<std::string, std::string, std::string>, int64_t>;

// Whether an item of `links` that ValidateNewLink accepts has labels.
bool HasLabels(absl::Span<const NewLink> links);

// The ids of the labels of the valid items of `links` (owner as tenant),
// made when missing (kEnsureLabels, autocommitted, before the batch's own
// transaction: a label without links is harmless, and its id is then
// stable whatever becomes of the batch). Empty without labels (no
// statement). Throws std::runtime_error when a label is still missing after
// a few attempts (not expected).
LabelIds EnsureLabels(pqxx::connection& conn, absl::Span<const NewLink> links);

// Read phase: what the database holds for `keys` (at most three statements,
// none for an empty kind of key).
KeyState ReadKeyState(pqxx::transaction_base& tx, const BatchKeys& keys);

// How the write phase detects a key a concurrent transaction took since the
// read phase (see kWriteBatchFast / kWriteBatchCareful in queries.h).
enum class WriteMode {
  kFast,     // throws unique_violation (also for a duplicate link id)
  kCareful,  // returns false; unique_violation only for a duplicate link id
};

// Write phase: every row `plan` lists, in one statement (two when the plan
// takes dedupe keys over from dead links: kReleaseDedupeKeys first). Returns
// false when a concurrent transaction took one of the keys since the read
// phase; the caller must then roll back (as after any exception).
// `label_ids` holds the ids of every label of the new links (EnsureLabels).
bool WritePlan(pqxx::transaction_base& tx, absl::Span<const NewLink> links, const CreatePlan& plan,
               WriteMode mode, const LabelIds& label_ids);

// Write phase in COPY form, one COPY per table with rows, for a plan made
// without a read (nothing to repoint: returns false and writes nothing
// otherwise). COPY costs PostgreSQL about 30 % less CPU per row than the
// unnest INSERT but needs a transaction (BEGIN, a COPY per table, COMMIT): for
// big batches only. Like WriteMode::kFast, a key that exists already throws
// unique_violation (COPY has no ON CONFLICT); the caller must roll back.
// `label_ids` as WritePlan's.
bool CopyPlan(pqxx::dbtransaction& tx, absl::Span<const NewLink> links, const CreatePlan& plan,
              const LabelIds& label_ids);

}  // namespace shortener::store

#endif  // SHORTENER_LIB_STORE_PG_PG_BATCH_H_
