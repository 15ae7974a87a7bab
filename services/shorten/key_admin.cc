#include "services/shorten/key_admin.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/auth/api_key.h"
#include "lib/common/log.h"
#include "lib/common/private_file.h"
#include "lib/common/status_macros.h"

namespace shortener::service {
namespace {

constexpr size_t kMaxNameLength = 200;
constexpr char kBootstrapName[] = "bootstrap-admin";
constexpr char kBootstrapTenant[] = "admin";
constexpr char kBootstrapFlag[] = "--bootstrap_admin_key_file";

absl::StatusOr<auth::NewApiKey> Validate(const ApiKeySpec& spec) {
  auth::NewApiKey key;
  if (spec.name.empty()) return absl::InvalidArgumentError("name: is required");
  if (spec.name.size() > kMaxNameLength || spec.tenant.size() > kMaxNameLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("name and tenant: at most ", kMaxNameLength, " bytes"));
  }
  key.name = spec.name;
  key.infrastructure = spec.infrastructure;
  if (spec.infrastructure && !spec.tenant.empty()) {
    return absl::InvalidArgumentError(
        "tenant: an infrastructure key has no tenant (it acts for every tenant); leave tenant "
        "empty, or make a tenant key without infrastructure");
  }
  if (!spec.infrastructure) key.tenant = spec.tenant.empty() ? spec.name : spec.tenant;
  if (spec.scopes.empty()) {
    return absl::InvalidArgumentError(
        "scopes: at least one is required (shorten, resolve, revoke, stats, admin; "
        "infrastructure keys: resolve, record_clicks, watch_invalidations)");
  }
  SHORTENER_ASSIGN_OR_RETURN(key.scopes, auth::ScopeSet::Parse(absl::StrJoin(spec.scopes, ",")));
  SHORTENER_RETURN_IF_ERROR(auth::ValidateKeyScopes(key.scopes, key.infrastructure));
  SHORTENER_ASSIGN_OR_RETURN(key.allowed_domains,
                             auth::DomainAllowlist::FromEntries(spec.allowed_domains));
  if (!std::isfinite(spec.rate_per_second) || spec.rate_per_second < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rate_per_second: must be 0 (no limit) or positive, got ", spec.rate_per_second));
  }
  if (spec.burst < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("burst: must not be negative, got ", spec.burst));
  }
  if (spec.rate_per_second > 0) {
    key.rate_per_second = spec.rate_per_second;
    key.burst = spec.burst > 0 ? spec.burst
                               : std::max(1, static_cast<int>(std::ceil(spec.rate_per_second)));
  } else if (spec.burst > 0) {
    return absl::InvalidArgumentError("burst: needs rate_per_second");
  }
  return key;
}

// The key in an existing bootstrap file, or NOT_FOUND when there is none.
absl::StatusOr<std::string> ReadBootstrapFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return absl::NotFoundError(path);
    return absl::InvalidArgumentError(
        absl::StrCat(kBootstrapFlag, ": cannot read ", path, ": ", std::strerror(errno)));
  }
  SHORTENER_RETURN_IF_ERROR(CheckSecretFile(path, kBootstrapFlag));
  std::stringstream content;
  content << in.rdbuf();
  std::string key(absl::StripAsciiWhitespace(content.str()));
  absl::Status valid = auth::ValidateBootstrapKey(key);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kBootstrapFlag, ": the key in ", path, ": ", valid.message()));
  }
  return key;
}

}  // namespace

KeyAdmin::KeyAdmin(auth::ApiKeyStore* store, const Clock& clock) : store_(store), clock_(clock) {}

absl::StatusOr<CreatedApiKey> KeyAdmin::Create(const ApiKeySpec& spec) {
  SHORTENER_ASSIGN_OR_RETURN(auth::NewApiKey key, Validate(spec));
  CreatedApiKey created;
  created.key = auth::GenerateApiKey();
  key.key_hash = auth::HashApiKey(created.key);
  SHORTENER_ASSIGN_OR_RETURN(created.record, store_->Create(key));
  LogInfo("api key %d \"%s\" created (%s, scopes %s)", created.record.id, created.record.name,
          created.record.infrastructure ? std::string("infrastructure")
                                        : absl::StrCat("tenant \"", created.record.tenant, "\""),
          created.record.scopes.ToString());
  return created;
}

absl::StatusOr<std::vector<auth::ApiKeyRecord>> KeyAdmin::List() { return store_->List(); }

absl::StatusOr<auth::ApiKeyRecord> KeyAdmin::Revoke(int64_t id) {
  SHORTENER_ASSIGN_OR_RETURN(auth::ApiKeyRecord record, store_->Revoke(id, clock_.Now()));
  LogInfo("api key %d \"%s\" revoked", record.id, record.name);
  return record;
}

absl::Status KeyAdmin::EnsureBootstrapAdminKey(const std::string& path) {
  absl::StatusOr<std::string> key = ReadBootstrapFile(path);
  if (absl::IsNotFound(key.status())) {
    std::string fresh = auth::GenerateApiKey();
    absl::Status written = CreatePrivateFile(path, fresh + "\n", kBootstrapFlag);
    if (written.ok()) {
      LogWarning("%s: wrote a new admin api key to %s (mode 0600)", kBootstrapFlag, path);
      key = std::move(fresh);
    } else if (absl::IsAlreadyExists(written)) {
      key = ReadBootstrapFile(path);  // another replica was first
    } else {
      return written;
    }
  }
  if (!key.ok()) return key.status();
  const std::string hash = auth::HashApiKey(*key);
  for (int attempt = 0; attempt < 2; ++attempt) {
    absl::StatusOr<auth::ApiKeyRecord> found = store_->FindByHash(hash);
    if (found.ok()) {
      if (found->revoke_time.has_value()) {
        return absl::FailedPreconditionError(
            absl::StrCat(kBootstrapFlag, ": the key in ", path, " (api key ", found->id,
                         ") was revoked; remove the file to have a new admin key generated"));
      }
      if (!found->scopes.Has(auth::Scope::kAdmin)) {
        return absl::FailedPreconditionError(
            absl::StrCat(kBootstrapFlag, ": the key in ", path, " is api key ", found->id, " \"",
                         found->name, "\", which is not an admin key"));
      }
      return absl::OkStatus();
    }
    if (!absl::IsNotFound(found.status())) return found.status();
    auth::NewApiKey admin;
    admin.key_hash = hash;
    admin.name = kBootstrapName;
    admin.tenant = kBootstrapTenant;
    admin.scopes = auth::ScopeSet{auth::Scope::kAdmin};
    absl::StatusOr<auth::ApiKeyRecord> created = store_->Create(admin);
    if (created.ok()) {
      LogInfo("%s: the key in %s is admin api key %d", kBootstrapFlag, path, created->id);
      return absl::OkStatus();
    }
    // Another replica stored it first: look again.
    if (!absl::IsAlreadyExists(created.status())) return created.status();
  }
  return absl::InternalError("bootstrap admin key: stored and not found");
}

}  // namespace shortener::service
