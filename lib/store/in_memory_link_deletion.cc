// InMemoryLinkStore's deletion and bulk revocation (LinkStore::DeleteLinks,
// RevokeLinks and the erasure bookkeeping), as PgLinkStore does them.
#include <algorithm>
#include <mutex>
#include <utility>

#include "lib/common/store_time.h"
#include "lib/store/in_memory_link_store.h"

namespace shortener::store {

absl::StatusOr<std::vector<Link>> InMemoryLinkStore::DeleteLinks(const LinkDeletion& deletion) {
  if (absl::Status valid = ValidateLinkRefs(deletion.links, "delete links"); !valid.ok()) {
    return valid;
  }
  std::vector<Link> deleted;
  std::vector<std::string> codes;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (absl::Status s = CheckAvailable(); !s.ok()) return s;
    for (const LinkRef& ref : deletion.links) {
      auto it = links_.find(ref.id);
      if (it == links_.end()) continue;
      const Link& link = it->second;
      // Its dedupe key, if it holds one, goes with it.
      auto held = dedupe_.find(DedupeKey(link.owner, link_sha_[link.id], link.labels));
      if (held != dedupe_.end() && held->second == link.id) dedupe_.erase(held);
      Tombstone& tombstone = deleted_[link.id];
      tombstone.delete_time = StoreTime(deletion.when);
      tombstone.alias = link.alias;
      tombstone.alias_release_time = deletion.alias_release_time;
      link_sha_.erase(link.id);
      history_.erase(link.id);
      deleted.push_back(link);
      codes.push_back(ref.code);
      links_.erase(it);
    }
  }
  // Like a NOTIFY, delivered after the change is visible ("committed").
  if (on_revoke_) {
    for (const std::string& code : codes) on_revoke_(code);
  }
  return deleted;
}

absl::StatusOr<std::vector<Link>> InMemoryLinkStore::RevokeLinks(absl::Span<const LinkRef> links,
                                                                 absl::Time when) {
  if (absl::Status valid = ValidateLinkRefs(links, "revoke links"); !valid.ok()) return valid;
  std::vector<Link> revoked;
  std::vector<std::string> codes;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (absl::Status s = CheckAvailable(); !s.ok()) return s;
    for (const LinkRef& ref : links) {
      auto it = links_.find(ref.id);
      if (it == links_.end() || it->second.revoke_time.has_value()) continue;
      it->second.revoke_time = StoreTime(when);
      revoked.push_back(it->second);
      codes.push_back(ref.code);
    }
  }
  if (on_revoke_) {
    for (const std::string& code : codes) on_revoke_(code);
  }
  return revoked;
}

absl::StatusOr<std::vector<int64_t>> InMemoryLinkStore::LinksToErase(int limit) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (absl::Status s = CheckAvailable(); !s.ok()) return s;
  std::vector<std::pair<absl::Time, int64_t>> waiting;
  for (const auto& [id, tombstone] : deleted_) {
    if (!tombstone.erased) waiting.emplace_back(tombstone.delete_time, id);
  }
  std::sort(waiting.begin(), waiting.end());
  std::vector<int64_t> ids;
  for (const auto& [time, id] : waiting) {
    if (static_cast<int>(ids.size()) >= limit) break;
    ids.push_back(id);
  }
  return ids;
}

absl::Status InMemoryLinkStore::MarkErased(absl::Span<const int64_t> ids, absl::Time) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (absl::Status s = CheckAvailable(); !s.ok()) return s;
  for (int64_t id : ids) {
    if (auto it = deleted_.find(id); it != deleted_.end()) it->second.erased = true;
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> InMemoryLinkStore::ReleaseDeletedLinks(absl::Time now) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (absl::Status s = CheckAvailable(); !s.ok()) return s;
  int64_t forgotten = 0;
  for (auto it = deleted_.begin(); it != deleted_.end();) {
    auto next = std::next(it);
    Tombstone& tombstone = it->second;
    if (tombstone.alias.has_value() && tombstone.alias_release_time <= now) {
      auto alias = aliases_.find(*tombstone.alias);
      if (alias != aliases_.end() && alias->second == it->first) aliases_.erase(alias);
      tombstone.alias.reset();
    }
    if (tombstone.erased && !tombstone.alias.has_value()) {
      deleted_.erase(it);
      ++forgotten;
    }
    it = next;
  }
  return forgotten;
}

}  // namespace shortener::store
