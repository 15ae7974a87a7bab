// shorten-service's metrics without a server: the families rendered from a
// ServiceStats snapshot (names, types, labels, values, histogram buckets),
// the live RPC families, method names, Readiness over a fake probe, and
// (hidden, by hand) what counting one call costs.
#include "services/shorten/service_metrics.h"

#include <prometheus/text_serializer.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "services/shorten/readiness.h"
#include "services/shorten/rpc_metrics.h"

namespace shortener::service {
namespace {

std::string Text(const std::vector<prometheus::MetricFamily>& families) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

// Whether `text` holds `line` as a whole line.
bool HasLine(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

ServiceStats SomeStats() {
  ServiceStats s;
  s.received[static_cast<size_t>(Rpc::kShorten)] = 12;
  s.commits.batches = 3;
  s.commits.links = 7;
  s.commits.batch_sizes.Observe(1);
  s.commits.batch_sizes.Observe(2);
  s.commits.batch_sizes.Observe(4);
  s.commits.commit_seconds.Observe(0.003);
  s.reads.lookups = 9;
  s.ids.remaining = 1500;
  s.ids.waits = 2;
  s.invalidations.subscribers = 4;
  s.invalidations.backlog = 11;
  s.clicks.batches = 5;
  s.clicks.duplicates = 1;
  s.clicks.refused = 6;
  s.keys.hits = 100;
  s.keys.loads = 3;
  pg::ConnectionPool::Stats links;
  links.max_size = 8;
  links.open = 5;
  links.in_use = 2;
  links.waiting = 1;
  s.pools = {{"links", links}};
  s.queues = {{"blocking", 3, 256, 17}, {"group_committer", 0, 20000, 0}};
  s.ready = true;
  return s;
}

TEST_CASE("metrics: the parts' stats render as typed, labelled families",
          "[services/shorten][metrics]") {
  const std::string text = Text(ServiceStatsFamilies(SomeStats()));
  INFO(text);
  CHECK(HasLine(text, "# TYPE shorten_rpcs_received_total counter"));
  CHECK(HasLine(text, "shorten_rpcs_received_total{method=\"Shorten\"} 12"));
  CHECK(HasLine(text, "shorten_rpcs_received_total{method=\"RevokeApiKey\"} 0"));
  CHECK(HasLine(text, "shorten_ready 1"));
  CHECK(HasLine(text, "# TYPE shorten_queue_items gauge"));
  CHECK(HasLine(text, "shorten_queue_items{queue=\"blocking\"} 3"));
  CHECK(HasLine(text, "shorten_queue_max_items{queue=\"group_committer\"} 20000"));
  CHECK(HasLine(text, "shorten_queue_refused_total{queue=\"blocking\"} 17"));
  CHECK(HasLine(text, "shorten_group_commit_batches_total 3"));
  CHECK(HasLine(text, "shorten_group_commit_links_total 7"));
  CHECK(HasLine(text, "shorten_read_lookups_total 9"));
  CHECK(HasLine(text, "shorten_db_pool_max_connections{pool=\"links\"} 8"));
  CHECK(HasLine(text, "shorten_db_pool_in_use_connections{pool=\"links\"} 2"));
  CHECK(HasLine(text, "shorten_db_pool_waiting{pool=\"links\"} 1"));
  CHECK(HasLine(text, "shorten_id_remaining 1500"));
  CHECK(HasLine(text, "shorten_id_lease_waits_total 2"));
  CHECK(HasLine(text, "shorten_invalidation_subscribers 4"));
  CHECK(HasLine(text, "shorten_invalidation_backlog_codes 11"));
  CHECK(HasLine(text, "shorten_click_batches_total{outcome=\"recorded\"} 5"));
  CHECK(HasLine(text, "shorten_click_batches_total{outcome=\"duplicate\"} 1"));
  CHECK(HasLine(text, "shorten_click_events_total{outcome=\"refused\"} 6"));
  CHECK(HasLine(text, "shorten_key_cache_hits_total 100"));
  CHECK(HasLine(text, "shorten_key_cache_misses_total 3"));
}

TEST_CASE("metrics: the HTTP/JSON API's listener has families only when it is on",
          "[services/shorten][metrics]") {
  ServiceStats s = SomeStats();
  CHECK(Text(ServiceStatsFamilies(s)).find("shorten_http_") == std::string::npos);
  edge::http::HttpServerStats http;
  http.open_connections = 3;
  http.max_connections = 1024;
  http.connections_accepted = 40;
  http.connections_refused = 2;
  http.requests = 77;
  http.refused_requests[static_cast<size_t>(edge::http::RequestRefusal::kBodyTooLarge)] = 5;
  http.idle_timeouts = 1;
  http.request_timeouts = 1;
  s.http_api = http;
  const std::string text = Text(ServiceStatsFamilies(s));
  INFO(text);
  for (const char* line : {
           "shorten_http_open_connections 3",
           "shorten_http_max_connections 1024",
           "shorten_http_connections_accepted_total 40",
           "shorten_http_connections_refused_total 2",
           "shorten_http_requests_total 77",
           "shorten_http_refused_requests_total{reason=\"body_too_large\"} 5",
           "shorten_http_refused_requests_total{reason=\"malformed\"} 0",
           "shorten_http_timeouts_total 2",
       }) {
    CHECK(HasLine(text, line));
  }
}

TEST_CASE("metrics: histograms from stats are cumulative with one +Inf bucket",
          "[services/shorten][metrics]") {
  const std::string text = Text(ServiceStatsFamilies(SomeStats()));
  INFO(text);
  CHECK(HasLine(text, "# TYPE shorten_group_commit_batch_size histogram"));
  CHECK(HasLine(text, "shorten_group_commit_batch_size_bucket{le=\"1\"} 1"));
  CHECK(HasLine(text, "shorten_group_commit_batch_size_bucket{le=\"2\"} 2"));
  CHECK(HasLine(text, "shorten_group_commit_batch_size_bucket{le=\"4\"} 3"));
  CHECK(HasLine(text, "shorten_group_commit_batch_size_bucket{le=\"8192\"} 3"));
  CHECK(HasLine(text, "shorten_group_commit_batch_size_bucket{le=\"+Inf\"} 3"));
  CHECK(HasLine(text, "shorten_group_commit_batch_size_count 3"));
  CHECK(HasLine(text, "shorten_group_commit_batch_size_sum 7"));
  CHECK(HasLine(text, "shorten_group_commit_duration_seconds_bucket{le=\"0.0025\"} 0"));
  CHECK(HasLine(text, "shorten_group_commit_duration_seconds_bucket{le=\"0.005\"} 1"));
  size_t inf = 0;
  for (size_t at = text.find("shorten_group_commit_batch_size_bucket{le=\"+Inf\"}");
       at != std::string::npos;
       at = text.find("shorten_group_commit_batch_size_bucket{le=\"+Inf\"}", at + 1)) {
    ++inf;
  }
  CHECK(inf == 1);
}

TEST_CASE("metrics: every call is counted by method and code, unary calls timed",
          "[services/shorten][metrics]") {
  prometheus::Registry registry;
  RpcMetrics rpcs(registry);
  rpcs.Observe(Rpc::kShorten, grpc::StatusCode::OK, absl::Milliseconds(3));
  rpcs.Observe(Rpc::kShorten, grpc::StatusCode::OK, absl::Milliseconds(30));
  rpcs.Observe(Rpc::kResolve, grpc::StatusCode::NOT_FOUND, absl::Microseconds(200));
  rpcs.Observe(Rpc::kWatchInvalidations, grpc::StatusCode::CANCELLED, absl::Minutes(5));
  const std::string text = Text(registry.Collect());
  INFO(text);
  CHECK(HasLine(text, "shorten_rpcs_total{code=\"OK\",method=\"Shorten\"} 2"));
  CHECK(HasLine(text, "shorten_rpcs_total{code=\"NOT_FOUND\",method=\"Resolve\"} 1"));
  CHECK(HasLine(text, "shorten_rpcs_total{code=\"CANCELLED\",method=\"WatchInvalidations\"} 1"));
  // Every method with every code exists from the start.
  CHECK(HasLine(text, "shorten_rpcs_total{code=\"UNAUTHENTICATED\",method=\"RevokeApiKey\"} 0"));
  CHECK(HasLine(text, "shorten_rpc_duration_seconds_bucket{method=\"Shorten\",le=\"0.005\"} 1"));
  CHECK(HasLine(text, "shorten_rpc_duration_seconds_bucket{method=\"Shorten\",le=\"0.05\"} 2"));
  CHECK(HasLine(text, "shorten_rpc_duration_seconds_count{method=\"Shorten\"} 2"));
  CHECK(HasLine(text, "shorten_rpc_duration_seconds_count{method=\"Resolve\"} 1"));
  // A stream's life is not a latency.
  CHECK(text.find("shorten_rpc_duration_seconds_count{method=\"WatchInvalidations\"}") ==
        std::string::npos);
}

TEST_CASE("metrics: only ShortenService's methods map to an Rpc", "[services/shorten][metrics]") {
  CHECK(RpcMetrics::RpcOfMethod("/shortener.v1.ShortenService/Shorten") == Rpc::kShorten);
  CHECK(RpcMetrics::RpcOfMethod("/shortener.v1.ShortenService/RevokeApiKey") == Rpc::kRevokeApiKey);
  CHECK_FALSE(RpcMetrics::RpcOfMethod("/grpc.health.v1.Health/Check").has_value());
  CHECK_FALSE(RpcMetrics::RpcOfMethod("/shortener.v1.ShortenService/Nope").has_value());
  CHECK_FALSE(RpcMetrics::RpcOfMethod("/shortener.v1.ShortenService/").has_value());
}

TEST_CASE("metrics: Render puts the live families and the gathered ones together",
          "[services/shorten][metrics]") {
  ServiceMetrics metrics([] { return SomeStats(); });
  metrics.rpcs().Observe(Rpc::kGetLink, grpc::StatusCode::PERMISSION_DENIED, absl::Milliseconds(1));
  const std::string text = metrics.Render();
  INFO(text);
  CHECK(HasLine(text, "shorten_rpcs_total{code=\"PERMISSION_DENIED\",method=\"GetLink\"} 1"));
  CHECK(HasLine(text, "shorten_key_cache_hits_total 100"));
}

// Waits up to 5 s for `want` to hold.
template <typename Pred>
bool Eventually(Pred want) {
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (absl::Now() < deadline) {
    if (want()) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return want();
}

TEST_CASE("readiness: ready only while serving and the database answers the probe",
          "[services/shorten][readiness][concurrent]") {
  std::atomic<bool> database_up{true};
  std::atomic<int> probes{0};
  Readiness readiness(
      [&] {
        probes.fetch_add(1);
        return database_up.load() ? absl::OkStatus() : absl::UnavailableError("down");
      },
      absl::Milliseconds(10));
  REQUIRE(Eventually([&] { return readiness.DatabaseOk(); }));
  CHECK_FALSE(readiness.Ready());  // not serving yet
  readiness.SetServing(true);
  CHECK(readiness.Ready());
  database_up = false;
  REQUIRE(Eventually([&] { return !readiness.Ready(); }));
  database_up = true;
  REQUIRE(Eventually([&] { return readiness.Ready(); }));
  readiness.SetServing(false);  // draining
  CHECK_FALSE(readiness.Ready());
  CHECK(probes.load() >= 3);
}

// By hand: ./shorten_metrics_test "[bench]". What counting one call costs
// on the call path (docs/decisions.md, "Service metrics"): RpcMetrics'
// counter and histogram against two relaxed atomic adds, on 1 and 2
// threads.
TEST_CASE("metrics: cost of counting one call", "[services/shorten][metrics][.][bench]") {
  constexpr int kCalls = 2'000'000;
  prometheus::Registry registry;
  RpcMetrics rpcs(registry);
  std::atomic<uint64_t> count{0};
  std::atomic<uint64_t> sum{0};
  const auto measure = [](int threads, auto fn) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&fn] {
        for (int i = 0; i < kCalls; ++i) fn(i);
      });
    }
    for (std::thread& w : workers) w.join();
    const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
    return took.count() / kCalls;  // wall ns per call per thread
  };
  for (int threads : {1, 2}) {
    const double prom = measure(threads, [&](int i) {
      rpcs.Observe(Rpc::kShorten, grpc::StatusCode::OK, absl::Microseconds(100 + i % 1000));
    });
    const double atomics = measure(threads, [&](int i) {
      count.fetch_add(1, std::memory_order_relaxed);
      sum.fetch_add(static_cast<uint64_t>(100 + i % 1000), std::memory_order_relaxed);
    });
    WARN(threads << " thread(s): prometheus-cpp " << prom << " ns/call, relaxed atomics " << atomics
                 << " ns/call");
  }
}

}  // namespace
}  // namespace shortener::service
