// Authorizer over a KeyCache, an InMemoryApiKeyStore (wrapped in a
// FaultyApiKeyStore to count, fail and hold look-ups) and a ManualClock:
// every decision it makes. The `authorization` metadata goes in through a
// plain grpc::ServerContext (ServerContextTestSpouse), so no server runs.
#include "services/shorten/authorizer.h"

#include <grpcpp/test/server_context_test_spouse.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "lib/auth/api_key.h"
#include "lib/auth/in_memory_api_key_store.h"
#include "services/shorten/key_admin.h"
#include "tests/support/fault_plan.h"
#include "tests/support/faulty_api_key_store.h"
#include "tests/support/status_matchers.h"

namespace shortener::service {
namespace {

using ::shortener::testing::FaultPlan;
using ::shortener::testing::FaultyApiKeyStore;
using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;
using PrincipalPtr = Authorizer::PrincipalPtr;

constexpr Rpc kAllRpcs[] = {
    Rpc::kShorten,      Rpc::kBatchShorten,  Rpc::kResolve,
    Rpc::kBatchResolve, Rpc::kGetLink,       Rpc::kListLinks,
    Rpc::kGetQrCode,    Rpc::kRevoke,        Rpc::kUpdateLink,
    Rpc::kDeleteLink,   Rpc::kRevokeLinks,   Rpc::kDeleteLinks,
    Rpc::kRecordClicks, Rpc::kGetClickStats, Rpc::kWatchInvalidations,
    Rpc::kCreateApiKey, Rpc::kListApiKeys,   Rpc::kRevokeApiKey,
};
static_assert(sizeof(kAllRpcs) / sizeof(kAllRpcs[0]) == kRpcCount);

// One call being authorized: its server context with the metadata sent,
// and what `done` was given.
struct Call {
  grpc::ServerContext ctx;
  grpc::testing::ServerContextTestSpouse spouse{&ctx};
  std::promise<absl::StatusOr<PrincipalPtr>> promise;
  std::future<absl::StatusOr<PrincipalPtr>> future = promise.get_future();
  std::thread::id done_thread;

  // Waits for `done`.
  absl::StatusOr<PrincipalPtr> Result() { return future.get(); }
  // The `retry-after-ms` trailing metadata, or "" when none was added.
  std::string RetryAfter() const {
    std::multimap<std::string, std::string> trailing = spouse.GetTrailingMetadata();
    auto it = trailing.find(kRetryAfterMetadata);
    return it == trailing.end() ? "" : it->second;
  }
};

// Keys, a cache, a rate limiter and the Authorizer, with a one-thread key
// look-up pool that queues two look-ups at most.
struct Access {
  ManualClock clock;
  auth::InMemoryApiKeyStore keys{clock};
  FaultPlan plan;
  FaultyApiKeyStore store{&keys, &plan};
  auth::KeyCache cache{&store, clock};
  auth::RateLimiter limiter;
  KeyAdmin admin{&keys, clock};
  // Declared before the pool, so that the pool (destroyed first) runs what
  // is queued while the Authorizer still exists.
  Authorizer authorizer{&cache, &limiter, &lookup_pool, clock};
  ThreadPool lookup_pool{ThreadPoolOptions{"key look-up pool", 1, 2}};

  // A new key as KeyAdmin makes it; returns the key itself.
  std::string NewKey(ApiKeySpec spec) {
    absl::StatusOr<CreatedApiKey> created = admin.Create(spec);
    REQUIRE_THAT(created, IsOk());
    return created->key;
  }
  std::string TenantKey(const std::string& name, std::vector<std::string> scopes) {
    ApiKeySpec spec;
    spec.name = name;
    spec.scopes = std::move(scopes);
    return NewKey(spec);
  }
  int64_t id_of(const std::string& key) {
    absl::StatusOr<auth::ApiKeyRecord> record = keys.FindByHash(auth::HashApiKey(key));
    REQUIRE_THAT(record, IsOk());
    return record->id;
  }

  // Starts authorizing a call that sends these `authorization` values.
  std::unique_ptr<Call> Start(const std::vector<std::string>& authorization, Rpc rpc,
                              int cost = 1) {
    auto call = std::make_unique<Call>();
    for (const std::string& value : authorization) {
      call->spouse.AddClientMetadata("authorization", value);
    }
    Call* c = call.get();
    authorizer.Authorize(&c->ctx, rpc, cost, [c](absl::StatusOr<PrincipalPtr> result) {
      c->done_thread = std::this_thread::get_id();
      // A status of its own for the test's thread: copies of an absl::Status
      // share their message through a reference count inside Debian's
      // abseil, which ThreadSanitizer cannot see (a false data race).
      if (!result.ok()) result = absl::Status(result.status().code(), result.status().message());
      c->promise.set_value(std::move(result));
    });
    return call;
  }
  // Authorizes a call with `key` as its Bearer key and waits for the answer.
  absl::StatusOr<PrincipalPtr> Check(const std::string& key, Rpc rpc, int cost = 1) {
    return Start({"Bearer " + key}, rpc, cost)->Result();
  }
  int64_t lookups() const { return plan.calls("FindByHash"); }
};

TEST_CASE("a call without a usable authorization value is UNAUTHENTICATED and asks no store",
          "[services/shorten][auth]") {
  Access a;
  const std::string key = a.TenantKey("campaigns", {"shorten"});
  CHECK_THAT(a.Start({}, Rpc::kShorten)->Result(),
             HasCodeAndMessage(absl::StatusCode::kUnauthenticated,
                               "authorization: missing; send `authorization: Bearer <api key>`"));
  CHECK_THAT(
      a.Start({"Bearer " + key, "Bearer " + key}, Rpc::kShorten)->Result(),
      HasCodeAndMessage(absl::StatusCode::kUnauthenticated, "authorization: sent more than once"));
  CHECK_THAT(a.Start({"Basic " + key}, Rpc::kShorten)->Result(),
             HasCodeAndMessage(absl::StatusCode::kUnauthenticated, "authorization: "));
  CHECK_THAT(a.Start({"Bearer "}, Rpc::kShorten)->Result(),
             HasCodeAndMessage(absl::StatusCode::kUnauthenticated, "authorization: "));
  CHECK(a.lookups() == 0);
  // The same key, sent once and well-formed, is admitted.
  CHECK_THAT(a.Check(key, Rpc::kShorten), IsOk());
}

TEST_CASE("an unknown key is UNAUTHENTICATED and a revoked one too", "[services/shorten][auth]") {
  Access a;
  CHECK_THAT(a.Check(auth::GenerateApiKey(), Rpc::kResolve),
             HasCodeAndMessage(absl::StatusCode::kUnauthenticated, "api key unknown"));
  const std::string key = a.TenantKey("gone", {"resolve"});
  REQUIRE_THAT(a.admin.Revoke(a.id_of(key)), IsOk());
  CHECK_THAT(a.Check(key, Rpc::kResolve),
             HasCodeAndMessage(absl::StatusCode::kUnauthenticated, "api key revoked"));
}

TEST_CASE("an admitted call gets the principal of its key", "[services/shorten][auth]") {
  Access a;
  ApiKeySpec spec;
  spec.name = "campaigns";
  spec.tenant = "acme";
  spec.scopes = {"shorten", "stats"};
  spec.allowed_domains = {"example.com", "*.example.org"};
  const std::string key = a.NewKey(spec);
  absl::StatusOr<PrincipalPtr> admitted = a.Check(key, Rpc::kShorten);
  REQUIRE_THAT(admitted, IsOk());
  const auth::Principal& p = **admitted;
  CHECK(p.key_id == a.id_of(key));
  CHECK(p.key_name == "campaigns");
  CHECK(p.key_hash == auth::HashApiKey(key));
  CHECK(p.tenant == "acme");
  CHECK_FALSE(p.infrastructure);
  CHECK_FALSE(p.admin());
  // The allow-list the Shortener checks target domains against.
  CHECK(p.allowed_domains.Allows("example.com"));
  CHECK(p.allowed_domains.Allows("a.example.org"));
  CHECK_FALSE(p.allowed_domains.Allows("example.org"));
  CHECK_FALSE(p.allowed_domains.Allows("evil.com"));
}

TEST_CASE("each RPC needs its one scope", "[services/shorten][auth]") {
  using auth::Scope;
  const std::map<Rpc, Scope> policy = {
      {Rpc::kShorten, Scope::kShorten},
      {Rpc::kBatchShorten, Scope::kShorten},
      {Rpc::kResolve, Scope::kResolve},
      {Rpc::kBatchResolve, Scope::kResolve},
      {Rpc::kGetLink, Scope::kStats},
      {Rpc::kListLinks, Scope::kStats},
      {Rpc::kGetQrCode, Scope::kStats},
      {Rpc::kGetClickStats, Scope::kStats},
      {Rpc::kRevoke, Scope::kRevoke},
      {Rpc::kUpdateLink, Scope::kShorten},
      {Rpc::kDeleteLink, Scope::kDelete},
      {Rpc::kRevokeLinks, Scope::kRevoke},
      {Rpc::kDeleteLinks, Scope::kDelete},
      {Rpc::kRecordClicks, Scope::kRecordClicks},
      {Rpc::kWatchInvalidations, Scope::kWatchInvalidations},
      {Rpc::kCreateApiKey, Scope::kAdmin},
      {Rpc::kListApiKeys, Scope::kAdmin},
      {Rpc::kRevokeApiKey, Scope::kAdmin},
  };
  REQUIRE(policy.size() == kRpcCount);
  for (Rpc rpc : kAllRpcs) {
    INFO(RpcName(rpc));
    CHECK(Authorizer::RequiredScope(rpc) == policy.at(rpc));
  }
}

TEST_CASE("a key without the RPC's scope is PERMISSION_DENIED naming key, scope and RPC",
          "[services/shorten][auth]") {
  Access a;
  const std::string key = a.TenantKey("campaigns", {"shorten", "stats"});
  CHECK_THAT(a.Check(key, Rpc::kRevoke),
             HasCodeAndMessage(absl::StatusCode::kPermissionDenied,
                               "api key \"campaigns\" lacks scope \"revoke\" (needed for Revoke)"));
  CHECK_THAT(a.Check(key, Rpc::kCreateApiKey),
             HasCodeAndMessage(absl::StatusCode::kPermissionDenied,
                               "lacks scope \"admin\" (needed for CreateApiKey)"));
  CHECK_THAT(a.Check(key, Rpc::kGetClickStats), IsOk());
}

// The RPCs `key` is admitted to.
std::vector<Rpc> Admitted(Access& a, const std::string& key) {
  std::vector<Rpc> admitted;
  for (Rpc rpc : kAllRpcs) {
    absl::StatusOr<PrincipalPtr> result = a.Check(key, rpc);
    if (result.ok()) {
      admitted.push_back(rpc);
    } else {
      INFO(RpcName(rpc));
      CHECK_THAT(result, HasCode(absl::StatusCode::kPermissionDenied));
    }
  }
  return admitted;
}

TEST_CASE("tenant, infrastructure and admin keys reach exactly their RPCs",
          "[services/shorten][auth]") {
  Access a;
  const std::string tenant = a.TenantKey("tenant", {"shorten", "resolve", "revoke", "stats"});
  CHECK(Admitted(a, tenant) == std::vector<Rpc>{Rpc::kShorten, Rpc::kBatchShorten, Rpc::kResolve,
                                                Rpc::kBatchResolve, Rpc::kGetLink, Rpc::kListLinks,
                                                Rpc::kGetQrCode, Rpc::kRevoke, Rpc::kUpdateLink,
                                                Rpc::kRevokeLinks, Rpc::kGetClickStats});
  // Deleting needs a scope of its own: a revoke key cannot erase.
  const std::string deleter = a.TenantKey("deleter", {"delete"});
  CHECK(Admitted(a, deleter) == std::vector<Rpc>{Rpc::kDeleteLink, Rpc::kDeleteLinks});

  ApiKeySpec edge;
  edge.name = "edge-eu-1";
  edge.infrastructure = true;
  edge.scopes = {"resolve", "record_clicks", "watch_invalidations"};
  const std::string infrastructure = a.NewKey(edge);
  absl::StatusOr<PrincipalPtr> principal = a.Check(infrastructure, Rpc::kResolve);
  REQUIRE_THAT(principal, IsOk());
  CHECK((*principal)->infrastructure);
  CHECK((*principal)->tenant.empty());
  CHECK(Admitted(a, infrastructure) == std::vector<Rpc>{Rpc::kResolve, Rpc::kBatchResolve,
                                                        Rpc::kRecordClicks,
                                                        Rpc::kWatchInvalidations});

  const std::string admin = a.TenantKey("root", {"admin"});
  CHECK(Admitted(a, admin) == std::vector<Rpc>(std::begin(kAllRpcs), std::end(kAllRpcs)));
}

TEST_CASE("a rate-limited key gets its burst, then waits 1/rate, refilled by the clock",
          "[services/shorten][auth]") {
  Access a;
  ApiKeySpec spec;
  spec.name = "limited";
  spec.scopes = {"shorten"};
  spec.rate_per_second = 2;
  spec.burst = 2;
  const std::string key = a.NewKey(spec);
  const std::string other = a.TenantKey("unlimited", {"shorten"});

  CHECK_THAT(a.Check(key, Rpc::kShorten), IsOk());
  CHECK_THAT(a.Check(key, Rpc::kShorten), IsOk());
  std::unique_ptr<Call> refused = a.Start({"Bearer " + key}, Rpc::kShorten);
  CHECK_THAT(refused->Result(),
             HasCodeAndMessage(absl::StatusCode::kResourceExhausted,
                               "rate limit of api key \"limited\" exceeded (2 requests/s, "
                               "burst 2); retry in 500 ms"));
  CHECK(refused->RetryAfter() == "500");
  // Another key has its own bucket; one without a limit has none.
  for (int i = 0; i < 20; ++i) REQUIRE_THAT(a.Check(other, Rpc::kShorten), IsOk());

  a.clock.Advance(absl::Microseconds(499500));
  refused = a.Start({"Bearer " + key}, Rpc::kShorten);
  CHECK_THAT(refused->Result(), HasCodeAndMessage(absl::StatusCode::kResourceExhausted,
                                                  "retry in 1 ms"));  // rounded up
  CHECK(refused->RetryAfter() == "1");
  a.clock.Advance(absl::Microseconds(500));
  CHECK_THAT(a.Check(key, Rpc::kShorten), IsOk());
  CHECK_THAT(a.Check(key, Rpc::kShorten), HasCode(absl::StatusCode::kResourceExhausted));

  // A batch costs its items, all or none.
  a.clock.Advance(absl::Seconds(1));  // full again: 2 tokens
  CHECK_THAT(a.Check(key, Rpc::kShorten, 2), IsOk());
  a.clock.Advance(absl::Seconds(1));
  std::unique_ptr<Call> too_big = a.Start({"Bearer " + key}, Rpc::kShorten, 3);
  CHECK_THAT(too_big->Result(),
             HasCodeAndMessage(absl::StatusCode::kResourceExhausted,
                               "rate limit: 3 requests at once exceed the burst of 2 of api key "
                               "\"limited\"; send smaller batches"));
  CHECK(too_big->RetryAfter().empty());                // waiting would not help
  CHECK_THAT(a.Check(key, Rpc::kShorten, 2), IsOk());  // the refusal took nothing
}

TEST_CASE("a stored rate without a burst gets ceil(rate) as its burst",
          "[services/shorten][auth]") {
  Access a;
  auth::NewApiKey raw;  // as written by something other than KeyAdmin
  const std::string key = auth::GenerateApiKey();
  raw.key_hash = auth::HashApiKey(key);
  raw.name = "raw";
  raw.tenant = "acme";
  raw.scopes = auth::ScopeSet{auth::Scope::kShorten};
  raw.rate_per_second = 2.5;
  REQUIRE_THAT(a.keys.Create(raw), IsOk());
  for (int i = 0; i < 3; ++i) CHECK_THAT(a.Check(key, Rpc::kShorten), IsOk());
  CHECK_THAT(a.Check(key, Rpc::kShorten),
             HasCodeAndMessage(absl::StatusCode::kResourceExhausted, "(2.5 requests/s, burst 3)"));
}

TEST_CASE("a cached key is answered on the calling thread, a miss on the look-up pool",
          "[services/shorten][auth][concurrent]") {
  Access a;
  const std::string key = a.TenantKey("campaigns", {"shorten"});
  std::unique_ptr<Call> first = a.Start({"Bearer " + key}, Rpc::kShorten);
  CHECK_THAT(first->Result(), IsOk());
  CHECK(first->done_thread != std::this_thread::get_id());
  std::unique_ptr<Call> second = a.Start({"Bearer " + key}, Rpc::kShorten);
  // Answered before Authorize returned.
  REQUIRE(second->future.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
  CHECK_THAT(second->Result(), IsOk());
  CHECK(second->done_thread == std::this_thread::get_id());
  CHECK(a.lookups() == 1);
}

TEST_CASE("a key is looked up again once its ttl passes, so a revocation applies by then",
          "[services/shorten][auth]") {
  Access a;
  const std::string key = a.TenantKey("campaigns", {"shorten"});
  REQUIRE_THAT(a.Check(key, Rpc::kShorten), IsOk());
  REQUIRE_THAT(a.admin.Revoke(a.id_of(key)), IsOk());
  // Within the ttl (10 s by default) the cached answer stands...
  a.clock.Advance(absl::Seconds(9));
  CHECK_THAT(a.Check(key, Rpc::kShorten), IsOk());
  CHECK(a.lookups() == 1);
  // ...and then the store is asked again.
  a.clock.Advance(absl::Seconds(1));
  CHECK_THAT(a.Check(key, Rpc::kShorten),
             HasCodeAndMessage(absl::StatusCode::kUnauthenticated, "api key revoked"));
  CHECK(a.lookups() == 2);
}

TEST_CASE("a revocation announced to the cache applies to the next call",
          "[services/shorten][auth]") {
  Access a;
  const std::string key = a.TenantKey("campaigns", {"shorten"});
  REQUIRE_THAT(a.Check(key, Rpc::kShorten), IsOk());
  REQUIRE_THAT(a.admin.Revoke(a.id_of(key)), IsOk());
  a.cache.Invalidate(auth::HashApiKey(key));  // what the NOTIFY listener does
  CHECK_THAT(a.Check(key, Rpc::kShorten),
             HasCodeAndMessage(absl::StatusCode::kUnauthenticated, "api key revoked"));
}

TEST_CASE("unknown keys are remembered for the negative ttl: one look-up per second",
          "[services/shorten][auth]") {
  Access a;
  const std::string wrong = auth::GenerateApiKey();
  for (int i = 0; i < 5; ++i) {
    CHECK_THAT(a.Check(wrong, Rpc::kResolve), HasCode(absl::StatusCode::kUnauthenticated));
  }
  CHECK(a.lookups() == 1);
  a.clock.Advance(absl::Seconds(1));
  CHECK_THAT(a.Check(wrong, Rpc::kResolve), HasCode(absl::StatusCode::kUnauthenticated));
  CHECK(a.lookups() == 2);
}

TEST_CASE("a store outage is UNAVAILABLE for that call only", "[services/shorten][auth]") {
  Access a;
  const std::string key = a.TenantKey("campaigns", {"shorten"});
  a.plan.FailNext(1, absl::UnavailableError("database unavailable"), "FindByHash");
  CHECK_THAT(a.Check(key, Rpc::kShorten),
             HasCodeAndMessage(absl::StatusCode::kUnavailable, "database unavailable"));
  // Not cached: the next call asks again and gets in.
  CHECK_THAT(a.Check(key, Rpc::kShorten), IsOk());
  CHECK(a.lookups() == 2);
}

TEST_CASE("calls that miss together share one look-up", "[services/shorten][auth][concurrent]") {
  Access a;
  const std::string key = a.TenantKey("campaigns", {"shorten"});
  a.plan.CloseGate();
  std::unique_ptr<Call> first = a.Start({"Bearer " + key}, Rpc::kShorten);
  const bool held = a.plan.WaitForCalls(1, "FindByHash");
  std::unique_ptr<Call> second = a.Start({"Bearer " + key}, Rpc::kShorten);  // queued
  a.plan.OpenGate();
  REQUIRE(held);
  CHECK_THAT(first->Result(), IsOk());
  CHECK_THAT(second->Result(), IsOk());
  CHECK(a.lookups() == 1);
}

TEST_CASE("a full look-up pool refuses with RESOURCE_EXHAUSTED naming it",
          "[services/shorten][auth][concurrent]") {
  Access a;
  a.plan.CloseGate();
  // One look-up runs (held at the gate), two wait: the pool's bound.
  std::vector<std::unique_ptr<Call>> admitted;
  admitted.push_back(a.Start({"Bearer " + auth::GenerateApiKey()}, Rpc::kResolve));
  const bool held = a.plan.WaitForCalls(1, "FindByHash");
  admitted.push_back(a.Start({"Bearer " + auth::GenerateApiKey()}, Rpc::kResolve));
  admitted.push_back(a.Start({"Bearer " + auth::GenerateApiKey()}, Rpc::kResolve));
  std::unique_ptr<Call> refused = a.Start({"Bearer " + auth::GenerateApiKey()}, Rpc::kResolve);
  const bool refused_at_once =
      refused->future.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  a.plan.OpenGate();
  REQUIRE(held);
  CHECK(refused_at_once);
  CHECK_THAT(refused->Result(),
             HasCodeAndMessage(absl::StatusCode::kResourceExhausted, "key look-up pool is full"));
  for (std::unique_ptr<Call>& call : admitted) {
    CHECK_THAT(call->Result(), HasCode(absl::StatusCode::kUnauthenticated));
  }
  CHECK(a.lookups() == 3);
}

}  // namespace
}  // namespace shortener::service
