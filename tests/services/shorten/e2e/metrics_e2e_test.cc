// The admin listener of the real shorten-service (--admin_listen=127.0.0.1:0,
// its port read from the log): /metrics counts the calls made by method and
// code, exactly; /healthz and /readyz, /readyz 503 while the database is
// stopped and 200 again after; its connection and request-size bounds.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/services/shorten/e2e/e2e_fixture.h"
#include "tests/support/http_client.h"

namespace shortener::testing {
namespace {

std::map<std::string, double> Scrape(int port) {
  std::map<std::string, double> samples = ScrapeMetrics(port);
  REQUIRE_FALSE(samples.empty());
  return samples;
}

std::string Calls(const std::string& method, grpc::StatusCode code) {
  return absl::StrCat("shorten_rpcs_total{code=\"",
                      absl::StatusCodeToString(static_cast<absl::StatusCode>(code)), "\",method=\"",
                      method, "\"}");
}

int AdminPort(const E2eFixture& f) {
  const int port = f.service->admin_port();
  INFO(f.service->Log());
  REQUIRE(port > 0);
  return port;
}

TEST_CASE("metrics: /metrics counts exactly the calls made, by method and code",
          "[services/shorten/e2e][metrics][pg][e2e]") {
  E2eFixture f;
  const int port = AdminPort(f);
  const std::map<std::string, double> before = Scrape(port);
  REQUIRE(before.count(Calls("Shorten", grpc::StatusCode::OK)) == 1);

  v1::ShortenResponse shortened;
  REQUIRE(f.Shorten("https://example.com/one", &shortened).ok());
  REQUIRE(f.Shorten("https://example.com/two", &shortened).ok());
  v1::ResolveResponse resolved;
  REQUIRE(f.Resolve(shortened.code(), &resolved).ok());
  // Failing calls: no key at all, and a code that is not a code.
  std::unique_ptr<v1::ShortenService::Stub> keyless = f.service->NewStub("");
  v1::ShortenRequest request;
  request.set_long_url("https://example.com/three");
  const grpc::Status unauthenticated =
      keyless->Shorten(E2eFixture::Ctx().get(), request, &shortened);
  REQUIRE(unauthenticated.error_code() == grpc::StatusCode::UNAUTHENTICATED);
  const grpc::Status bad_code = f.Resolve("!!", &resolved);
  REQUIRE_FALSE(bad_code.ok());

  const std::map<std::string, double> after = Scrape(port);
  const auto delta = [&](const std::string& sample) {
    INFO(sample);
    REQUIRE(after.count(sample) == 1);
    return after.at(sample) - (before.count(sample) ? before.at(sample) : 0);
  };
  CHECK(delta(Calls("Shorten", grpc::StatusCode::OK)) == 2);
  CHECK(delta(Calls("Shorten", grpc::StatusCode::UNAUTHENTICATED)) == 1);
  CHECK(delta(Calls("Resolve", grpc::StatusCode::OK)) == 1);
  CHECK(delta(Calls("Resolve", bad_code.error_code())) == 1);
  CHECK(delta(Calls("GetLink", grpc::StatusCode::OK)) == 0);
  CHECK(delta("shorten_rpc_duration_seconds_count{method=\"Shorten\"}") == 3);
  CHECK(delta("shorten_rpc_duration_seconds_count{method=\"Resolve\"}") == 2);
  CHECK(delta("shorten_rpcs_received_total{method=\"Shorten\"}") == 3);
  // What the parts count, read at scrape time.
  CHECK(delta("shorten_group_commit_links_total") == 2);
  CHECK(delta("shorten_group_commit_batch_size_count") >= 1);
  CHECK(after.at("shorten_id_remaining") > 0);
  CHECK(after.at("shorten_db_pool_open_connections{pool=\"links\"}") >= 1);
  CHECK(after.at("shorten_queue_max_items{queue=\"group_committer\"}") == 20000);
  CHECK(after.at("shorten_ready") == 1);
}

TEST_CASE("metrics: /healthz is 200, /readyz 503 while the database is stopped and 200 after",
          "[services/shorten/e2e][metrics][pg][e2e]") {
  E2eFixture f;
  const int port = AdminPort(f);
  absl::StatusOr<HttpResponse> health = HttpGet(port, "/healthz");
  REQUIRE(health.ok());
  CHECK(health->status == 200);
  CHECK(health->body == "ok\n");
  const auto readyz = [port] {
    absl::StatusOr<HttpResponse> ready = HttpGet(port, "/readyz");
    REQUIRE(ready.ok());
    return ready->status;
  };
  const auto eventually = [&](int status) {
    const absl::Time deadline = absl::Now() + absl::Seconds(15);
    while (absl::Now() < deadline && readyz() != status) absl::SleepFor(absl::Milliseconds(100));
    return readyz() == status;
  };
  REQUIRE(eventually(200));
  REQUIRE(f.cluster->Stop().ok());
  CHECK(eventually(503));
  health = HttpGet(port, "/healthz");  // alive all the same
  REQUIRE(health.ok());
  CHECK(health->status == 200);
  REQUIRE(f.cluster->Resume().ok());
  CHECK(eventually(200));
  CHECK_THAT(f.service->Log(), Catch::Contains("readiness: the database does not answer"));
}

TEST_CASE("metrics: the admin listener keeps at most 16 connections and refuses large requests",
          "[services/shorten/e2e][metrics][pg][e2e]") {
  E2eFixture f;
  const int port = AdminPort(f);
  SECTION("a 17th connection is closed unanswered; one frees a place") {
    absl::StatusOr<std::vector<HttpConnection>> opened =
        OpenAnsweredConnections(port, 16, "/healthz");
    REQUIRE(opened.ok());
    std::vector<HttpConnection> held = *std::move(opened);
    absl::StatusOr<HttpConnection> extra = HttpConnection::Connect(port);
    REQUIRE(extra.ok());
    CHECK(extra->WaitClosed(absl::Seconds(5)));
    held.pop_back();  // closes one
    bool answered = false;
    for (int attempt = 0; attempt < 50 && !answered; ++attempt) {
      absl::StatusOr<HttpResponse> r = HttpGet(port, "/healthz");
      answered = r.ok() && r->status == 200;
      if (!answered) absl::SleepFor(absl::Milliseconds(50));
    }
    CHECK(answered);
  }
  SECTION("a head over 8 KiB gets 431, a request line over 2 KiB 414, a body 413") {
    absl::StatusOr<HttpResponse> r =
        HttpGet(port, "/metrics", "GET", absl::StrCat("X-Big: ", std::string(9000, 'a'), "\r\n"));
    REQUIRE(r.ok());
    CHECK(r->status == 431);
    r = HttpGet(port, absl::StrCat("/metrics?", std::string(3000, 'a')));
    REQUIRE(r.ok());
    CHECK(r->status == 414);
    absl::StatusOr<HttpConnection> c = HttpConnection::Connect(port);
    REQUIRE(c.ok());
    REQUIRE(c->Send("POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx").ok());
    r = c->Read();
    REQUIRE(r.ok());
    CHECK(r->status == 413);
    CHECK(r->Header("connection") == "close");
  }
}

}  // namespace
}  // namespace shortener::testing
