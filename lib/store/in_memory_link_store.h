// InMemoryLinkStore: the LinkStore of unit tests and of local runs without a
// database. Same semantics as PgLinkStore (both pass the contract suite in
// tests/lib/store), nothing durable. SetAvailable(false) makes every call fail
// with UNAVAILABLE, to test how callers handle a database outage.
// SetRevocationObserver is its stand-in for PgLinkStore's NOTIFY: it gets the
// code of every link a Revoke call actually revoked.
//
// Thread-safe: one std::shared_mutex (seen by ThreadSanitizer); CreateLinks
// applies a whole batch under it, so a batch is atomic like a database
// transaction.
#ifndef SHORTENER_LIB_STORE_IN_MEMORY_LINK_STORE_H_
#define SHORTENER_LIB_STORE_IN_MEMORY_LINK_STORE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <shared_mutex>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lib/store/create_planner.h"
#include "lib/store/link_store.h"

namespace shortener::store {

class InMemoryLinkStore : public LinkStore {
 public:
  InMemoryLinkStore() = default;
  InMemoryLinkStore(const InMemoryLinkStore&) = delete;
  InMemoryLinkStore& operator=(const InMemoryLinkStore&) = delete;

  // See LinkStore. Besides its per-item errors: INTERNAL for the whole batch
  // (nothing stored) when a link it would create has an id that exists
  // already or twice in the batch, as PgLinkStore's primary key does.
  std::vector<absl::StatusOr<CreateOutcome>> CreateLinks(absl::Span<const NewLink> links) override;
  absl::StatusOr<Link> GetById(int64_t id) override;
  absl::StatusOr<Link> GetByAlias(const std::string& alias) override;
  absl::StatusOr<std::vector<absl::StatusOr<Link>>> GetByIds(
      absl::Span<const int64_t> ids) override;
  absl::StatusOr<std::vector<absl::StatusOr<Link>>> GetByAliases(
      absl::Span<const std::string> aliases) override;
  // Calls the revocation observer (if any) with `code` after a revocation,
  // outside the store's lock; not for a link that was revoked already.
  absl::StatusOr<Link> Revoke(int64_t id, absl::Time when, const std::string& code) override;
  absl::StatusOr<int64_t> FindLabelId(const std::string& tenant, const std::string& key,
                                      const std::string& value) override;
  absl::StatusOr<LinkPage> ListLinks(const LinkListQuery& query) override;
  // Judges a budget against SetClickRanking's clicks (none: 0). Calls the
  // revocation observer with update.code after a change, outside the lock.
  absl::StatusOr<Link> UpdateLink(const LinkUpdate& update) override;
  absl::StatusOr<std::vector<LinkChange>> LinkHistory(int64_t id) override;
  // Deletion and bulk revocation (in_memory_link_deletion.cc). Both call
  // the revocation observer with each code they changed, outside the lock.
  absl::StatusOr<std::vector<Link>> DeleteLinks(const LinkDeletion& deletion) override;
  absl::StatusOr<std::vector<Link>> RevokeLinks(absl::Span<const LinkRef> links,
                                                absl::Time when) override;
  absl::StatusOr<std::vector<int64_t>> LinksToErase(int limit) override;
  absl::Status MarkErased(absl::Span<const int64_t> ids, absl::Time when) override;
  absl::StatusOr<int64_t> ReleaseDeletedLinks(absl::Time now) override;

  // false: every call fails with UNAVAILABLE until set back to true.
  void SetAvailable(bool available);
  // Set before the store is shared between threads. Default: none. It gets
  // the code of every link Revoke revoked or UpdateLink changed.
  void SetRevocationObserver(std::function<void(const std::string& code)> observer);
  // Human clicks of a link as LinkOrder::kMostClicked ranks it (what
  // PgLinkStore reads from link_click_totals); set before the store is
  // shared. Default: no link was ever clicked.
  void SetClickRanking(std::function<int64_t(int64_t link_id)> clicks_of);
  // Number of link rows stored.
  size_t LinkCount() const;
  // The ids of link `id`'s labels in key order (none for an unknown link):
  // what PgLinkStore keeps in links.label_ids, for an InMemoryClickStore's
  // label subjects.
  std::vector<int64_t> LabelIdsOf(int64_t id) const;

 private:
  struct Request {
    std::string long_url_sha256;
    int64_t link_id = 0;
  };
  // A deleted link (PgLinkStore's deleted_links row).
  struct Tombstone {
    absl::Time delete_time;
    std::optional<std::string> alias;  // while it is held
    absl::Time alias_release_time;
    bool erased = false;
  };

  // These run with mu_ held (shared to read, exclusive to write).
  absl::Status CheckAvailable() const;
  KeyState ReadKeys(const BatchKeys& keys) const;
  std::optional<Link> FindLink(int64_t id) const;
  absl::StatusOr<Link> FindByAlias(const std::string& alias) const;
  absl::Status CheckFreshIds(const CreatePlan& plan) const;
  // The label ids of every valid item's labels, made when missing, as
  // PgLinkStore's EnsureLabels does before deciding the items.
  void MakeLabelIds(absl::Span<const NewLink> links);
  void Apply(absl::Span<const NewLink> links, const CreatePlan& plan);
  std::vector<int64_t> LabelIdsOfLocked(const Link& link) const;
  ScanResult Scan(const LinkListQuery& query, const ScanRequest& request) const;

  mutable std::shared_mutex mu_;
  // Guarded by mu_:
  bool available_ = true;
  std::function<void(const std::string&)> on_revoke_;  // set before sharing
  std::function<int64_t(int64_t)> clicks_of_;          // set before sharing
  absl::flat_hash_map<int64_t, Link> links_;
  absl::flat_hash_map<std::string, int64_t> aliases_;
  absl::flat_hash_map<int64_t, int64_t> dedupe_;                   // DedupeKey -> link id
  absl::flat_hash_map<int64_t, std::string> link_sha_;             // link id -> long_url_sha256
  absl::flat_hash_map<int64_t, std::vector<LinkChange>> history_;  // link id -> changes
  absl::flat_hash_map<OwnerKey, Request> requests_;
  // Deleted link id -> its tombstone. A held alias stays in aliases_,
  // naming the deleted id.
  absl::flat_hash_map<int64_t, Tombstone> deleted_;
  // (tenant, key, value) -> label id, numbered from 1 as created.
  absl::flat_hash_map<std::tuple<std::string, std::string, std::string>, int64_t> label_ids_;
};

}  // namespace shortener::store

#endif  // SHORTENER_LIB_STORE_IN_MEMORY_LINK_STORE_H_
