// Authorizer: the one place where shorten-service decides whether a call
// may proceed. Every ShortenService handler calls Authorize first (through
// ShortenServiceImpl's wrapper); nothing else checks keys, scopes or rates.
//
// For a call it
//  1. reads `authorization: Bearer <key>` from the client metadata
//     (UNAUTHENTICATED naming the problem: missing, repeated, malformed);
//  2. finds the key by its SHA-256 in the KeyCache, loading it from the
//     database on `lookup_pool` on a miss, so a reactor thread never blocks
//     (UNAUTHENTICATED for an unknown or revoked key; UNAVAILABLE when the
//     database cannot say; RESOURCE_EXHAUSTED naming the pool when its
//     queue is full: a flood of unknown keys);
//  3. checks the scope the RPC needs (RequiredScope): PERMISSION_DENIED
//     `api key "name" lacks scope "revoke"`;
//  4. takes `cost` tokens from the key's bucket when it has a rate limit,
//     at the Clock's time: RESOURCE_EXHAUSTED saying how long to wait, also
//     as trailing metadata `retry-after-ms` (whole milliseconds, rounded
//     up).
// Ownership and target domains depend on the request and are the domain
// logic's (Shortener), given the Principal this returns.
//
// Thread-safe.
#ifndef SHORTENER_SERVICES_SHORTEN_AUTHORIZER_H_
#define SHORTENER_SERVICES_SHORTEN_AUTHORIZER_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "lib/auth/key_cache.h"
#include "lib/auth/principal.h"
#include "lib/auth/scopes.h"
#include "lib/auth/token_bucket.h"
#include "lib/common/clock.h"
#include "lib/common/thread_pool.h"
#include "services/shorten/rpc_counters.h"

namespace shortener::service {

// Metadata key of the wait in RESOURCE_EXHAUSTED answers.
inline constexpr char kRetryAfterMetadata[] = "retry-after-ms";

class Authorizer {
 public:
  using PrincipalPtr = std::shared_ptr<const auth::Principal>;
  using Done = std::function<void(absl::StatusOr<PrincipalPtr>)>;

  // All outlive the Authorizer.
  Authorizer(auth::KeyCache* keys, auth::RateLimiter* limiter, ThreadPool* lookup_pool,
             const Clock& clock);

  // The scope each RPC needs: the whole access policy in one table.
  static auth::Scope RequiredScope(Rpc rpc);

  // Decides as described above and calls `done` once: on the calling thread
  // when the key is cached, else on `lookup_pool`. On RESOURCE_EXHAUSTED the
  // wait is already added to `ctx`'s trailing metadata. `ctx` must stay
  // valid until `done` runs (it does: the call is not finished before).
  // (Any server context: the service passes its CallbackServerContext, the
  // unit tests a plain ServerContext with metadata injected.)
  void Authorize(grpc::ServerContextBase* ctx, Rpc rpc, int cost, Done done);

 private:
  // Steps 3 and 4 for a known principal.
  absl::Status Admit(grpc::ServerContextBase* ctx, Rpc rpc, int cost,
                     const auth::Principal& principal);

  auth::KeyCache* const keys_;
  auth::RateLimiter* const limiter_;
  ThreadPool* const lookup_pool_;
  const Clock& clock_;
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_AUTHORIZER_H_
