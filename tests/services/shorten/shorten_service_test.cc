// ShortenServiceImpl over gRPC, against the in-memory twins of
// ServiceHarness: the key RPCs (CreateApiKey, ListApiKeys, RevokeApiKey),
// WatchInvalidations, the request limits checked before the key, and
// RESOURCE_EXHAUSTED from every bounded queue behind the service (the
// blocking pool, the read batcher, the key look-up pool, the hub's
// subscribers). The link RPCs are in shorten_service_links_test.cc, the
// click RPCs in shorten_service_clicks_test.cc.
#include <catch2/catch.hpp>
#include <functional>
#include <future>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "lib/grpcutil/status.h"
#include "tests/services/shorten/service_harness.h"
#include "tests/support/status_matchers.h"

namespace shortener::service {
namespace {

using shortener::testing::HasCode;
using shortener::testing::HasCodeAndMessage;
using shortener::testing::IsOk;
using Stub = v1::ShortenService::Stub;

TEST_CASE("CreateApiKey maps every field, answers the key once, and the key works",
          "[services/shorten][rpc][keys]") {
  ServiceHarness h;
  v1::CreateApiKeyRequest request;
  request.set_name("acme-campaigns");
  request.set_tenant("acme");
  request.add_scopes("shorten");
  request.add_scopes("stats");
  request.add_allowed_domains("acme.com");
  request.add_allowed_domains("*.acme.com");
  request.set_rate_per_second(2.5);
  request.set_burst(10);
  v1::CreateApiKeyResponse response;
  REQUIRE_THAT(h.Call(&Stub::CreateApiKey, h.admin_key, request, &response), IsOk());
  CHECK(response.key().size() >= 32);
  const v1::ApiKey& key = response.api_key();
  CHECK(key.id() == 2);  // after the harness's admin key
  CHECK(key.name() == "acme-campaigns");
  CHECK(key.tenant() == "acme");
  CHECK_FALSE(key.infrastructure());
  CHECK(std::vector<std::string>(key.scopes().begin(), key.scopes().end()) ==
        std::vector<std::string>{"shorten", "stats"});
  CHECK(std::vector<std::string>(key.allowed_domains().begin(), key.allowed_domains().end()) ==
        std::vector<std::string>{"*.acme.com", "acme.com"});
  CHECK(key.rate_per_second() == 2.5);
  CHECK(key.burst() == 10);
  CHECK(grpcutil::FromProtoTimestamp(key.create_time()) == kStackNow);
  CHECK_FALSE(key.has_revoke_time());

  v1::ShortenRequest shorten;
  shorten.set_long_url("https://www.acme.com/spring");
  v1::ShortenResponse link;
  REQUIRE_THAT(h.Call(&Stub::Shorten, response.key(), shorten, &link), IsOk());
  CHECK(link.link().owner() == "acme");
}

TEST_CASE("CreateApiKey refuses bad fields, non-admins, and fails in an outage",
          "[services/shorten][rpc][keys]") {
  ServiceHarness h;
  v1::CreateApiKeyResponse response;
  v1::CreateApiKeyRequest nameless;
  nameless.add_scopes("shorten");
  CHECK_THAT(h.Call(&Stub::CreateApiKey, h.admin_key, nameless, &response),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "name: is required"));
  v1::CreateApiKeyRequest unknown_scope;
  unknown_scope.set_name("typo");
  unknown_scope.add_scopes("shortn");
  CHECK_THAT(h.Call(&Stub::CreateApiKey, h.admin_key, unknown_scope, &response),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "scopes: "));
  v1::CreateApiKeyRequest request;
  request.set_name("acme");
  request.add_scopes("shorten");
  const std::string tenant = h.TenantKey("tenant");
  CHECK_THAT(h.Call(&Stub::CreateApiKey, tenant, request, &response),
             HasCodeAndMessage(absl::StatusCode::kPermissionDenied,
                               "lacks scope \"admin\" (needed for CreateApiKey)"));
  h.key_faults.FailNext(1, absl::UnavailableError("api_keys: connection refused"), "Create");
  CHECK_THAT(h.Call(&Stub::CreateApiKey, h.admin_key, request, &response),
             HasCodeAndMessage(absl::StatusCode::kUnavailable, kOutageMessage));
}

TEST_CASE("ListApiKeys and RevokeApiKey answer key records, revoked ones included",
          "[services/shorten][rpc][keys]") {
  ServiceHarness h;
  h.TenantKey("acme");
  h.EdgeKey("edge-1");
  h.clock.Advance(absl::Minutes(1));
  v1::RevokeApiKeyRequest revoke;
  revoke.set_id(2);
  v1::ApiKey revoked;
  REQUIRE_THAT(h.Call(&Stub::RevokeApiKey, h.admin_key, revoke, &revoked), IsOk());
  CHECK(revoked.name() == "acme");
  CHECK(grpcutil::FromProtoTimestamp(revoked.revoke_time()) == kStackNow + absl::Minutes(1));

  v1::ListApiKeysResponse list;
  REQUIRE_THAT(h.Call(&Stub::ListApiKeys, h.admin_key, v1::ListApiKeysRequest(), &list), IsOk());
  REQUIRE(list.api_keys_size() == 3);
  CHECK(list.api_keys(0).name() == "harness-admin");
  CHECK(list.api_keys(1).name() == "acme");
  CHECK(list.api_keys(1).has_revoke_time());
  CHECK(list.api_keys(2).name() == "edge-1");
  CHECK(list.api_keys(2).infrastructure());
  CHECK(list.api_keys(2).tenant().empty());

  revoke.set_id(99);
  CHECK_THAT(h.Call(&Stub::RevokeApiKey, h.admin_key, revoke, &revoked),
             HasCodeAndMessage(absl::StatusCode::kNotFound, "no api key with id 99"));
  h.key_faults.FailNext(1, absl::UnavailableError("api_keys: connection refused"), "List");
  CHECK_THAT(h.Call(&Stub::ListApiKeys, h.admin_key, v1::ListApiKeysRequest(), &list),
             HasCodeAndMessage(absl::StatusCode::kUnavailable, kOutageMessage));
}

TEST_CASE("WatchInvalidations streams the codes revoked, and ends when the hub closes",
          "[services/shorten][rpc][watch]") {
  ServiceHarness h;
  const std::string tenant = h.TenantKey("acme");
  const std::string code = h.NewCode(tenant, "https://example.com/watched");
  std::unique_ptr<grpc::ClientContext> ctx = ServiceHarness::Context(h.EdgeKey());
  v1::WatchInvalidationsRequest request;
  request.set_subscriber("edge-1");
  std::unique_ptr<grpc::ClientReader<v1::Invalidation>> stream =
      h.stub->WatchInvalidations(ctx.get(), request);
  // A new subscriber trusts nothing it cached before: drop_all first.
  v1::Invalidation invalidation;
  REQUIRE(stream->Read(&invalidation));
  CHECK(invalidation.drop_all());
  v1::RevokeRequest revoke;
  revoke.set_code(code);
  v1::Link revoked;
  REQUIRE_THAT(h.Call(&Stub::Revoke, tenant, revoke, &revoked), IsOk());
  REQUIRE(stream->Read(&invalidation));
  CHECK(std::vector<std::string>(invalidation.codes().begin(), invalidation.codes().end()) ==
        std::vector<std::string>{code});
  CHECK_FALSE(invalidation.drop_all());
  h.hub.Close();
  while (stream->Read(&invalidation)) {
  }
  // UNAVAILABLE, or CANCELLED when the close met the last write's
  // completion still in flight (invalidation_stream.h).
  const absl::Status ended = grpcutil::FromGrpcStatus(stream->Finish());
  if (!absl::IsCancelled(ended)) {
    CHECK_THAT(ended, HasCodeAndMessage(absl::StatusCode::kUnavailable,
                                        "shorten-service is shutting down; subscribe again"));
  }
}

// The status a WatchInvalidations stream with `key` and `subscriber` ends
// with when it is refused.
absl::Status RefusedWatch(ServiceHarness& h, const std::string& key,
                          const std::string& subscriber) {
  std::unique_ptr<grpc::ClientContext> ctx = ServiceHarness::Context(key);
  v1::WatchInvalidationsRequest request;
  request.set_subscriber(subscriber);
  std::unique_ptr<grpc::ClientReader<v1::Invalidation>> stream =
      h.stub->WatchInvalidations(ctx.get(), request);
  v1::Invalidation ignored;
  while (stream->Read(&ignored)) {
  }
  return grpcutil::FromGrpcStatus(stream->Finish());
}

TEST_CASE("WatchInvalidations refuses a stream as a unary call would be refused",
          "[services/shorten][rpc][watch]") {
  InvalidationHubOptions hub;
  hub.max_subscribers = 1;
  ServiceHarness h(ServiceHarnessOptions{{}, 16, hub});
  CHECK_THAT(RefusedWatch(h, "", "edge-1"),
             HasCodeAndMessage(absl::StatusCode::kUnauthenticated, "authorization: missing"));
  CHECK_THAT(RefusedWatch(h, h.TenantKey("acme"), "edge-1"),
             HasCodeAndMessage(absl::StatusCode::kPermissionDenied,
                               "lacks scope \"watch_invalidations\""));
  const std::string edge = h.EdgeKey();
  CHECK_THAT(RefusedWatch(h, edge, std::string(600, 'e')),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "more than the 512 a WatchInvalidations request may take"));
  // The hub's bound: one subscriber, the second refused.
  std::unique_ptr<grpc::ClientContext> ctx = ServiceHarness::Context(edge);
  v1::WatchInvalidationsRequest request;
  request.set_subscriber("edge-1");
  std::unique_ptr<grpc::ClientReader<v1::Invalidation>> first =
      h.stub->WatchInvalidations(ctx.get(), request);
  REQUIRE(ServiceHarness::Eventually([&h] { return h.hub.subscriber_count() == 1; }));
  CHECK_THAT(RefusedWatch(h, edge, "edge-2"), HasCode(absl::StatusCode::kResourceExhausted));
  ctx->TryCancel();
  first->Finish().error_code();
}

TEST_CASE("a request over its method's limits is refused before its key is looked up",
          "[services/shorten][rpc]") {
  ServiceHarness h;
  v1::ResolveRequest request;
  request.set_code(std::string(600, 'a'));
  v1::ResolveResponse response;
  CHECK_THAT(h.Call(&Stub::Resolve, "an-unknown-key-0123456789abcdef0123", request, &response),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "bytes, more than the 512 a Resolve request may take"));
  CHECK(h.key_faults.calls("FindByHash") == 0);
  // The counters count it all the same.
  CHECK(h.service->counters().Summary().find(" Resolve=1 ") != std::string::npos);
}

TEST_CASE("every RPC that needs the blocking pool answers RESOURCE_EXHAUSTED when it is full",
          "[services/shorten][rpc][limits]") {
  ServiceHarnessOptions options;
  options.stack.blocking_pool = ThreadPoolOptions{"blocking pool", 1, 1};
  ServiceHarness h(options);
  const std::string tenant = h.TenantKey("acme");
  const std::string edge = h.EdgeKey();
  const std::string code = h.NewCode(tenant, "https://example.com/busy");
  // One task holds the only thread, another fills the queue.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  REQUIRE(h.stack.blocking_pool->Schedule([released] { released.wait(); }).ok());
  REQUIRE(
      ServiceHarness::Eventually([&h] { return h.stack.blocking_pool->GetStats().queued == 0; }));
  REQUIRE(h.stack.blocking_pool->Schedule([] {}).ok());

  v1::RevokeRequest revoke;
  revoke.set_code(code);
  v1::RecordClicksRequest clicks;
  clicks.set_batch_id("b");
  clicks.add_events()->set_code(code);
  v1::GetLinkRequest get_link;
  get_link.set_code(code);
  v1::GetClickStatsRequest stats;
  stats.set_code(code);
  v1::CreateApiKeyRequest create;
  create.set_name("new");
  create.add_scopes("shorten");
  v1::RevokeApiKeyRequest revoke_key;
  revoke_key.set_id(2);
  v1::BatchShortenRequest batch;
  batch.add_requests()->set_long_url("https://example.com/batch");
  const std::vector<std::pair<const char*, std::function<absl::Status()>>> calls = {
      {"Revoke",
       [&] {
         v1::Link response;
         return h.Call(&Stub::Revoke, tenant, revoke, &response);
       }},
      {"RecordClicks",
       [&] {
         v1::RecordClicksResponse response;
         return h.Call(&Stub::RecordClicks, edge, clicks, &response);
       }},
      {"GetLink",
       [&] {
         v1::Link response;
         return h.Call(&Stub::GetLink, tenant, get_link, &response);
       }},
      {"GetClickStats",
       [&] {
         v1::GetClickStatsResponse response;
         return h.Call(&Stub::GetClickStats, tenant, stats, &response);
       }},
      {"CreateApiKey",
       [&] {
         v1::CreateApiKeyResponse response;
         return h.Call(&Stub::CreateApiKey, h.admin_key, create, &response);
       }},
      {"ListApiKeys",
       [&] {
         v1::ListApiKeysResponse response;
         return h.Call(&Stub::ListApiKeys, h.admin_key, v1::ListApiKeysRequest(), &response);
       }},
      {"RevokeApiKey",
       [&] {
         v1::ApiKey response;
         return h.Call(&Stub::RevokeApiKey, h.admin_key, revoke_key, &response);
       }},
      {"BatchShorten",
       [&] {
         v1::BatchShortenResponse response;
         return h.Call(&Stub::BatchShorten, tenant, batch, &response);
       }},
  };
  for (const auto& [name, call] : calls) {
    INFO(name);
    CHECK_THAT(call(),
               HasCodeAndMessage(absl::StatusCode::kResourceExhausted,
                                 "blocking pool is full: 1 tasks are waiting; retry later"));
  }
  release.set_value();
}

TEST_CASE("a full read batcher answers Resolve RESOURCE_EXHAUSTED, and each item of BatchResolve",
          "[services/shorten][rpc][limits]") {
  ServiceHarnessOptions options;
  options.stack.reads.reader_threads = 1;
  options.stack.reads.max_queued = 1;
  ServiceHarness h(options);
  const std::string tenant = h.TenantKey("acme");
  const std::string a = h.NewCode(tenant, "https://example.com/a");
  const std::string b = h.NewCode(tenant, "https://example.com/b");
  const std::string c = h.NewCode(tenant, "https://example.com/c");
  auto resolve = [&h, &tenant](const std::string& code) {
    v1::ResolveRequest request;
    request.set_code(code);
    v1::ResolveResponse response;
    return h.Call(&Stub::Resolve, tenant, request, &response);
  };
  // The only reader is held in the store with `a`; `b` takes the one place
  // in the queue.
  h.stack.link_faults.CloseGate();
  std::future<absl::Status> held = std::async(std::launch::async, resolve, a);
  REQUIRE(h.stack.link_faults.WaitForCalls(1, "GetByIds"));
  std::future<absl::Status> queued = std::async(std::launch::async, resolve, b);
  REQUIRE(ServiceHarness::Eventually([&h] { return h.stack.reads->GetStats().queued == 1; }));
  CHECK_THAT(resolve(c),
             HasCodeAndMessage(absl::StatusCode::kResourceExhausted, "read batcher is full"));
  // A batch's codes are queued together or not at all: each item is refused
  // and the call itself succeeds.
  v1::BatchResolveRequest batch;
  for (const std::string& code : {a, b, c}) batch.add_codes(code);
  v1::BatchResolveResponse batch_response;
  REQUIRE_THAT(h.Call(&Stub::BatchResolve, tenant, batch, &batch_response), IsOk());
  REQUIRE(batch_response.results_size() == 3);
  for (int i : {0, 1, 2}) {
    CHECK(batch_response.results(i).error().code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
    CHECK(absl::StrContains(batch_response.results(i).error().message(), "read batcher is full"));
  }
  h.stack.link_faults.OpenGate();
  CHECK_THAT(held.get(), IsOk());
  CHECK_THAT(queued.get(), IsOk());
  // With room again, the same batch is answered.
  batch_response.Clear();
  REQUIRE_THAT(h.Call(&Stub::BatchResolve, tenant, batch, &batch_response), IsOk());
  REQUIRE(batch_response.results_size() == 3);
  CHECK(batch_response.results(2).response().long_url() == "https://example.com/c");
}

TEST_CASE("a full key look-up pool answers RESOURCE_EXHAUSTED naming it",
          "[services/shorten][rpc][limits]") {
  ServiceHarnessOptions options;
  options.key_lookup_queue = 1;
  ServiceHarness h(options);
  // Three keys no call has used yet: each needs a look-up.
  std::vector<std::string> keys = {h.TenantKey("one"), h.TenantKey("two"), h.TenantKey("three")};
  auto resolve = [&h](const std::string& key) {
    v1::ResolveRequest request;
    request.set_code("no-such-alias");
    v1::ResolveResponse response;
    return h.Call(&Stub::Resolve, key, request, &response);
  };
  const int64_t lookups = h.key_faults.calls("FindByHash");
  h.key_faults.CloseGate();
  std::future<absl::Status> first = std::async(std::launch::async, resolve, keys[0]);
  REQUIRE(h.key_faults.WaitForCalls(lookups + 1, "FindByHash"));
  std::future<absl::Status> second = std::async(std::launch::async, resolve, keys[1]);
  REQUIRE(ServiceHarness::Eventually([&h] { return h.key_lookup_pool.GetStats().queued == 1; }));
  CHECK_THAT(resolve(keys[2]),
             HasCodeAndMessage(absl::StatusCode::kResourceExhausted,
                               "key look-up pool is full: 1 tasks are waiting; retry later"));
  h.key_faults.OpenGate();
  // Admitted once their keys are found: the code itself does not exist.
  CHECK_THAT(first.get(), HasCode(absl::StatusCode::kNotFound));
  CHECK_THAT(second.get(), HasCode(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace shortener::service
