// The service's bounds end to end (real service process, real PostgreSQL):
// every method refuses an oversized request before anything else (key
// look-up included) with a message naming the limit, gRPC refuses what is
// over the receive limit, a full blocking pool answers RESOURCE_EXHAUSTED
// naming it, WatchInvalidations subscribers and streams per connection are
// capped; and after each the service keeps serving.
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <pqxx/pqxx>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/services/shorten/e2e/e2e_fixture.h"

namespace shortener::testing {
namespace {

// A normal Shorten then a Resolve of its code: the service still serves.
void CheckStillServes(E2eFixture& f) {
  v1::ShortenResponse created;
  grpc::Status st = f.Shorten(
      absl::StrCat("https://example.com/still/", absl::ToUnixNanos(absl::Now())), &created);
  INFO(st.error_message());
  REQUIRE(st.ok());
  v1::ResolveResponse resolved;
  REQUIRE(f.Resolve(created.code(), &resolved).ok());
  CHECK(resolved.long_url() == created.link().long_url());
}

void CheckRefused(const grpc::Status& st, grpc::StatusCode code, const std::string& message) {
  INFO(st.error_message());
  CHECK(st.error_code() == code);
  CHECK(absl::StrContains(st.error_message(), message));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

TEST_CASE("every method refuses an oversized request, naming its limit, and the service serves on",
          "[services/shorten/e2e][limits][e2e]") {
  E2eFixture f;
  auto& stub = *f.stub;
  // Without any key: the limit is checked before the key is.
  auto anonymous = f.service->NewStub("");
  const std::string long_code(600, 'a');

  SECTION("Shorten") {
    v1::ShortenRequest req;
    req.set_long_url("https://example.com/" + std::string(3000, 'x'));
    v1::ShortenResponse resp;
    CheckRefused(stub.Shorten(E2eFixture::Ctx().get(), req, &resp),
                 grpc::StatusCode::INVALID_ARGUMENT, "a Shorten request may take");
    CheckRefused(anonymous->Shorten(E2eFixture::Ctx().get(), req, &resp),
                 grpc::StatusCode::INVALID_ARGUMENT,
                 "more than the 2304 a Shorten request may take");
  }
  SECTION("BatchShorten: too many items, too many bytes, over the receive limit") {
    v1::BatchShortenRequest many;
    for (int i = 0; i < 1001; ++i) many.add_requests()->set_long_url("https://example.com/m");
    v1::BatchShortenResponse resp;
    CheckRefused(stub.BatchShorten(E2eFixture::Ctx().get(), many, &resp),
                 grpc::StatusCode::INVALID_ARGUMENT,
                 "requests: 1001, more than the 1000 a BatchShorten request may carry");
    // 1000 items of 2.6 kB: under the 3 MiB receive limit, over the method's.
    v1::BatchShortenRequest big;
    for (int i = 0; i < 1000; ++i) {
      big.add_requests()->set_long_url("https://example.com/" + std::string(2600, 'b'));
    }
    CheckRefused(stub.BatchShorten(E2eFixture::Ctx().get(), big, &resp),
                 grpc::StatusCode::INVALID_ARGUMENT,
                 "more than the 2312000 a BatchShorten request may take");
    // Over 3 MiB: gRPC refuses it before our code runs.
    v1::BatchShortenRequest huge;
    for (int i = 0; i < 1000; ++i) {
      huge.add_requests()->set_long_url("https://example.com/" + std::string(3300, 'h'));
    }
    const grpc::Status st = stub.BatchShorten(E2eFixture::Ctx().get(), huge, &resp);
    INFO(st.error_message());
    CHECK(st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
    CHECK(absl::StrContains(st.error_message(), "3145728"));
  }
  SECTION("Resolve, BatchResolve, GetLink, Revoke, GetClickStats") {
    v1::ResolveRequest resolve;
    resolve.set_code(long_code);
    v1::ResolveResponse resolved;
    CheckRefused(stub.Resolve(E2eFixture::Ctx().get(), resolve, &resolved),
                 grpc::StatusCode::INVALID_ARGUMENT,
                 "more than the 512 a Resolve request may take");
    CheckRefused(anonymous->Resolve(E2eFixture::Ctx().get(), resolve, &resolved),
                 grpc::StatusCode::INVALID_ARGUMENT, "a Resolve request may take");
    v1::BatchResolveRequest batch;
    for (int i = 0; i < 1001; ++i) batch.add_codes("abc");
    v1::BatchResolveResponse batch_resp;
    CheckRefused(stub.BatchResolve(E2eFixture::Ctx().get(), batch, &batch_resp),
                 grpc::StatusCode::INVALID_ARGUMENT,
                 "codes: 1001, more than the 1000 a BatchResolve request may carry");
    v1::BatchResolveRequest wide;
    for (int i = 0; i < 1000; ++i) wide.add_codes(std::string(200, 'w'));
    CheckRefused(stub.BatchResolve(E2eFixture::Ctx().get(), wide, &batch_resp),
                 grpc::StatusCode::INVALID_ARGUMENT,
                 "more than the 72000 a BatchResolve request may take");
    v1::GetLinkRequest get;
    get.set_code(long_code);
    v1::Link link;
    CheckRefused(stub.GetLink(E2eFixture::Ctx().get(), get, &link),
                 grpc::StatusCode::INVALID_ARGUMENT, "a GetLink request may take");
    v1::RevokeRequest revoke;
    revoke.set_code(long_code);
    CheckRefused(stub.Revoke(E2eFixture::Ctx().get(), revoke, &link),
                 grpc::StatusCode::INVALID_ARGUMENT, "a Revoke request may take");
    v1::GetClickStatsRequest stats;
    stats.set_code(long_code);
    v1::GetClickStatsResponse stats_resp;
    CheckRefused(stub.GetClickStats(E2eFixture::Ctx().get(), stats, &stats_resp),
                 grpc::StatusCode::INVALID_ARGUMENT, "a GetClickStats request may take");
  }
  SECTION("RecordClicks: too many events, too many bytes") {
    v1::RecordClicksRequest many;
    many.set_batch_id("limits-many");
    for (int i = 0; i < 10001; ++i) many.add_events()->set_code("a");
    v1::RecordClicksResponse resp;
    CheckRefused(stub.RecordClicks(E2eFixture::Ctx().get(), many, &resp),
                 grpc::StatusCode::INVALID_ARGUMENT,
                 "events: 10001, more than the 10000 a RecordClicks request may carry");
    v1::RecordClicksRequest big;
    big.set_batch_id("limits-big");
    for (int i = 0; i < 3000; ++i) {
      v1::ClickEvent* e = big.add_events();
      e->set_code("abcdefg");
      e->set_user_agent(std::string(400, 'u'));
      e->set_referer(std::string(400, 'r'));
    }
    CheckRefused(anonymous->RecordClicks(E2eFixture::Ctx().get(), big, &resp),
                 grpc::StatusCode::INVALID_ARGUMENT,
                 "more than the 2097152 a RecordClicks request may take");
  }
  SECTION("API key administration") {
    v1::CreateApiKeyRequest create;
    create.set_name(std::string(70000, 'n'));
    v1::CreateApiKeyResponse created;
    CheckRefused(stub.CreateApiKey(E2eFixture::Ctx().get(), create, &created),
                 grpc::StatusCode::INVALID_ARGUMENT, "a CreateApiKey request may take");
    // Fields this service does not know count too: padding cannot get
    // around a limit.
    v1::RevokeApiKeyRequest revoke;
    revoke.set_id(1);
    revoke.GetReflection()->MutableUnknownFields(&revoke)->AddLengthDelimited(
        99, std::string(600, 'p'));
    v1::ApiKey key;
    CheckRefused(stub.RevokeApiKey(E2eFixture::Ctx().get(), revoke, &key),
                 grpc::StatusCode::INVALID_ARGUMENT, "a RevokeApiKey request may take");
    v1::ListApiKeysRequest list;
    list.GetReflection()->MutableUnknownFields(&list)->AddLengthDelimited(99,
                                                                          std::string(600, 'p'));
    v1::ListApiKeysResponse keys;
    CheckRefused(stub.ListApiKeys(E2eFixture::Ctx().get(), list, &keys),
                 grpc::StatusCode::INVALID_ARGUMENT, "a ListApiKeys request may take");
  }
  SECTION("WatchInvalidations") {
    v1::WatchInvalidationsRequest watch;
    watch.set_subscriber(std::string(1000, 's'));
    auto ctx = E2eFixture::Ctx();
    auto reader = stub.WatchInvalidations(ctx.get(), watch);
    v1::Invalidation message;
    CHECK_FALSE(reader->Read(&message));
    CheckRefused(reader->Finish(), grpc::StatusCode::INVALID_ARGUMENT,
                 "a WatchInvalidations request may take");
  }
  CheckStillServes(f);
}

TEST_CASE("a full blocking pool answers RESOURCE_EXHAUSTED naming it, then recovers",
          "[services/shorten/e2e][limits][e2e]") {
  // One thread, room for one task in the queue.
  E2eFixture f({"--blocking_threads=1", "--blocking_queue=1"});
  std::vector<std::string> codes;
  for (int i = 0; i < 3; ++i) {
    v1::ShortenResponse created;
    REQUIRE(f.Shorten(absl::StrCat("https://example.com/pool/", i), &created).ok());
    codes.push_back(created.code());
  }
  // A row lock held here makes the first Revoke wait in the database, on the
  // pool's only thread.
  pqxx::connection conn(f.cluster->ConnInfo());
  pqxx::work lock_tx(conn);
  lock_tx.exec("SELECT id FROM links WHERE long_url = 'https://example.com/pool/0' FOR UPDATE");
  auto revoke = [&f](const std::string& code) {
    v1::RevokeRequest req;
    req.set_code(code);
    v1::Link link;
    return f.service->NewStub()->Revoke(E2eFixture::Ctx(absl::Seconds(30)).get(), req, &link);
  };
  grpc::Status held;
  std::thread first([&] { held = revoke(codes[0]); });
  {
    // Until the Revoke waits for the lock.
    pqxx::connection watcher(f.cluster->ConnInfo());
    pqxx::nontransaction q(watcher);
    const absl::Time give_up = absl::Now() + absl::Seconds(20);
    while (q.exec1("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")[0]
                   .as<int>() == 0 &&
           absl::Now() < give_up) {
      absl::SleepFor(absl::Milliseconds(10));
    }
  }
  // The thread is busy: of the next two, one waits in the queue and one finds
  // it full (which is answered at once).
  grpc::Status statuses[2];
  std::atomic<int> answered{0};
  std::vector<std::thread> later;
  for (int i = 0; i < 2; ++i) {
    later.emplace_back([&, i] {
      statuses[i] = revoke(codes[1 + i]);
      answered.fetch_add(1);
    });
  }
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  while (answered.load() == 0 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(5));
  lock_tx.commit();
  first.join();
  for (std::thread& t : later) t.join();
  INFO(held.error_message() << " / " << statuses[0].error_message() << " / "
                            << statuses[1].error_message());
  CHECK(held.ok());
  const int refused_index =
      statuses[0].error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED ? 0 : 1;
  CheckRefused(statuses[refused_index], grpc::StatusCode::RESOURCE_EXHAUSTED,
               "blocking pool is full: 1 tasks are waiting; retry later");
  CHECK(statuses[1 - refused_index].ok());
  // Recovered: the refused one goes through now.
  CHECK(revoke(codes[1 + refused_index]).ok());
  CheckStillServes(f);
}

TEST_CASE("WatchInvalidations subscribers beyond the cap are refused until one leaves",
          "[services/shorten/e2e][limits][e2e]") {
  E2eFixture f({"--max_invalidation_subscribers=2"});
  auto key_file = f.service->EdgeKeyFile();
  REQUIRE(key_file.ok());
  auto stub = f.service->NewStub(ReadFile(*key_file));
  auto open = [&](grpc::ClientContext* ctx) {
    v1::WatchInvalidationsRequest req;
    req.set_subscriber("limits test");
    return stub->WatchInvalidations(ctx, req);
  };
  grpc::ClientContext a_ctx, b_ctx, c_ctx;
  v1::Invalidation message;
  auto a = open(&a_ctx);
  REQUIRE(a->Read(&message));
  CHECK(message.drop_all());
  auto b = open(&b_ctx);
  REQUIRE(b->Read(&message));
  auto c = open(&c_ctx);
  CHECK_FALSE(c->Read(&message));
  CheckRefused(c->Finish(), grpc::StatusCode::RESOURCE_EXHAUSTED,
               "invalidation subscribers: 2 are subscribed, the limit of this replica");
  a_ctx.TryCancel();
  a->Finish();
  // The hub lets the cancelled subscriber go when its stream is done.
  bool subscribed = false;
  for (int i = 0; i < 100 && !subscribed; ++i) {
    grpc::ClientContext d_ctx;
    auto d = open(&d_ctx);
    subscribed = d->Read(&message);
    d_ctx.TryCancel();
    d->Finish();
    if (!subscribed) absl::SleepFor(absl::Milliseconds(50));
  }
  CHECK(subscribed);
  b_ctx.TryCancel();
  b->Finish();
  CheckStillServes(f);
}

TEST_CASE("a connection holds at most --max_concurrent_streams calls; more wait",
          "[services/shorten/e2e][limits][e2e]") {
  E2eFixture f({"--max_concurrent_streams=2"});
  auto key_file = f.service->EdgeKeyFile();
  REQUIRE(key_file.ok());
  // Every call below goes over this one connection.
  auto stub = f.service->NewStub(ReadFile(*key_file));
  auto open = [&](grpc::ClientContext* ctx) {
    v1::WatchInvalidationsRequest req;
    req.set_subscriber("streams test");
    return stub->WatchInvalidations(ctx, req);
  };
  grpc::ClientContext a_ctx, b_ctx;
  v1::Invalidation message;
  auto a = open(&a_ctx);
  REQUIRE(a->Read(&message));
  auto b = open(&b_ctx);
  REQUIRE(b->Read(&message));
  // A third stream on the connection is not let in while two are open: it
  // never gets its first message (drop_all, otherwise sent within ms).
  grpc::ClientContext c_ctx;
  c_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
  auto c = open(&c_ctx);
  CHECK_FALSE(c->Read(&message));
  CHECK(c->Finish().error_code() == grpc::StatusCode::DEADLINE_EXCEEDED);
  // One ends: the next one gets in.
  a_ctx.TryCancel();
  a->Finish();
  grpc::ClientContext d_ctx;
  d_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto d = open(&d_ctx);
  CHECK(d->Read(&message));
  d_ctx.TryCancel();
  d->Finish();
  b_ctx.TryCancel();
  b->Finish();
  CheckStillServes(f);
}

}  // namespace
}  // namespace shortener::testing
