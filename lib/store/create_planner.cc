// The low-level SHA256_* functions are deprecated in OpenSSL 3.0 but are the
// cheapest way to hash a few bytes (EVP allocates a context per call). This
// must precede every OpenSSL include.
#define OPENSSL_SUPPRESS_DEPRECATED

#include "lib/store/create_planner.h"

#include <openssl/sha.h>

#include <algorithm>
#include <map>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "lib/common/redirect_status.h"
#include "lib/common/store_time.h"
#include "lib/common/utf8.h"

namespace shortener::store {
namespace {

absl::Status CheckText(absl::string_view field, absl::string_view value) {
  if (IsStorableText(value)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, ": must be valid UTF-8 without NUL bytes"));
}

std::string Quote(absl::string_view s) { return absl::StrCat("\"", absl::CHexEscape(s), "\""); }

// Applies the rules of PlanCreate item by item, updating `state_` as it goes.
class Planner {
 public:
  Planner(absl::Span<const NewLink> links, KeyState state)
      : links_(links), state_(std::move(state)) {}

  CreatePlan Run() && {
    plan_.results.reserve(links_.size());
    plan_.new_links.reserve(links_.size());
    // Every item may add a key: grow the maps once, not by rehashing as a
    // 1000-link batch fills them.
    batch_targets_.reserve(links_.size());
    state_.requests.reserve(state_.requests.size() + links_.size());
    for (size_t i = 0; i < links_.size(); ++i) plan_.results.push_back(Item(i));
    for (auto& [key, write] : requests_) plan_.requests.push_back(std::move(write));
    for (auto& [key, write] : dedupe_) plan_.dedupe.push_back(std::move(write));
    return std::move(plan_);
  }

 private:
  absl::StatusOr<CreateOutcome> Item(size_t i) {
    const NewLink& in = links_[i];
    absl::Status valid = ValidateNewLink(in);
    if (!valid.ok()) return valid;
    if (in.request_id.has_value()) {
      auto it = state_.requests.find(OwnerKey(in.owner, *in.request_id));
      if (it != state_.requests.end()) return Replay(in, it->second);
    }
    if (in.alias.has_value()) {
      if (state_.aliases.contains(*in.alias)) {
        return absl::AlreadyExistsError(
            absl::StrCat("custom_alias ", Quote(*in.alias), " is already taken"));
      }
    }
    const bool dedupes = Dedupes(in);  // never with an alias
    const int64_t key = dedupes ? DedupeKey(in.owner, in.long_url_sha256, in.labels) : 0;
    bool key_held_by_other = false;
    if (auto made = dedupes ? batch_targets_.find(key) : batch_targets_.end();
        made != batch_targets_.end()) {
      // The key's target is a link this batch creates.
      const NewLink& first = links_[made->second];
      if (first.owner == in.owner && first.long_url_sha256 == in.long_url_sha256 &&
          first.labels == in.labels) {
        const Link& target = plan_.results[made->second]->link;
        if (IsLiveAt(target, StoreTime(in.create_time))) {
          RecordRequest(in, target);
          return CreateOutcome{target, false};
        }
      } else {
        key_held_by_other = true;
      }
    } else if (dedupes) {
      auto it = state_.dedupe.find(key);
      if (it != state_.dedupe.end() && it->second.link.has_value()) {
        const Link& target = *it->second.link;
        if (target.owner == in.owner && it->second.long_url_sha256 == in.long_url_sha256 &&
            target.labels == in.labels) {
          if (IsLiveAt(target, StoreTime(in.create_time))) {
            RecordRequest(in, target);
            return CreateOutcome{target, false};
          }
        } else {
          key_held_by_other = true;
        }
      }
    }
    Link link = NewRow(in);
    if (in.alias.has_value()) {
      state_.aliases.insert(*in.alias);
    } else if (dedupes && !key_held_by_other) {
      RecordDedupeTarget(i, link, key);
    }
    RecordRequest(in, link);
    plan_.new_links.push_back(i);
    return CreateOutcome{std::move(link), true};
  }

  static absl::StatusOr<CreateOutcome> Replay(const NewLink& in, const StoredRequest& seen) {
    if (seen.long_url_sha256 != in.long_url_sha256) {
      return absl::AlreadyExistsError(absl::StrCat("request_id ", Quote(*in.request_id),
                                                   " was already used with a different long_url"));
    }
    if (!seen.link.has_value()) {
      // Its link was deleted (DeleteLinks): a retry must not make another.
      return absl::FailedPreconditionError(
          absl::StrCat("request_id ", Quote(*in.request_id),
                       " was used for a link that has since been deleted"));
    }
    return CreateOutcome{*seen.link, false};
  }

  static Link NewRow(const NewLink& in) {
    Link link;
    link.id = in.id;
    link.alias = in.alias;
    link.long_url = in.long_url;
    link.owner = in.owner;
    link.redirect_status = in.redirect_status;
    link.create_time = StoreTime(in.create_time);
    if (in.expire_time.has_value()) link.expire_time = StoreTime(*in.expire_time);
    link.max_clicks = in.max_clicks;
    link.labels = in.labels;
    return link;
  }

  void RecordRequest(const NewLink& in, const Link& link) {
    if (!in.request_id.has_value()) return;
    OwnerKey key(in.owner, *in.request_id);
    state_.requests[key] = StoredRequest{in.long_url_sha256, link};
    requests_[key] = RequestWrite{key, in.long_url_sha256, link.id};
  }

  // Item i's new link becomes the target of `key` (again, when an earlier
  // item's link held it and has expired by item i's create time).
  void RecordDedupeTarget(size_t i, const Link& link, int64_t key) {
    DedupeWrite& write = dedupe_[key];
    // The row as the store holds it: absent (insert) or dead (repoint).
    auto stored = state_.dedupe.find(key);
    if (stored != state_.dedupe.end()) write.replaces = stored->second.link_id;
    write.key = key;
    write.link_id = link.id;
    batch_targets_[key] = i;
  }

  absl::Span<const NewLink> links_;
  KeyState state_;
  CreatePlan plan_;
  std::map<OwnerKey, RequestWrite> requests_;  // sorted: writers lock keys in one order
  std::map<int64_t, DedupeWrite> dedupe_;      // sorted, as requests_
  // Dedupe key -> the item whose new link holds it: later items of the batch
  // look here before state_, which only holds what the store had (keeping a
  // copy of every new link in state_ was ~3 % of a BatchShorten's service CPU).
  absl::flat_hash_map<int64_t, size_t> batch_targets_;
};

template <typename T>
void SortUnique(std::vector<T>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

bool IsStorableText(absl::string_view s) {
  return s.find('\0') == absl::string_view::npos && utf8::IsValid(s);
}

int64_t DedupeKey(absl::string_view owner, absl::string_view long_url_sha256,
                  const Labels& labels) {
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, owner.data(), owner.size());
  const unsigned char separator = 0;  // owner text never holds a NUL byte
  SHA256_Update(&ctx, &separator, 1);
  SHA256_Update(&ctx, long_url_sha256.data(), long_url_sha256.size());
  for (const auto& [key, value] : labels) {  // none: the key of before labels
    SHA256_Update(&ctx, key.data(), key.size());
    SHA256_Update(&ctx, &separator, 1);
    SHA256_Update(&ctx, value.data(), value.size());
    SHA256_Update(&ctx, &separator, 1);
  }
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256_Final(digest, &ctx);
  uint64_t key = 0;
  for (int i = 0; i < 8; ++i) key = (key << 8) | digest[i];
  return static_cast<int64_t>(key);  // two's complement, as bit(64)::bigint
}

bool IsLiveAt(const Link& link, absl::Time at) {
  return !link.revoke_time.has_value() && !link.clicks_exhausted_time.has_value() &&
         (!link.expire_time.has_value() || *link.expire_time > at);
}

bool Dedupes(const NewLink& link) {
  return link.dedupe && !link.alias.has_value() && !link.max_clicks.has_value();
}

absl::Status ValidateNewLink(const NewLink& link) {
  if (link.long_url_sha256.size() != 32) {
    return absl::InvalidArgumentError(
        absl::StrCat("long_url_sha256: must be 32 bytes, got ", link.long_url_sha256.size()));
  }
  if (!IsRedirectStatus(link.redirect_status)) {
    return absl::InvalidArgumentError(
        absl::StrCat("redirect_status: must be 301, 302, 307 or 308, got ", link.redirect_status));
  }
  absl::Status st = CheckText("long_url", link.long_url);
  if (st.ok()) st = CheckText("owner", link.owner);
  if (st.ok() && link.alias.has_value()) st = CheckText("custom_alias", *link.alias);
  if (st.ok() && link.request_id.has_value()) st = CheckText("request_id", *link.request_id);
  if (st.ok() && link.max_clicks.has_value() && *link.max_clicks <= 0) {
    st = absl::InvalidArgumentError(
        absl::StrCat("max_clicks: must be positive, got ", *link.max_clicks));
  }
  if (st.ok()) st = ValidateLabels(link.labels);
  return st;
}

BatchKeys CollectKeys(absl::Span<const NewLink> links) {
  BatchKeys keys;
  for (const NewLink& link : links) {
    if (!ValidateNewLink(link).ok()) continue;
    if (link.request_id.has_value()) keys.requests.emplace_back(link.owner, *link.request_id);
    if (link.alias.has_value()) {
      keys.aliases.push_back(*link.alias);
    } else if (Dedupes(link)) {
      keys.dedupe.push_back(DedupeKey(link.owner, link.long_url_sha256, link.labels));
    }
  }
  SortUnique(keys.requests);
  SortUnique(keys.dedupe);
  SortUnique(keys.aliases);
  return keys;
}

CreatePlan PlanCreate(absl::Span<const NewLink> links, KeyState state) {
  return Planner(links, std::move(state)).Run();
}

}  // namespace shortener::store
