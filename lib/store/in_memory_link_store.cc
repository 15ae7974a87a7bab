#include "lib/store/in_memory_link_store.h"

#include <algorithm>
#include <mutex>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/common/store_time.h"

namespace shortener::store {

std::vector<absl::StatusOr<CreateOutcome>> InMemoryLinkStore::CreateLinks(
    absl::Span<const NewLink> links) {
  BatchKeys keys = CollectKeys(links);
  std::unique_lock<std::shared_mutex> lock(mu_);
  absl::Status status = CheckAvailable();
  CreatePlan plan;
  if (status.ok()) {
    MakeLabelIds(links);
    plan = PlanCreate(links, ReadKeys(keys));
    status = CheckFreshIds(plan);
  }
  if (!status.ok()) return std::vector<absl::StatusOr<CreateOutcome>>(links.size(), status);
  Apply(links, plan);
  return std::move(plan.results);
}

absl::StatusOr<Link> InMemoryLinkStore::GetById(int64_t id) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (absl::Status s = CheckAvailable(); !s.ok()) return s;
  std::optional<Link> link = FindLink(id);
  if (!link.has_value()) return absl::NotFoundError(absl::StrCat("no link with id ", id));
  return *std::move(link);
}

absl::StatusOr<Link> InMemoryLinkStore::GetByAlias(const std::string& alias) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (absl::Status s = CheckAvailable(); !s.ok()) return s;
  return FindByAlias(alias);
}

absl::StatusOr<std::vector<absl::StatusOr<Link>>> InMemoryLinkStore::GetByAliases(
    absl::Span<const std::string> aliases) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (absl::Status s = CheckAvailable(); !s.ok()) return s;
  std::vector<absl::StatusOr<Link>> result;
  result.reserve(aliases.size());
  for (const std::string& alias : aliases) result.push_back(FindByAlias(alias));
  return result;
}

absl::StatusOr<Link> InMemoryLinkStore::FindByAlias(const std::string& alias) const {
  auto it = aliases_.find(alias);
  std::optional<Link> link;
  if (it != aliases_.end()) link = FindLink(it->second);
  if (!link.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("no link with alias \"", absl::CHexEscape(alias), "\""));
  }
  return *std::move(link);
}

absl::StatusOr<std::vector<absl::StatusOr<Link>>> InMemoryLinkStore::GetByIds(
    absl::Span<const int64_t> ids) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (absl::Status s = CheckAvailable(); !s.ok()) return s;
  std::vector<absl::StatusOr<Link>> result;
  result.reserve(ids.size());
  for (int64_t id : ids) {
    std::optional<Link> link = FindLink(id);
    if (link.has_value()) {
      result.push_back(*std::move(link));
    } else {
      result.push_back(absl::NotFoundError(absl::StrCat("no link with id ", id)));
    }
  }
  return result;
}

absl::StatusOr<Link> InMemoryLinkStore::Revoke(int64_t id, absl::Time when,
                                               const std::string& code) {
  Link link;
  bool revoked_now = false;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (absl::Status s = CheckAvailable(); !s.ok()) return s;
    auto it = links_.find(id);
    if (it == links_.end()) return absl::NotFoundError(absl::StrCat("no link with id ", id));
    if (!it->second.revoke_time.has_value()) {
      it->second.revoke_time = StoreTime(when);
      revoked_now = true;
    }
    link = it->second;
  }
  // Like a NOTIFY, delivered after the change is visible ("committed").
  if (revoked_now && on_revoke_) on_revoke_(code);
  return link;
}

absl::StatusOr<Link> InMemoryLinkStore::UpdateLink(const LinkUpdate& update) {
  if (absl::Status valid = ValidateLinkUpdate(update); !valid.ok()) return valid;
  Link after;
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (absl::Status s = CheckAvailable(); !s.ok()) return s;
    auto it = links_.find(update.id);
    if (it == links_.end()) return absl::NotFoundError(absl::StrCat("no link with id ", update.id));
    Link& link = it->second;
    if (link.revoke_time.has_value()) {
      return absl::FailedPreconditionError("link is revoked: a revoked link cannot be changed");
    }
    LinkUpdate stored = update;
    if (stored.expire_time.has_value() && stored.expire_time->has_value()) {
      stored.expire_time = StoreTime(**stored.expire_time);
    }
    Link updated = ApplyUpdate(link, stored);
    if (update.max_clicks.has_value()) {
      const int64_t clicks = clicks_of_ ? clicks_of_(link.id) : 0;
      updated.clicks_exhausted_time = ExhaustedAfter(updated, clicks, StoreTime(update.when));
    }
    std::vector<FieldChange> changes = DiffLink(link, updated);
    if (changes.empty()) return link;
    if (update.labels.has_value()) {
      for (const auto& [key, value] : *update.labels) {
        const int64_t next_id = static_cast<int64_t>(label_ids_.size()) + 1;
        label_ids_.try_emplace(std::make_tuple(link.owner, key, value), next_id);
      }
    }
    const std::string old_sha = link_sha_[link.id];
    const std::string& new_sha = update.long_url_sha256.value_or(old_sha);
    const int64_t old_key = DedupeKey(link.owner, old_sha, link.labels);
    auto held = dedupe_.find(old_key);
    const bool held_key = held != dedupe_.end() && held->second == link.id;
    if (held_key) {
      dedupe_.erase(held);
      if (KeepsDedupe(true, updated)) {
        dedupe_.try_emplace(DedupeKey(link.owner, new_sha, updated.labels), link.id);
      }
    }
    link_sha_[link.id] = new_sha;
    link = updated;
    history_[link.id].push_back({StoreTime(update.when), update.actor, std::move(changes)});
    after = link;
  }
  // Like a NOTIFY, delivered after the change is visible ("committed").
  if (on_revoke_) on_revoke_(update.code);
  return after;
}

absl::StatusOr<std::vector<LinkChange>> InMemoryLinkStore::LinkHistory(int64_t id) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (absl::Status s = CheckAvailable(); !s.ok()) return s;
  auto it = history_.find(id);
  if (it == history_.end()) return std::vector<LinkChange>{};
  return it->second;
}

absl::StatusOr<int64_t> InMemoryLinkStore::FindLabelId(const std::string& tenant,
                                                       const std::string& key,
                                                       const std::string& value) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (absl::Status s = CheckAvailable(); !s.ok()) return s;
  auto it = label_ids_.find(std::make_tuple(tenant, key, value));
  if (it == label_ids_.end()) return NoLabelError(tenant, key, value);
  return it->second;
}

void InMemoryLinkStore::SetRevocationObserver(
    std::function<void(const std::string& code)> observer) {
  on_revoke_ = std::move(observer);
}

void InMemoryLinkStore::SetClickRanking(std::function<int64_t(int64_t link_id)> clicks_of) {
  clicks_of_ = std::move(clicks_of);
}

absl::StatusOr<LinkPage> InMemoryLinkStore::ListLinks(const LinkListQuery& query) {
  if (query.page_size < 1 || query.page_size > kMaxPageSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("list links: page_size must be 1 to ", kMaxPageSize));
  }
  if (query.owner.empty()) return absl::InvalidArgumentError("list links: no owner");
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (absl::Status s = CheckAvailable(); !s.ok()) return s;
  return ListByScans(query, [&](const ScanRequest& request) -> absl::StatusOr<ScanResult> {
    return Scan(query, request);
  });
}

std::vector<int64_t> InMemoryLinkStore::LabelIdsOfLocked(const Link& link) const {
  std::vector<int64_t> ids;
  for (const auto& [key, value] : link.labels) {
    auto label = label_ids_.find(std::make_tuple(link.owner, key, value));
    if (label != label_ids_.end()) ids.push_back(label->second);
  }
  return ids;
}

ScanResult InMemoryLinkStore::Scan(const LinkListQuery& query, const ScanRequest& request) const {
  struct Candidate {
    const Link* link;
    ListCursor cursor;
  };
  const bool by_clicks = request.phase == ScanPhase::kClicked;
  std::vector<Candidate> walk;
  for (const auto& [id, link] : links_) {
    if (link.owner != query.owner) continue;
    const int64_t clicks = clicks_of_ ? clicks_of_(id) : 0;
    const bool ranked_walk =
        request.phase == ScanPhase::kClicked || request.phase == ScanPhase::kUnclicked;
    if (ranked_walk && by_clicks != (clicks > 0)) continue;
    ListCursor cursor;
    cursor.unclicked = request.phase == ScanPhase::kUnclicked;
    cursor.clicks = by_clicks ? clicks : 0;
    cursor.create_time = link.create_time;
    cursor.id = id;
    walk.push_back({&link, cursor});
  }
  // The walk's order as a "comes before" on cursors.
  auto before = [&](const ListCursor& a, const ListCursor& b) {
    switch (request.phase) {
      case ScanPhase::kOldest:
        return std::tie(a.create_time, a.id) < std::tie(b.create_time, b.id);
      case ScanPhase::kClicked:
        return std::tie(a.clicks, a.id) > std::tie(b.clicks, b.id);
      case ScanPhase::kNewest:
      case ScanPhase::kUnclicked:
        break;
    }
    return std::tie(a.create_time, a.id) > std::tie(b.create_time, b.id);
  };
  std::sort(walk.begin(), walk.end(),
            [&](const Candidate& a, const Candidate& b) { return before(a.cursor, b.cursor); });
  ScanResult result;
  int scanned = 0;
  for (const Candidate& candidate : walk) {
    if (request.after.has_value() && !before(*request.after, candidate.cursor)) continue;
    if (MatchesListQuery(*candidate.link, LabelIdsOfLocked(*candidate.link), query)) {
      result.matches.push_back({*candidate.link, candidate.cursor});
    }
    if (++scanned == request.scan_limit) {
      result.budget_spent = true;
      result.last_scanned = candidate.cursor;
      break;
    }
    if (static_cast<int>(result.matches.size()) == request.match_limit) break;
  }
  return result;
}

void InMemoryLinkStore::SetAvailable(bool available) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  available_ = available;
}

size_t InMemoryLinkStore::LinkCount() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return links_.size();
}

std::vector<int64_t> InMemoryLinkStore::LabelIdsOf(int64_t id) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<int64_t> ids;
  auto link = links_.find(id);
  if (link == links_.end()) return ids;
  for (const auto& [key, value] : link->second.labels) {
    auto label = label_ids_.find(std::make_tuple(link->second.owner, key, value));
    if (label != label_ids_.end()) ids.push_back(label->second);
  }
  return ids;
}

absl::Status InMemoryLinkStore::CheckAvailable() const {
  if (available_) return absl::OkStatus();
  return absl::UnavailableError("in-memory link store: switched off by SetAvailable(false)");
}

std::optional<Link> InMemoryLinkStore::FindLink(int64_t id) const {
  auto it = links_.find(id);
  if (it == links_.end()) return std::nullopt;
  return it->second;
}

KeyState InMemoryLinkStore::ReadKeys(const BatchKeys& keys) const {
  KeyState state;
  for (const OwnerKey& key : keys.requests) {
    auto it = requests_.find(key);
    if (it == requests_.end()) continue;
    state.requests[key] = StoredRequest{it->second.long_url_sha256, FindLink(it->second.link_id)};
  }
  for (int64_t key : keys.dedupe) {
    auto it = dedupe_.find(key);
    if (it == dedupe_.end()) continue;
    std::optional<Link> link = FindLink(it->second);
    auto sha = link_sha_.find(it->second);
    state.dedupe[key] = StoredDedupe{it->second, std::move(link),
                                     sha == link_sha_.end() ? std::string() : sha->second};
  }
  for (const std::string& alias : keys.aliases) {
    if (aliases_.contains(alias)) state.aliases.insert(alias);
  }
  return state;
}

void InMemoryLinkStore::MakeLabelIds(absl::Span<const NewLink> links) {
  for (const NewLink& link : links) {
    if (link.labels.empty() || !ValidateNewLink(link).ok()) continue;
    for (const auto& [key, value] : link.labels) {
      const int64_t next_id = static_cast<int64_t>(label_ids_.size()) + 1;
      label_ids_.try_emplace(std::make_tuple(link.owner, key, value), next_id);
    }
  }
}

absl::Status InMemoryLinkStore::CheckFreshIds(const CreatePlan& plan) const {
  absl::flat_hash_set<int64_t> seen;
  for (size_t i : plan.new_links) {
    int64_t id = plan.results[i]->link.id;
    if (links_.contains(id) || !seen.insert(id).second) {
      return absl::InternalError(absl::StrCat(
          "create links: link id ", id, " exists already (ids must come from the allocator)"));
    }
  }
  return absl::OkStatus();
}

void InMemoryLinkStore::Apply(absl::Span<const NewLink> links, const CreatePlan& plan) {
  for (size_t i : plan.new_links) {
    const Link& link = plan.results[i]->link;
    links_[link.id] = link;
    link_sha_[link.id] = links[i].long_url_sha256;
    if (links[i].alias.has_value()) aliases_[*links[i].alias] = link.id;
  }
  for (const RequestWrite& w : plan.requests) {
    requests_[w.key] = Request{w.long_url_sha256, w.link_id};
  }
  for (const DedupeWrite& w : plan.dedupe) dedupe_[w.key] = w.link_id;
}

}  // namespace shortener::store
