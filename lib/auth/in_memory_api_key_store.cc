#include "lib/auth/in_memory_api_key_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/common/store_time.h"

namespace shortener::auth {

InMemoryApiKeyStore::InMemoryApiKeyStore(const Clock& clock) : clock_(clock) {}

absl::StatusOr<ApiKeyRecord> InMemoryApiKeyStore::Create(const NewApiKey& key) {
  absl::Status valid = ValidateNewApiKey(key);
  if (!valid.ok()) return valid;
  ApiKeyRecord record;
  record.name = key.name;
  record.tenant = key.infrastructure ? std::string() : key.tenant;
  record.infrastructure = key.infrastructure;
  record.key_hash = key.key_hash;
  record.scopes = key.scopes;
  record.allowed_domains = key.allowed_domains;
  record.rate_per_second = key.rate_per_second;
  record.burst = key.burst;
  record.create_time = StoreTime(clock_.Now());
  std::lock_guard<std::mutex> lock(mu_);
  if (by_hash_.contains(key.key_hash)) {
    return absl::AlreadyExistsError("create api key: a key with this hash exists already");
  }
  record.id = ++last_id_;
  by_hash_.emplace(record.key_hash, record.id);
  keys_.emplace(record.id, record);
  return record;
}

absl::StatusOr<ApiKeyRecord> InMemoryApiKeyStore::FindByHash(const std::string& key_hash) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_hash_.find(key_hash);
  if (it == by_hash_.end()) return absl::NotFoundError("no api key with this hash");
  return keys_.at(it->second);
}

absl::StatusOr<std::vector<ApiKeyRecord>> InMemoryApiKeyStore::List() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ApiKeyRecord> records;
  records.reserve(keys_.size());
  for (const auto& [id, record] : keys_) records.push_back(record);
  return records;
}

absl::StatusOr<ApiKeyRecord> InMemoryApiKeyStore::Revoke(int64_t id, absl::Time when) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = keys_.find(id);
  if (it == keys_.end()) return absl::NotFoundError(absl::StrCat("no api key with id ", id));
  if (!it->second.revoke_time.has_value()) it->second.revoke_time = StoreTime(when);
  return it->second;
}

}  // namespace shortener::auth
