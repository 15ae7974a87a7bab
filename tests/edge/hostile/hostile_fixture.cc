#include "tests/edge/hostile/hostile_fixture.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <pqxx/pqxx>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "lib/grpcutil/status.h"
#include "tests/support/process_probe.h"

namespace shortener::testing {
namespace {

std::unique_ptr<grpc::ClientContext> Ctx(absl::Duration timeout) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
  return ctx;
}

std::string HeadRequest(const std::string& path) {
  return absl::StrCat("HEAD ", path, " HTTP/1.1\r\nHost: sho.rt\r\n\r\n");
}

// Sleeps until `due`, waking early (false) when `stop` is set.
bool SleepUntil(absl::Time due, const std::atomic<bool>& stop) {
  while (!stop.load()) {
    const absl::Duration left = due - absl::Now();
    if (left <= absl::ZeroDuration()) return true;
    absl::SleepFor(std::min(left, absl::Milliseconds(20)));
  }
  return false;
}

double MiB(uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// Humans and bots GetClickStats counts for `code` over the hours around now;
// -1 each if the call fails.
std::pair<int64_t, int64_t> ClickTotals(v1::ShortenService::Stub& stub, const std::string& code) {
  v1::GetClickStatsRequest request;
  request.set_code(code);
  const absl::Time now = absl::Now();
  *request.mutable_start_time() = grpcutil::ToProtoTimestamp(now - absl::Hours(2));
  *request.mutable_end_time() = grpcutil::ToProtoTimestamp(now + absl::Hours(1));
  request.set_granularity(v1::GRANULARITY_HOUR);
  v1::GetClickStatsResponse response;
  if (!stub.GetClickStats(Ctx(absl::Seconds(10)).get(), request, &response).ok()) return {-1, -1};
  return {response.total_human_clicks(), response.total_bot_clicks()};
}

}  // namespace

std::map<std::string, double> ReadEdgeMetrics(const EdgeProcess& edge) {
  return ScrapeMetrics(edge.admin_port());
}

double MetricOr0(const std::map<std::string, double>& metrics, const std::string& sample) {
  auto it = metrics.find(sample);
  return it == metrics.end() ? 0 : it->second;
}

std::string GetRequest(const std::string& path, const std::string& extra_headers) {
  return absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: sho.rt\r\nUser-Agent: ", kChrome, "\r\n",
                      extra_headers, "\r\n");
}

std::vector<int> RawOutcome::statuses() const {
  std::vector<int> out;
  for (const HttpResponse& r : responses) out.push_back(r.status);
  return out;
}

RawOutcome SendRaw(int port, const std::string& bytes, absl::Duration quiet) {
  RawOutcome outcome;
  absl::StatusOr<HttpConnection> conn = HttpConnection::Connect(port, absl::Seconds(5));
  if (!conn.ok()) {
    outcome.error = conn.status().ToString();
    return outcome;
  }
  // The edge may close before it has read everything (a refused head):
  // what it answered is still there to read.
  (void)conn->Send(bytes);
  while (true) {
    absl::StatusOr<HttpResponse> response = conn->Read(false, quiet);
    if (response.ok()) {
      outcome.responses.push_back(*std::move(response));
      continue;
    }
    if (absl::IsUnavailable(response.status())) {
      outcome.closed = true;
    } else if (!absl::IsDeadlineExceeded(response.status())) {
      outcome.error = response.status().ToString();
    }
    return outcome;
  }
}

absl::Duration Percentile(std::vector<absl::Duration> values, double p) {
  if (values.empty()) return absl::ZeroDuration();
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p * values.size()))];
}

// --- Canary ----------------------------------------------------------------

Canary::Canary(int port, std::string code, std::string location)
    : request_(GetRequest("/" + code)), location_(std::move(location)) {
  for (int i = 0; i < kCanaryConnections; ++i) {
    absl::StatusOr<HttpConnection> conn = HttpConnection::Connect(port, absl::Seconds(5));
    if (!conn.ok()) {
      open_errors_.push_back(conn.status().ToString());
      continue;
    }
    connections_.push_back(*std::move(conn));
  }
  figures_.resize(connections_.size());
  const absl::Time start = absl::Now();
  for (size_t i = 0; i < connections_.size(); ++i) {
    threads_.emplace_back([this, i, start] { Run(static_cast<int>(i), start); });
  }
}

Canary::~Canary() { Stop(); }

void Canary::Run(int index, absl::Time start) {
  CanaryFigures& out = figures_[index];
  HttpConnection& conn = connections_[index];
  const absl::Duration period = absl::Seconds(kCanaryConnections / kCanaryRate);
  const absl::Time first = start + absl::Seconds(index / kCanaryRate);
  for (int64_t i = 0;; ++i) {
    const absl::Time due = first + period * i;
    if (!SleepUntil(due, stop_)) return;
    ++out.due;
    absl::Status sent = conn.Send(request_);
    absl::StatusOr<HttpResponse> response =
        sent.ok() ? conn.Read(false, absl::Seconds(5)) : absl::StatusOr<HttpResponse>(sent);
    std::string failure;
    if (!response.ok()) {
      failure = response.status().ToString();
    } else if (response->status != 302 || response->Header("location") != location_) {
      failure = absl::StrCat("answered ", response->status, " Location \"",
                             response->Header("location"), "\"");
    }
    if (failure.empty()) {
      ++out.redirects;
      out.latencies.push_back(absl::Now() - due);
      continue;
    }
    ++out.failures;
    if (out.first_failure.empty()) {
      out.first_failure = absl::StrCat("canary connection ", index, ", request ", i, ": ", failure);
    }
    if (!response.ok()) return;  // the connection is gone
  }
}

CanaryFigures Canary::Stop() {
  stop_ = true;
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  CanaryFigures all;
  for (const std::string& error : open_errors_) {
    ++all.failures;
    if (all.first_failure.empty()) all.first_failure = "canary connect: " + error;
  }
  for (const CanaryFigures& f : figures_) {
    all.due += f.due;
    all.redirects += f.redirects;
    all.failures += f.failures;
    if (all.first_failure.empty()) all.first_failure = f.first_failure;
    all.latencies.insert(all.latencies.end(), f.latencies.begin(), f.latencies.end());
  }
  return all;
}

// --- Revoker ---------------------------------------------------------------

Revoker::Revoker(std::unique_ptr<v1::ShortenService::Stub> stub, int edge_port)
    : stub_(std::move(stub)), edge_port_(edge_port) {
  // Connected before the scenario starts (it may take every connection).
  absl::StatusOr<HttpConnection> conn = HttpConnection::Connect(edge_port_, absl::Seconds(5));
  if (!conn.ok()) {
    Revocation failed;
    failed.error = "revoker connect: " + conn.status().ToString();
    revocations_.push_back(failed);
    return;
  }
  thread_ = std::thread([this, c = std::make_shared<HttpConnection>(*std::move(conn))] {
    const absl::Time start = absl::Now();
    for (int round = 0; SleepUntil(start + absl::Seconds(round), stop_); ++round) {
      revocations_.push_back(Once(round, *c));
    }
  });
}

Revoker::~Revoker() { Stop(); }

Revocation Revoker::Once(int round, HttpConnection& edge) {
  Revocation r;
  v1::ShortenRequest shorten;
  shorten.set_long_url(
      absl::StrCat("https://example.com/revoked/", round, "/", absl::ToUnixNanos(absl::Now())));
  shorten.set_force_new(true);
  v1::ShortenResponse made;
  grpc::Status status = stub_->Shorten(Ctx(absl::Seconds(5)).get(), shorten, &made);
  if (!status.ok()) {
    r.error = absl::StrCat("round ", round, ": Shorten: ", status.error_message());
    return r;
  }
  const std::string head = HeadRequest("/" + made.code());
  // HEAD: the edge resolves and caches the link without counting a click.
  absl::Status sent = edge.Send(head);
  absl::StatusOr<HttpResponse> cached =
      sent.ok() ? edge.Read(true, absl::Seconds(5)) : absl::StatusOr<HttpResponse>(sent);
  if (!cached.ok() || cached->status != 302) {
    r.error = absl::StrCat("round ", round, ": caching HEAD: ",
                           cached.ok() ? absl::StrCat(cached->status) : cached.status().ToString());
    return r;
  }
  v1::RevokeRequest revoke;
  revoke.set_code(made.code());
  v1::Link link;
  const absl::Time before = absl::Now();
  status = stub_->Revoke(Ctx(absl::Seconds(5)).get(), revoke, &link);
  const absl::Time revoked = absl::Now();
  r.revoke_rpc = revoked - before;
  if (!status.ok()) {
    r.error = absl::StrCat("round ", round, ": Revoke: ", status.error_message());
    return r;
  }
  while (absl::Now() - revoked < absl::Seconds(3)) {
    sent = edge.Send(head);
    absl::StatusOr<HttpResponse> answer =
        sent.ok() ? edge.Read(true, absl::Seconds(5)) : absl::StatusOr<HttpResponse>(sent);
    if (!answer.ok() || (answer->status != 302 && answer->status != 410)) {
      r.error =
          absl::StrCat("round ", round, ": polling HEAD: ",
                       answer.ok() ? absl::StrCat(answer->status) : answer.status().ToString());
      return r;
    }
    if (answer->status == 410) {
      r.until_410 = absl::Now() - revoked;
      r.ok = true;
      return r;
    }
    absl::SleepFor(absl::Milliseconds(2));
  }
  r.error = absl::StrCat("round ", round, ": still redirected 3 s after Revoke");
  r.until_410 = absl::Now() - revoked;
  return r;
}

std::vector<Revocation> Revoker::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  return revocations_;
}

// --- MemoryWatch -----------------------------------------------------------

MemoryWatch::MemoryWatch(pid_t pid) : pid_(pid) {
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      absl::StatusOr<ProcessMemory> m = ReadProcessMemory(pid_);
      if (m.ok()) {
        if (figures_.samples++ == 0) figures_.start_rss = m->rss_bytes;
        figures_.max_rss = std::max(figures_.max_rss, m->rss_bytes);
        figures_.hwm = m->peak_rss_bytes;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
  });
}

MemoryWatch::~MemoryWatch() { Stop(); }

MemoryFigures MemoryWatch::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  return figures_;
}

// --- HostileFixture --------------------------------------------------------

HostileFixture::HostileFixture(HostileOptions options) {
  auto c = PgCluster::Start();
  REQUIRE(c.ok());
  cluster = *std::move(c);
  if (options.count_statements) {
    {
      pqxx::connection conn(cluster->ConnInfo());
      pqxx::nontransaction tx(conn);
      tx.exec("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
    }
    REQUIRE(cluster->Stop().ok());
    REQUIRE(cluster->Resume().ok());
    pqxx::connection conn(cluster->ConnInfo());
    pqxx::nontransaction tx(conn);
    tx.exec("CREATE EXTENSION pg_stat_statements");
  }
  ServiceProcessOptions service_options;
  service_options.conninfo = cluster->ConnInfo();
  auto s = ServiceProcess::Start(service_options);
  if (!s.ok()) FAIL(s.status().ToString());
  service = *std::move(s);
  stub = service->NewStub();
  v1::ShortenRequest request;
  request.set_long_url("https://example.com/canary/still-redirecting");
  v1::ShortenResponse made;
  grpc::Status status = stub->Shorten(Ctx(absl::Seconds(10)).get(), request, &made);
  INFO(status.error_message());
  REQUIRE(status.ok());
  canary = made;
  if (options.start_edge) {
    EdgeProcessOptions edge_options;
    edge_options.extra_flags = options.edge_flags;
    edge = StartEdge(std::move(edge_options));
  }
}

std::unique_ptr<EdgeProcess> HostileFixture::StartEdge(EdgeProcessOptions options) {
  options.service_target = service->target();
  options.secret_file = service->secret_file();
  absl::StatusOr<std::string> key_file = service->EdgeKeyFile();
  if (!key_file.ok()) FAIL(key_file.status().ToString());
  options.api_key_file = *key_file;
  absl::StatusOr<std::unique_ptr<EdgeProcess>> started = EdgeProcess::Start(std::move(options));
  if (!started.ok()) FAIL(started.status().ToString());
  return *std::move(started);
}

v1::ShortenResponse HostileFixture::CachedLink(const EdgeProcess& on, const std::string& url) {
  v1::ShortenRequest request;
  request.set_long_url(url);
  request.set_force_new(true);
  v1::ShortenResponse made;
  grpc::Status status = stub->Shorten(Ctx(absl::Seconds(10)).get(), request, &made);
  INFO(status.error_message());
  REQUIRE(status.ok());
  absl::StatusOr<HttpResponse> head = HttpGet(on.port(), "/" + made.code(), "HEAD");
  REQUIRE(head.ok());
  REQUIRE(head->status == 302);
  return made;
}

ScenarioFigures HostileFixture::Run(const std::string& name, EdgeProcess& on,
                                    const std::function<void()>& hostile,
                                    absl::Duration min_window) {
  absl::StatusOr<HttpResponse> head = HttpGet(on.port(), "/" + canary.code(), "HEAD");
  REQUIRE(head.ok());
  REQUIRE(head->status == 302);  // cached now
  ScenarioFigures figures;
  figures.name = name;
  MemoryWatch memory(on.process().pid());
  Canary canary_traffic(on.port(), canary.code(), canary.link().long_url());
  Revoker revoker(service->NewStub(), on.port());
  const absl::Time start = absl::Now();
  hostile();
  const absl::Duration left = min_window - (absl::Now() - start);
  if (left > absl::ZeroDuration()) absl::SleepFor(left);
  figures.canary = canary_traffic.Stop();
  figures.revocations = revoker.Stop();
  figures.memory = memory.Stop();
  figures.window = absl::Now() - start;
  return figures;
}

void HostileFixture::CheckScenario(const ScenarioFigures& f) {
  const CanaryFigures& c = f.canary;
  absl::Duration revoke_max, until_410_max;
  int revoked = 0;
  for (const Revocation& r : f.revocations) {
    revoked += r.ok ? 1 : 0;
    revoke_max = std::max(revoke_max, r.revoke_rpc);
    until_410_max = std::max(until_410_max, r.until_410);
  }
  const std::string line = absl::StrFormat(
      "hostile[%s]%s: %.1f s; canary %d/%d redirected, p50 %s p99 %s max %s; revocations %d/%d: "
      "Revoke max %s, 410 max %s after; edge VmRSS %.1f MiB at start, max %.1f MiB, VmHWM %.1f MiB",
      f.name, kSanitized ? " (sanitized build)" : "", absl::ToDoubleSeconds(f.window), c.redirects,
      c.due, absl::FormatDuration(Percentile(c.latencies, 0.5)),
      absl::FormatDuration(Percentile(c.latencies, 0.99)),
      absl::FormatDuration(Percentile(c.latencies, 1.0)), revoked, f.revocations.size(),
      absl::FormatDuration(revoke_max), absl::FormatDuration(until_410_max),
      MiB(f.memory.start_rss), MiB(f.memory.max_rss), MiB(f.memory.hwm));
  std::fprintf(stderr, "%s\n", line.c_str());
  INFO(line);
  INFO(c.first_failure);
  CHECK(c.failures == 0);
  CHECK(c.due > 0);
  CHECK(c.redirects == c.due);
  CHECK(Percentile(c.latencies, 0.99) < kCanaryP99Bound);
  // A round a second over a window of at least three seconds.
  CHECK(f.revocations.size() >= 2);
  for (const Revocation& r : f.revocations) {
    INFO(r.error);
    CHECK(r.ok);
    CHECK(r.revoke_rpc <= kRevocationBound);
    CHECK(r.until_410 <= kRevocationBound);
  }
  CHECK(f.memory.samples > 0);
  CHECK(f.memory.hwm <= kEdgeMemoryBound);
}

void HostileFixture::CheckClicks(const EdgeProcess& on, const ScenarioFigures& figures,
                                 const std::map<std::string, int64_t>& other) {
  const char* kDropped[] = {"queue_full", "spool_full", "spool_error", "refused",
                            "spool_unreadable"};
  double queued = -1, acknowledged = -1, dropped = -1;
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  do {
    const std::map<std::string, double> m = ReadEdgeMetrics(on);
    queued = MetricOr0(m, "edge_clicks_queued_total");
    acknowledged = MetricOr0(m, "edge_clicks_acknowledged_total");
    dropped = 0;
    for (const char* reason : kDropped) {
      dropped += MetricOr0(m, absl::StrCat("edge_clicks_dropped_total{reason=\"", reason, "\"}"));
    }
    if (!m.empty() && queued == acknowledged + dropped) break;
    absl::SleepFor(absl::Milliseconds(100));
  } while (absl::Now() < deadline);
  INFO("clicks queued " << queued << ", acknowledged " << acknowledged << ", dropped " << dropped);
  REQUIRE(queued == acknowledged + dropped);
  CHECK(dropped == 0);
  // Every click the edge queued is one of the redirects the test saw: none
  // from a request that should not have been answered.
  int64_t expected = figures.canary.redirects;
  for (const auto& [code, n] : other) expected += n;
  CHECK(queued == static_cast<double>(expected));
  const auto [human, bot] = ClickTotals(*stub, canary.code());
  CHECK(human == figures.canary.redirects);
  CHECK(bot == 0);
  for (const auto& [code, n] : other) {
    INFO("code " << code);
    const auto [code_human, code_bot] = ClickTotals(*stub, code);
    CHECK(code_human + code_bot == n);
  }
}

int64_t HostileFixture::StatementCalls(const std::string& fragment) {
  pqxx::connection conn(cluster->ConnInfo());
  pqxx::nontransaction tx(conn);
  const pqxx::result r = tx.exec_params(
      "SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements "
      "WHERE strpos(query, $1) > 0",
      fragment);
  return r[0][0].as<int64_t>();
}

void HostileFixture::ResetStatements() {
  pqxx::connection conn(cluster->ConnInfo());
  pqxx::nontransaction tx(conn);
  tx.exec("SELECT pg_stat_statements_reset()");
}

}  // namespace shortener::testing
