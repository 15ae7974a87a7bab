// PgLinkStore: the LinkStore on PostgreSQL (schema in
// deploy/postgres/migrations/0001_init.sql), for any number of service
// replicas sharing one database.
//
// CreateLinks runs a whole batch in one transaction with a constant number of
// statements (arrays + unnest): it reads what exists for the batch's keys
// (request ids, dedupe keys, aliases; up to 3 statements), decides every item
// with the planner all stores share (create_planner.h), then writes all rows
// in one statement. The unique keys arbitrate between concurrent
// transactions: one that finds a key taken since its read rolls back and
// starts again, so no orphan row is ever committed. When the previous batch
// found none of its keys existing, the read is skipped (the inserts' unique
// checks find out) and a batch of new links costs one autocommitted statement:
// one round trip, or, from copy_min_links links on, one COPY per table in a
// transaction (cheaper for PostgreSQL per row, a few more round trips).
// A batch with labels first makes their ids (migration 0010: one
// autocommitted insert-if-missing into `labels`, one round trip, none for a
// batch without labels) and writes each link's ids in links.label_ids;
// reads return a link's labels through a lookup of
// its label ids that unlabelled links skip.
// Reads are single autocommit statements. Revoke NOTIFYs the revoked code on
// invalidation_channel in the revoking statement, so every replica's
// listener learns of it on commit.
//
// Connections come from a lazy pool: Create does not connect, a database
// outage gives UNAVAILABLE, and the same store works again once the database
// is back.
//
// Thread-safe.
#ifndef SHORTENER_LIB_STORE_PG_PG_LINK_STORE_H_
#define SHORTENER_LIB_STORE_PG_PG_LINK_STORE_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/pg/connection_pool.h"
#include "lib/store/create_planner.h"
#include "lib/store/link_store.h"

namespace shortener::store {

struct PgLinkStoreOptions {
  // libpq connection string; may hold a password (never in a message).
  std::string conninfo;
  // Database connections at most. Default 8.
  int pool_size = 8;
  // How long a call waits for a free connection before UNAVAILABLE.
  // Default 5 s.
  absl::Duration acquire_timeout = absl::Seconds(5);
  // CreateLinks attempts when concurrent transactions keep winning keys of
  // the batch (or a deadlock is detected) before it gives up with ABORTED.
  // Default 10.
  int max_create_attempts = 10;
  // A batch of at least this many links that skips the read phase is written
  // with COPY (BEGIN, one COPY per table, COMMIT: ~30 % less PostgreSQL CPU
  // per row than the one-statement INSERT, for 3+ more round trips). Must be
  // at least 1. Default 200.
  int copy_min_links = 200;
  // The LISTEN/NOTIFY channel Revoke notifies with the revoked link's code.
  // Every replica's listener (pg::NotificationListener) listens on it.
  // Default "shortener_invalidations".
  std::string invalidation_channel = "shortener_invalidations";
};

class PgLinkStore : public LinkStore {
 public:
  // Validates the options (INVALID_ARGUMENT: pool_size,
  // max_create_attempts or copy_min_links < 1, acquire_timeout <= 0, empty
  // invalidation_channel, malformed conninfo);
  // does not connect.
  static absl::StatusOr<std::unique_ptr<PgLinkStore>> Create(PgLinkStoreOptions options);

  // See LinkStore. Whole-batch errors besides UNAVAILABLE: INTERNAL when a
  // link id to insert exists already (ids must come from the allocator),
  // ABORTED after max_create_attempts lost races, DEADLINE_EXCEEDED on a
  // statement timeout. Nothing of the batch is committed then.
  std::vector<absl::StatusOr<CreateOutcome>> CreateLinks(absl::Span<const NewLink> links) override;
  absl::StatusOr<Link> GetById(int64_t id) override;
  absl::StatusOr<Link> GetByAlias(const std::string& alias) override;
  absl::StatusOr<std::vector<absl::StatusOr<Link>>> GetByIds(
      absl::Span<const int64_t> ids) override;
  // One `WHERE alias = ANY($1::text[])` statement for the aliases that are
  // storable text (the others are NOT_FOUND without a query).
  absl::StatusOr<std::vector<absl::StatusOr<Link>>> GetByAliases(
      absl::Span<const std::string> aliases) override;
  // Publishes `code` with NOTIFY on options.invalidation_channel in the
  // revoking statement (one round trip; a second one, a read, when the link
  // was revoked already). INVALID_ARGUMENT for a `code` NOTIFY cannot carry
  // (not UTF-8, a NUL byte, 7999 bytes or more).
  absl::StatusOr<LinkPage> ListLinks(const LinkListQuery& query) override;
  // One transaction: the link's row locked (FOR UPDATE: concurrent updates
  // and the click budget check of RecordClicks wait for each other), written,
  // its history rows inserted and its code NOTIFYd on the invalidation
  // channel (delivered on commit only).
  absl::StatusOr<Link> UpdateLink(const LinkUpdate& update) override;
  absl::StatusOr<std::vector<LinkChange>> LinkHistory(int64_t id) override;
  absl::StatusOr<Link> Revoke(int64_t id, absl::Time when, const std::string& code) override;
  // DeleteLinks: one transaction of two statements (the rows deleted, then
  // their deleted_links rows, history and NOTIFYs). RevokeLinks: one
  // autocommitted statement that revokes and NOTIFYs (as Revoke).
  absl::StatusOr<std::vector<Link>> DeleteLinks(const LinkDeletion& deletion) override;
  absl::StatusOr<std::vector<Link>> RevokeLinks(absl::Span<const LinkRef> links,
                                                absl::Time when) override;
  absl::StatusOr<std::vector<int64_t>> LinksToErase(int limit) override;
  absl::Status MarkErased(absl::Span<const int64_t> ids, absl::Time when) override;
  absl::StatusOr<int64_t> ReleaseDeletedLinks(absl::Time now) override;
  // One primary-key probe of the labels table (migration 0010).
  absl::StatusOr<int64_t> FindLabelId(const std::string& tenant, const std::string& key,
                                      const std::string& value) override;

  // Its connection pool's use (metrics).
  pg::ConnectionPool::Stats pool_stats() const { return pool_.GetStats(); }

 private:
  explicit PgLinkStore(PgLinkStoreOptions options);

  absl::Time Deadline() const { return absl::Now() + options_.acquire_timeout; }
  // `keys`: the batch's keys (CollectKeys), collected by the first attempt
  // that reads them and kept for later ones.
  absl::Status CreateWithRetries(pqxx::connection& conn, absl::Span<const NewLink> links,
                                 std::optional<BatchKeys>& keys, CreatePlan& plan);
  // Runs `query` with `args` outside a transaction; expects at most one link.
  template <typename... Args>
  absl::StatusOr<std::optional<Link>> QueryOneLink(const char* what, const char* query,
                                                   Args... args);

  const PgLinkStoreOptions options_;
  pg::ConnectionPool pool_;
  // Whether the last batch that read its keys found none existing: then the
  // next one skips the read phase (see CreateWithRetries).
  std::atomic<bool> expect_new_keys_{true};
};

}  // namespace shortener::store

#endif  // SHORTENER_LIB_STORE_PG_PG_LINK_STORE_H_
