// ServiceHarness: ShortenServiceImpl over in-memory twins, served by a real
// gRPC server on 127.0.0.1:<any free port> in this process, with a stub to
// it. Behind the service: a ShortenerStack (links, behind `stack.link_faults`);
// an InMemoryApiKeyStore behind a FaultyApiKeyStore (`key_faults`) with the
// KeyCache, RateLimiter, key look-up pool, Authorizer and KeyAdmin of the
// real wiring; an InMemoryClickStore behind a FaultyClickStore
// (`click_faults`) with ClickRecorder and LinkStats; an InvalidationHub fed
// with every code the link store revokes (as the Postgres listener feeds
// it). One ManualClock (`clock`) for links, keys, rates and statistics.
//
// The harness makes an admin key at start (`admin_key`); tests make the
// keys they call with through NewKey / TenantKey / EdgeKey.
//
// Thread safety: the service runs on gRPC threads; the rest is for the
// test's thread.
#ifndef SHORTENER_TESTS_SERVICES_SHORTEN_SERVICE_HARNESS_H_
#define SHORTENER_TESTS_SERVICES_SHORTEN_SERVICE_HARNESS_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "lib/auth/in_memory_api_key_store.h"
#include "lib/auth/key_cache.h"
#include "lib/auth/token_bucket.h"
#include "lib/clicks/in_memory_click_store.h"
#include "lib/grpcutil/status.h"
#include "services/shorten/authorizer.h"
#include "services/shorten/click_recorder.h"
#include "services/shorten/invalidation_hub.h"
#include "services/shorten/key_admin.h"
#include "services/shorten/link_eraser.h"
#include "services/shorten/link_remover.h"
#include "services/shorten/link_stats.h"
#include "services/shorten/shorten_service.h"
#include "shortener/v1/shortener.grpc.pb.h"
#include "tests/services/shorten/shortener_stack.h"
#include "tests/support/fault_plan.h"
#include "tests/support/faulty_api_key_store.h"
#include "tests/support/faulty_click_store.h"
#include "tests/support/status_matchers.h"

namespace shortener::service {

// What a client sees of a store outage (UNAVAILABLE), whatever the store
// said: its text may name sockets, roles and constraints.
inline constexpr char kOutageMessage[] =
    "service temporarily unavailable (database unreachable); retry later, with the same "
    "request_id for Shorten";

struct ServiceHarnessOptions {
  ShortenerStackOptions stack;
  // The key look-up pool: one thread, this many look-ups queued at most.
  size_t key_lookup_queue = 16;
  InvalidationHubOptions hub;
  absl::Duration deleted_alias_hold = absl::Hours(24);
};

class ServiceHarness {
 public:
  explicit ServiceHarness(ServiceHarnessOptions options = {})
      : stack(options.stack),
        key_lookup_pool(ThreadPoolOptions{"key look-up pool", 1, options.key_lookup_queue}),
        hub(options.hub) {
    stack.link_memory.SetRevocationObserver([this](const std::string& code) { hub.Publish(code); });
    recorder =
        std::make_unique<ClickRecorder>(stack.shortener.get(), &clicks, ClickRecorderOptions{});
    link_stats = std::make_unique<LinkStats>(stack.shortener.get(), &clicks,
                                             stack.blocking_pool.get(), clock);
    stack.link_memory.SetClickRanking([this](int64_t link_id) -> int64_t {
      absl::StatusOr<int64_t> total = click_memory.HumanTotal(link_id);
      return total.ok() ? *total : 0;
    });
    lister = std::make_unique<LinkLister>(stack.shortener.get(), &stack.links, &clicks,
                                          stack.blocking_pool.get(), clock);
    eraser = std::make_unique<LinkEraser>(&stack.links, &clicks, clock);
    LinkRemoverOptions removal;
    removal.alias_hold = options.deleted_alias_hold;
    removal.erase_soon = [this] { ++erase_requests; };
    remover = std::make_unique<LinkRemover>(stack.shortener.get(), lister.get(), &stack.links,
                                            std::move(removal), clock);
    service = std::make_unique<ShortenServiceImpl>(
        stack.shortener.get(), stack.blocking_pool.get(), &hub, &authorizer, &admin, recorder.get(),
        link_stats.get(), lister.get(), remover.get(), RequestLimits(2048));
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service.get());
    server = builder.BuildAndStart();
    REQUIRE(server != nullptr);
    REQUIRE(port != 0);
    stub = v1::ShortenService::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                           grpc::InsecureChannelCredentials()));
    ApiKeySpec spec;
    spec.name = "harness-admin";
    spec.tenant = "admin";
    spec.scopes = {"admin"};
    admin_key = NewKey(spec);
  }
  // Ends the streams, lets every held call go, stops the server (which
  // waits for the calls in flight), then runs what the pools still hold.
  ~ServiceHarness() {
    hub.Close();
    key_faults.OpenGate();
    click_faults.OpenGate();
    stack.link_faults.OpenGate();
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
    server->Wait();
    stack.blocking_pool.reset();
  }
  ServiceHarness(const ServiceHarness&) = delete;
  ServiceHarness& operator=(const ServiceHarness&) = delete;

  // A new key as CreateApiKey makes it (straight through KeyAdmin); returns
  // the key itself.
  std::string NewKey(const ApiKeySpec& spec) {
    absl::StatusOr<CreatedApiKey> created = admin.Create(spec);
    REQUIRE_THAT(created, testing::IsOk());
    return created->key;
  }
  // A key of tenant `name` with `scopes`.
  std::string TenantKey(const std::string& name, std::vector<std::string> scopes = {
                                                     "shorten", "resolve", "revoke", "stats"}) {
    ApiKeySpec spec;
    spec.name = name;
    spec.scopes = std::move(scopes);
    return NewKey(spec);
  }
  // An edge's (infrastructure) key.
  std::string EdgeKey(const std::string& name = "edge") {
    ApiKeySpec spec;
    spec.name = name;
    spec.infrastructure = true;
    spec.scopes = {"resolve", "record_clicks", "watch_invalidations"};
    return NewKey(spec);
  }

  // A new link to `url` made with `key` (Shorten over gRPC); its code.
  std::string NewCode(const std::string& key, const std::string& url) {
    v1::ShortenRequest request;
    request.set_long_url(url);
    v1::ShortenResponse response;
    std::unique_ptr<grpc::ClientContext> ctx = Context(key);
    const grpc::Status status = stub->Shorten(ctx.get(), request, &response);
    REQUIRE_THAT(grpcutil::FromGrpcStatus(status), testing::IsOk());
    return response.code();
  }

  // `times` human clicks of `code`, five minutes before the stack's start,
  // each from another address, reported with `edge_key` in one
  // RecordClicks batch (REQUIREs the call OK); how many it accepted.
  int64_t Click(const std::string& edge_key, const std::string& code, int times) {
    v1::RecordClicksRequest record;
    record.set_batch_id("harness-" + std::to_string(++click_batches_));
    for (int i = 0; i < times; ++i) {
      v1::ClickEvent* event = record.add_events();
      event->set_code(code);
      *event->mutable_time() = grpcutil::ToProtoTimestamp(kStackNow - absl::Minutes(5));
      event->set_client_ip("198.51.100." + std::to_string(i % 250 + 1));
      event->set_user_agent("Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0");
      event->set_http_status(302);
    }
    v1::RecordClicksResponse recorded;
    std::unique_ptr<grpc::ClientContext> ctx = Context(edge_key);
    REQUIRE_THAT(grpcutil::FromGrpcStatus(stub->RecordClicks(ctx.get(), record, &recorded)),
                 testing::IsOk());
    return recorded.accepted();
  }

  // Whether `done` holds within 10 s (polled every millisecond).
  static bool Eventually(const std::function<bool()>& done) {
    const absl::Time give_up = absl::Now() + absl::Seconds(10);
    while (!done()) {
      if (absl::Now() > give_up) return false;
      absl::SleepFor(absl::Milliseconds(1));
    }
    return true;
  }

  // The context of one call with `key` as its Bearer key (none when empty)
  // and a 10 s deadline.
  static std::unique_ptr<grpc::ClientContext> Context(const std::string& key) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    if (!key.empty()) ctx->AddMetadata("authorization", "Bearer " + key);
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return ctx;
  }

  // Calls `method` of the stub with `key`, waiting for the answer; the
  // status as absl::Status, for the status matchers.
  template <typename Request, typename Response, typename Method>
  absl::Status Call(Method method, const std::string& key, const Request& request,
                    Response* response) {
    std::unique_ptr<grpc::ClientContext> ctx = Context(key);
    return grpcutil::FromGrpcStatus(((*stub).*method)(ctx.get(), request, response));
  }

  ShortenerStack stack;
  ManualClock& clock = stack.clock;
  auth::InMemoryApiKeyStore key_memory{clock};
  testing::FaultPlan key_faults;
  testing::FaultyApiKeyStore keys{&key_memory, &key_faults};
  auth::KeyCache key_cache{&keys, clock};
  auth::RateLimiter limiter;
  KeyAdmin admin{&keys, clock};
  // Declared before the pool, so that the pool (destroyed first) runs what
  // is queued while the Authorizer still exists.
  Authorizer authorizer{&key_cache, &limiter, &key_lookup_pool, clock};
  ThreadPool key_lookup_pool;
  // Its clicks count under the labels the links have in the link store, as
  // PgClickStore reads links.label_ids.
  clicks::InMemoryClickStore click_memory{
      [this](int64_t link_id) { return stack.link_memory.LabelIdsOf(link_id); }};
  testing::FaultPlan click_faults;
  testing::FaultyClickStore clicks{&click_memory, &click_faults};
  std::unique_ptr<ClickRecorder> recorder;
  std::unique_ptr<LinkStats> link_stats;
  std::unique_ptr<LinkLister> lister;
  std::unique_ptr<LinkEraser> eraser;  // the tests run EraseDue themselves
  std::unique_ptr<LinkRemover> remover;
  std::atomic<int> erase_requests{0};  // times the remover asked for an erasure
  InvalidationHub hub;
  std::unique_ptr<ShortenServiceImpl> service;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<v1::ShortenService::Stub> stub;
  std::string admin_key;

 private:
  int click_batches_ = 0;
};

}  // namespace shortener::service

#endif  // SHORTENER_TESTS_SERVICES_SHORTEN_SERVICE_HARNESS_H_
