#include "services/shorten/authorizer.h"

#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/auth/api_key.h"

namespace shortener::service {
namespace {

// The one `authorization` value of the call, or UNAUTHENTICATED.
absl::StatusOr<std::string> BearerKey(const grpc::ServerContextBase* ctx) {
  const auto& metadata = ctx->client_metadata();
  auto [first, last] = metadata.equal_range("authorization");
  if (first == last) {
    return absl::UnauthenticatedError(
        "authorization: missing; send `authorization: Bearer <api key>` metadata");
  }
  if (std::next(first) != last) {
    return absl::UnauthenticatedError("authorization: sent more than once");
  }
  return auth::ParseBearer(absl::string_view(first->second.data(), first->second.size()));
}

}  // namespace

Authorizer::Authorizer(auth::KeyCache* keys, auth::RateLimiter* limiter, ThreadPool* lookup_pool,
                       const Clock& clock)
    : keys_(keys), limiter_(limiter), lookup_pool_(lookup_pool), clock_(clock) {}

auth::Scope Authorizer::RequiredScope(Rpc rpc) {
  using auth::Scope;
  switch (rpc) {
    case Rpc::kShorten:
    case Rpc::kBatchShorten:
    case Rpc::kUpdateLink:
      return Scope::kShorten;
    case Rpc::kResolve:
    case Rpc::kBatchResolve:
      return Scope::kResolve;
    case Rpc::kWatchInvalidations:
      return Scope::kWatchInvalidations;
    case Rpc::kGetLink:
    case Rpc::kListLinks:
    case Rpc::kGetClickStats:
    case Rpc::kGetQrCode:
      return Scope::kStats;
    case Rpc::kRevoke:
    case Rpc::kRevokeLinks:
      return Scope::kRevoke;
    case Rpc::kDeleteLink:
    case Rpc::kDeleteLinks:
      return Scope::kDelete;
    case Rpc::kRecordClicks:
      return Scope::kRecordClicks;
    case Rpc::kCreateApiKey:
    case Rpc::kListApiKeys:
    case Rpc::kRevokeApiKey:
      return Scope::kAdmin;
  }
  return Scope::kAdmin;  // an RPC added without a decision: admins only
}

void Authorizer::Authorize(grpc::ServerContextBase* ctx, Rpc rpc, int cost, Done done) {
  absl::StatusOr<std::string> key = BearerKey(ctx);
  if (!key.ok()) {
    done(key.status());
    return;
  }
  std::string hash = auth::HashApiKey(*key);
  if (std::optional<auth::KeyCache::Result> cached = keys_->Find(hash)) {
    if (!cached->ok()) {
      done(cached->status());
      return;
    }
    absl::Status admitted = Admit(ctx, rpc, cost, ***cached);
    if (admitted.ok()) {
      done(*std::move(*cached));
    } else {
      done(admitted);
    }
    return;
  }
  // `done` is copied in: a refusal (the pool is full) still has it.
  absl::Status queued =
      lookup_pool_->Schedule([this, ctx, rpc, cost, hash = std::move(hash), done] {
        // Calls that missed together queue here together: the first one's load
        // serves the rest.
        std::optional<auth::KeyCache::Result> cached = keys_->Find(hash);
        auth::KeyCache::Result loaded = cached.has_value() ? *std::move(cached) : keys_->Load(hash);
        if (!loaded.ok()) {
          done(loaded.status());
          return;
        }
        absl::Status admitted = Admit(ctx, rpc, cost, **loaded);
        if (admitted.ok()) {
          done(*std::move(loaded));
        } else {
          done(admitted);
        }
      });
  if (!queued.ok()) done(queued);
}

absl::Status Authorizer::Admit(grpc::ServerContextBase* ctx, Rpc rpc, int cost,
                               const auth::Principal& principal) {
  const auth::Scope needed = RequiredScope(rpc);
  if (!principal.scopes.Has(needed)) {
    return absl::PermissionDeniedError(absl::StrCat("api key \"", principal.key_name,
                                                    "\" lacks scope \"", auth::ScopeName(needed),
                                                    "\" (needed for ", RpcName(rpc), ")"));
  }
  if (!principal.rate_per_second.has_value()) return absl::OkStatus();
  const int burst = principal.burst.value_or(
      std::max(1, static_cast<int>(std::ceil(*principal.rate_per_second))));
  auth::RateLimiter::Decision decision = limiter_->TryAcquire(
      principal.key_hash, *principal.rate_per_second, burst, clock_.Now(), cost);
  if (decision.allowed) return absl::OkStatus();
  if (decision.retry_after == absl::InfiniteDuration()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("rate limit: ", cost, " requests at once exceed the burst of ", burst,
                     " of api key \"", principal.key_name, "\"; send smaller batches"));
  }
  const int64_t wait_ms =
      absl::ToInt64Milliseconds(absl::Ceil(decision.retry_after, absl::Milliseconds(1)));
  ctx->AddTrailingMetadata(kRetryAfterMetadata, std::to_string(wait_ms));
  return absl::ResourceExhaustedError(absl::StrFormat(
      "rate limit of api key \"%s\" exceeded (%g requests/s, burst %d); retry in %d ms",
      principal.key_name, *principal.rate_per_second, burst, wait_ms));
}

}  // namespace shortener::service
