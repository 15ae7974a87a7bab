// End-to-end: WatchInvalidations across two shorten-service replicas on one
// private cluster (revocations travel through Postgres LISTEN/NOTIFY),
// shutdown with open streams, the `served:` log line, and batched Resolve
// under concurrency. Real processes, real gRPC.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/grpcutil/status.h"
#include "shortener/v1/shortener.grpc.pb.h"
#include "tests/services/shorten/e2e/e2e_fixture.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/service_process.h"
#include "tests/support/status_matchers.h"

namespace shortener::testing {
namespace {

// A gRPC client connection with no call in progress is read only by gRPC's
// backup poller, every 5 s by default: a server shutting down waits for such
// idle clients to acknowledge its GOAWAY ping, so every SIGTERM below would
// take ~5 s because of the test's own idle stubs. Poll them often, so that
// what the tests time is the service. (Set before any channel exists: gRPC
// reads it once, at init.)
[[maybe_unused]] const bool kFastClientBackupPoll = [] {
  setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "50", /*overwrite=*/0);
  return true;
}();

// A WatchInvalidations subscriber on its own thread, recording every message
// with the time it arrived, and the status the stream ended with. Tests read
// it through the Wait/Snapshot helpers (Catch2 assertions stay on the test
// thread).
class Watcher {
 public:
  struct Received {
    v1::Invalidation message;
    absl::Time at;
  };

  Watcher(const ServiceProcess& service, const std::string& name,
          const grpc::ChannelArguments& args = grpc::ChannelArguments())
      : stub_(service.NewStub(service.admin_key(), args)) {
    ctx_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(180));
    v1::WatchInvalidationsRequest request;
    request.set_subscriber(name);
    thread_ = std::thread([this, request] {
      std::unique_ptr<grpc::ClientReader<v1::Invalidation>> reader =
          stub_->WatchInvalidations(&ctx_, request);
      v1::Invalidation message;
      while (reader->Read(&message)) {
        std::lock_guard<std::mutex> lock(mu_);
        received_.push_back({message, absl::Now()});
        changed_.notify_all();
      }
      grpc::Status status = reader->Finish();
      std::lock_guard<std::mutex> lock(mu_);
      ended_ = status;
      ended_at_ = absl::Now();
      changed_.notify_all();
    });
  }
  ~Watcher() {
    ctx_.TryCancel();
    thread_.join();
  }

  // Waits until at least `n` messages arrived.
  bool WaitForMessages(size_t n, absl::Duration timeout = absl::Seconds(15)) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                             [&] { return received_.size() >= n; });
  }
  // When a message naming `code` arrived first; nullopt if none within
  // `timeout`.
  std::optional<absl::Time> WaitForCode(const std::string& code,
                                        absl::Duration timeout = absl::Seconds(15)) {
    std::unique_lock<std::mutex> lock(mu_);
    std::optional<absl::Time> at;
    changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [&] {
      at = FindLocked(code);
      return at.has_value();
    });
    return at;
  }
  // Waits until `n` drop_all messages arrived.
  bool WaitForDropAlls(int n, absl::Duration timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                             [&] { return DropAllsLocked() >= n; });
  }
  std::optional<grpc::Status> WaitForEnd(absl::Duration timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [&] { return ended_.has_value(); });
    return ended_;
  }
  std::vector<Received> Snapshot() {
    std::lock_guard<std::mutex> lock(mu_);
    return received_;
  }
  int CountCode(const std::string& code) {
    int n = 0;
    for (const Received& r : Snapshot()) {
      for (const std::string& c : r.message.codes()) n += c == code ? 1 : 0;
    }
    return n;
  }
  int DropAlls() {
    std::lock_guard<std::mutex> lock(mu_);
    return DropAllsLocked();
  }

 private:
  std::optional<absl::Time> FindLocked(const std::string& code) const {
    for (const Received& r : received_) {
      for (const std::string& c : r.message.codes()) {
        if (c == code) return r.at;
      }
    }
    return std::nullopt;
  }
  int DropAllsLocked() const {
    int n = 0;
    for (const Received& r : received_) n += r.message.drop_all() ? 1 : 0;
    return n;
  }

  std::unique_ptr<v1::ShortenService::Stub> stub_;
  grpc::ClientContext ctx_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<Received> received_;
  std::optional<grpc::Status> ended_;
  absl::Time ended_at_;
  std::thread thread_;
};

// A second replica on the fixture's database, with the same code secret.
std::unique_ptr<ServiceProcess> StartReplica(const E2eFixture& f) {
  ServiceProcessOptions options;
  options.conninfo = f.cluster->ConnInfo();
  options.secret_file = f.service->secret_file();
  auto s = ServiceProcess::Start(options);
  if (!s.ok()) FAIL(s.status().ToString());
  return *std::move(s);
}

std::unique_ptr<v1::ShortenService::Stub> StubFor(const ServiceProcess& service) {
  return service.NewStub();
}

grpc::Status Revoke(v1::ShortenService::Stub& stub, const std::string& code) {
  v1::RevokeRequest request;
  request.set_code(code);
  v1::Link link;
  return stub.Revoke(E2eFixture::Ctx().get(), request, &link);
}

// The `served:` line of a service log, "" if none.
std::string ServedLine(const std::string& log) {
  size_t at = log.find("served: ");
  if (at == std::string::npos) return "";
  size_t end = log.find('\n', at);
  return log.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// SIGTERM, and the exit code (nullopt: still running after `timeout`).
std::optional<int> Terminate(ServiceProcess& service, absl::Duration timeout,
                             absl::Duration* took = nullptr) {
  absl::Time start = absl::Now();
  if (!service.process().Signal(SIGTERM)) return std::nullopt;
  std::optional<int> code = service.process().Wait(timeout);
  if (took != nullptr) *took = absl::Now() - start;
  return code;
}

TEST_CASE("A revocation through replica A reaches a subscriber of replica B within a second",
          "[services/shorten/e2e][invalidation][e2e]") {
  E2eFixture f;  // replica A
  std::unique_ptr<ServiceProcess> b = StartReplica(f);
  auto stub_b = StubFor(*b);
  Watcher on_b(*b, "edge-b");
  Watcher on_a(*f.service, "edge-a");
  // The first message of every subscription is drop_all, without codes.
  REQUIRE(on_b.WaitForMessages(1));
  REQUIRE(on_a.WaitForMessages(1));
  for (Watcher* w : {&on_a, &on_b}) {
    std::vector<Watcher::Received> first = w->Snapshot();
    CHECK(first[0].message.drop_all());
    CHECK(first[0].message.codes_size() == 0);
  }

  v1::ShortenResponse generated;
  REQUIRE(f.Shorten("https://example.com/revoke-across", &generated).ok());
  v1::ShortenRequest alias_request;
  alias_request.set_long_url("https://example.com/alias-across");
  alias_request.set_custom_alias("across-alias");
  v1::ShortenResponse aliased;
  REQUIRE(f.stub->Shorten(E2eFixture::Ctx().get(), alias_request, &aliased).ok());

  REQUIRE(Revoke(*f.stub, generated.code()).ok());
  absl::Time revoked = absl::Now();
  std::optional<absl::Time> at_b = on_b.WaitForCode(generated.code());
  REQUIRE(at_b.has_value());
  CHECK(*at_b - revoked < absl::Seconds(1));
  // A's own subscribers learn of it the same way (through Postgres).
  std::optional<absl::Time> at_a = on_a.WaitForCode(generated.code());
  REQUIRE(at_a.has_value());
  CHECK(*at_a - revoked < absl::Seconds(1));

  // The other way round, with an alias: its code is the alias.
  REQUIRE(Revoke(*stub_b, "across-alias").ok());
  revoked = absl::Now();
  at_a = on_a.WaitForCode("across-alias");
  REQUIRE(at_a.has_value());
  CHECK(*at_a - revoked < absl::Seconds(1));
  REQUIRE(on_b.WaitForCode("across-alias").has_value());

  // Revoking again changes nothing and notifies nobody.
  REQUIRE(Revoke(*stub_b, generated.code()).ok());
  REQUIRE(Revoke(*f.stub, "across-alias").ok());
  absl::SleepFor(absl::Milliseconds(500));
  for (Watcher* w : {&on_a, &on_b}) {
    CHECK(w->CountCode(generated.code()) == 1);
    CHECK(w->CountCode("across-alias") == 1);
    CHECK(w->DropAlls() == 1);
  }
}

// `n` human clicks on `code` as one RecordClicks batch.
grpc::Status RecordHumanClicks(v1::ShortenService::Stub& stub, const std::string& batch_id,
                               const std::string& code, int n) {
  v1::RecordClicksRequest request;
  request.set_batch_id(batch_id);
  for (int i = 0; i < n; ++i) {
    v1::ClickEvent* e = request.add_events();
    e->set_code(code);
    *e->mutable_time() = grpcutil::ToProtoTimestamp(absl::Now());
    e->set_client_ip("192.0.2.10");
    e->set_user_agent(
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/120.0.0.0 Safari/537.36");
    e->set_http_status(302);
  }
  v1::RecordClicksResponse response;
  return stub.RecordClicks(E2eFixture::Ctx().get(), request, &response);
}

v1::LinkState StateOf(v1::ShortenService::Stub& stub, const std::string& code) {
  v1::ResolveRequest request;
  request.set_code(code);
  v1::ResolveResponse response;
  grpc::Status status = stub.Resolve(E2eFixture::Ctx().get(), request, &response);
  return status.ok() ? response.state() : v1::LINK_STATE_UNSPECIFIED;
}

TEST_CASE("A link whose click budget is spent resolves EXPIRED and every replica announces it",
          "[services/shorten/e2e][invalidation][limits][e2e]") {
  E2eFixture f;  // replica A
  std::unique_ptr<ServiceProcess> b = StartReplica(f);
  auto stub_b = StubFor(*b);
  Watcher on_a(*f.service, "edge-a");
  REQUIRE(on_a.WaitForMessages(1));  // drop_all: subscribed

  v1::ShortenRequest request;
  request.set_long_url("https://example.com/budget");
  request.set_max_clicks(5);
  v1::ShortenResponse limited;
  REQUIRE(f.stub->Shorten(E2eFixture::Ctx().get(), request, &limited).ok());
  CHECK(limited.link().max_clicks() == 5);
  // The same request again gets its own link and budget, never this one.
  v1::ShortenResponse second;
  REQUIRE(f.stub->Shorten(E2eFixture::Ctx().get(), request, &second).ok());
  CHECK(second.created());
  CHECK(second.code() != limited.code());

  // 4 of 5 clicks, recorded through replica B: still active.
  REQUIRE(RecordHumanClicks(*stub_b, "budget-1", limited.code(), 4).ok());
  CHECK(StateOf(*f.stub, limited.code()) == v1::LINK_STATE_ACTIVE);
  // The fifth spends the budget: replica A's subscriber hears of it (through
  // Postgres), and both replicas resolve it as EXPIRED.
  REQUIRE(RecordHumanClicks(*stub_b, "budget-2", limited.code(), 1).ok());
  absl::Time spent = absl::Now();
  std::optional<absl::Time> at_a = on_a.WaitForCode(limited.code());
  REQUIRE(at_a.has_value());
  CHECK(*at_a - spent < absl::Seconds(1));
  CHECK(StateOf(*f.stub, limited.code()) == v1::LINK_STATE_EXPIRED);
  CHECK(StateOf(*stub_b, limited.code()) == v1::LINK_STATE_EXPIRED);
  CHECK(StateOf(*f.stub, second.code()) == v1::LINK_STATE_ACTIVE);

  v1::GetLinkRequest get;
  get.set_code(limited.code());
  v1::Link link;
  REQUIRE(f.stub->GetLink(E2eFixture::Ctx().get(), get, &link).ok());
  CHECK(link.state() == v1::LINK_STATE_EXPIRED);
  CHECK(link.click_count() == 5);
  CHECK(link.max_clicks() == 5);

  // Clicks that were in flight still count; the link is announced once.
  REQUIRE(RecordHumanClicks(*f.stub, "budget-3", limited.code(), 2).ok());
  absl::SleepFor(absl::Milliseconds(500));
  CHECK(on_a.CountCode(limited.code()) == 1);
  REQUIRE(f.stub->GetLink(E2eFixture::Ctx().get(), get, &link).ok());
  CHECK(link.click_count() == 7);

  // A negative budget is refused naming the field.
  request.set_max_clicks(-1);
  grpc::Status bad = f.stub->Shorten(E2eFixture::Ctx().get(), request, &second);
  CHECK(bad.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(bad.error_message(), Catch::StartsWith("max_clicks:"));
}

TEST_CASE("After a database restart every subscriber is told to drop all and then gets codes again",
          "[services/shorten/e2e][invalidation][e2e]") {
  E2eFixture f;
  std::unique_ptr<ServiceProcess> b = StartReplica(f);
  Watcher on_b(*b, "edge-b");
  REQUIRE(on_b.WaitForDropAlls(1, absl::Seconds(15)));
  REQUIRE_THAT(f.cluster->Stop(), IsOk());
  absl::SleepFor(absl::Milliseconds(500));
  REQUIRE_THAT(f.cluster->Resume(), IsOk());
  // Revocations committed while B's listener was away were missed: drop_all.
  REQUIRE(on_b.WaitForDropAlls(2, absl::Seconds(20)));

  v1::ShortenResponse link;
  grpc::Status st;
  // The service's pool heals by itself; allow a retry for a connection
  // that broke under it.
  for (int i = 0; i < 5; ++i) {
    st = f.Shorten("https://example.com/after-restart", &link);
    if (st.ok()) break;
    absl::SleepFor(absl::Milliseconds(200));
  }
  REQUIRE(st.ok());
  REQUIRE(Revoke(*f.stub, link.code()).ok());
  absl::Time revoked = absl::Now();
  std::optional<absl::Time> at = on_b.WaitForCode(link.code());
  REQUIRE(at.has_value());
  CHECK(*at - revoked < absl::Seconds(1));
}

TEST_CASE("An edge that pings every 5 s keeps its silent stream open",
          "[services/shorten/e2e][invalidation][e2e]") {
  E2eFixture f;
  // What an edge sets to notice a dead service behind a silent stream.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 5000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 2000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  Watcher w(*f.service, "pinging-edge", args);
  REQUIRE(w.WaitForMessages(1));
  // A server with gRPC's default ping policy (one ping per 5 minutes without
  // data) would answer the third ping with GOAWAY "too_many_pings".
  CHECK_FALSE(w.WaitForEnd(absl::Seconds(17)).has_value());
  v1::ShortenResponse link;
  REQUIRE(f.Shorten("https://example.com/still-listening", &link).ok());
  REQUIRE(Revoke(*f.stub, link.code()).ok());
  CHECK(w.WaitForCode(link.code()).has_value());
}

TEST_CASE("SIGTERM with open invalidation streams ends them and exits 0 promptly",
          "[services/shorten/e2e][invalidation][e2e]") {
  E2eFixture f;
  Watcher w1(*f.service, "edge-1");
  Watcher w2(*f.service, "edge-2");
  REQUIRE(w1.WaitForMessages(1));
  REQUIRE(w2.WaitForMessages(1));
  absl::Duration took;
  std::optional<int> code = Terminate(*f.service, absl::Seconds(20), &took);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  // Far below the 10 s grace: the streams did not hold up the drain.
  INFO(f.service->Log());
  CHECK(took < absl::Seconds(3));
  for (Watcher* w : {&w1, &w2}) {
    std::optional<grpc::Status> ended = w->WaitForEnd(absl::Seconds(5));
    REQUIRE(ended.has_value());
    // UNAVAILABLE ("subscribe again") normally. A stream whose last write the
    // server had not yet seen complete when it closed (the client may already
    // have the message; seen on a loaded machine) is cancelled instead, so
    // that a subscriber that stopped reading cannot hold up the drain. Edges
    // resubscribe on either; what matters is that the stream ends, with an
    // error, promptly.
    const grpc::StatusCode code = ended->error_code();
    INFO("stream ended with " << code << ": " << ended->error_message());
    CHECK((code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::CANCELLED));
  }
  CHECK_THAT(ServedLine(f.service->Log()), Catch::Contains("WatchInvalidations=2"));
}

TEST_CASE("The served line counts every call per method exactly",
          "[services/shorten/e2e][invalidation][e2e]") {
  E2eFixture f;
  v1::ShortenResponse link;
  REQUIRE(f.Shorten("https://example.com/counted", &link).ok());
  v1::ResolveResponse resolved;
  for (int i = 0; i < 7; ++i) REQUIRE(f.Resolve(link.code(), &resolved).ok());
  // Failed calls are calls too.
  CHECK(f.Resolve("bad/code", &resolved).error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(f.Resolve("no-such-alias", &resolved).error_code() == grpc::StatusCode::NOT_FOUND);
  v1::GetLinkRequest get;
  get.set_code(link.code());
  v1::Link got;
  REQUIRE(f.stub->GetLink(E2eFixture::Ctx().get(), get, &got).ok());
  REQUIRE(Revoke(*f.stub, link.code()).ok());
  std::optional<int> code = Terminate(*f.service, absl::Seconds(20));
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  CHECK(ServedLine(f.service->Log()) ==
        "served: Shorten=1 BatchShorten=0 Resolve=9 BatchResolve=0 GetLink=1 ListLinks=0 "
        "GetQrCode=0 Revoke=1 UpdateLink=0 DeleteLink=0 RevokeLinks=0 DeleteLinks=0 "
        "RecordClicks=0 GetClickStats=0 WatchInvalidations=0 "
        "CreateApiKey=0 ListApiKeys=0 RevokeApiKey=0");
}

TEST_CASE("Concurrent Resolve calls are batched and every one gets its own answer",
          "[services/shorten/e2e][invalidation][e2e]") {
  // One reader: while it queries, the other calls must queue and share the
  // next query.
  E2eFixture f({"--resolve_threads=1"});
  constexpr int kLinks = 400;
  v1::BatchShortenRequest batch;
  for (int i = 0; i < kLinks; ++i) {
    batch.add_requests()->set_long_url(absl::StrCat("https://example.com/concurrent/", i));
  }
  v1::BatchShortenResponse created;
  REQUIRE(f.stub->BatchShorten(E2eFixture::Ctx().get(), batch, &created).ok());
  REQUIRE(created.results_size() == kLinks);
  std::vector<std::string> codes;
  for (const auto& r : created.results()) {
    REQUIRE(r.has_response());
    codes.push_back(r.response().code());
  }
  constexpr int kThreads = 16;
  std::atomic<int> wrong{0}, failed{0}, calls{0};
  std::mutex first_error_mu;
  std::string first_error;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Own connections, so the calls really are concurrent on the wire.
      grpc::ChannelArguments args;
      args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
      auto stub = f.service->NewStub(f.service->admin_key(), args);
      for (int i = t; i < kLinks; i += 2) {  // every link asked by 8 threads
        v1::ResolveRequest request;
        request.set_code(codes[i]);
        v1::ResolveResponse response;
        auto ctx = E2eFixture::Ctx();
        // A fresh channel's first connect can fail transiently on a loaded
        // machine (seen once in CI); without wait_for_ready every call of
        // that thread would then fail fast for the whole reconnect backoff.
        // This test is about batching, not connection setup.
        ctx->set_wait_for_ready(true);
        grpc::Status st = stub->Resolve(ctx.get(), request, &response);
        calls.fetch_add(1);
        if (!st.ok()) {
          if (failed.fetch_add(1) == 0) {
            std::lock_guard<std::mutex> lock(first_error_mu);
            first_error = absl::StrCat(st.error_code(), ": ", st.error_message());
          }
        } else if (response.long_url() != absl::StrCat("https://example.com/concurrent/", i)) {
          wrong.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  INFO(first_error);
  CHECK(failed.load() == 0);
  CHECK(wrong.load() == 0);
  std::optional<int> code = Terminate(*f.service, absl::Seconds(20));
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  std::string log = f.service->Log();
  CHECK_THAT(ServedLine(log), Catch::Contains(absl::StrCat(" Resolve=", calls.load(), " ")));
  // The batching summary: every look-up counted, in fewer queries than
  // look-ups (16 callers against one reader).
  size_t at = log.find("resolve batching: ");
  REQUIRE(at != std::string::npos);
  std::string summary = log.substr(at, log.find('\n', at) - at);
  INFO(summary);
  int lookups = 0, queries = 0;
  REQUIRE(std::sscanf(summary.c_str(), "resolve batching: %d look-ups in %d queries", &lookups,
                      &queries) == 2);
  CHECK(lookups == calls.load());
  CHECK(queries >= 1);
  CHECK(queries < lookups / 2);
}

}  // namespace
}  // namespace shortener::testing
