// redirect-edge under a low open-file limit (prlimit), end to end: the
// connection limit it derives leaves room for its own descriptors, so
// connections past it are refused while the ones open keep being served and
// clicks keep reaching the service; an explicit --max_connections that does
// not fit stops the start.
#include <dirent.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tests/edge/e2e/edge_fixture.h"

namespace shortener::testing {
namespace {

constexpr char kPrlimit[] = "/usr/bin/prlimit";

// Open descriptors of process `pid`.
int OpenDescriptors(pid_t pid) {
  DIR* dir = opendir(absl::StrCat("/proc/", pid, "/fd").c_str());
  if (dir == nullptr) return -1;
  int count = 0;
  while (dirent* entry = readdir(dir)) count += entry->d_name[0] != '.' ? 1 : 0;
  closedir(dir);
  return count;
}

// The number after `key` in the edge's log ("... --max_connections 99 ...").
uint64_t LoggedNumber(const std::string& log, const std::string& key) {
  const size_t at = log.find(key);
  if (at == std::string::npos) return 0;
  const size_t start = at + key.size();
  const size_t end = log.find_first_not_of("0123456789", start);
  uint64_t value = 0;
  return absl::SimpleAtoi(log.substr(start, end - start), &value) ? value : 0;
}

std::unique_ptr<EdgeProcess> StartLimitedEdge(EdgeFixture& f, const std::string& nofile,
                                              std::vector<std::string> flags,
                                              absl::Status* failure = nullptr) {
  EdgeProcessOptions options;
  options.service_target = f.service->target();
  options.secret_file = f.service->secret_file();
  auto key_file = f.service->EdgeKeyFile();
  REQUIRE(key_file.ok());
  options.api_key_file = *key_file;
  options.launcher = {kPrlimit, "--nofile=" + nofile};
  options.extra_flags = std::move(flags);
  auto edge = EdgeProcess::Start(options);
  if (failure != nullptr) {
    *failure = edge.status();
    return nullptr;
  }
  if (!edge.ok()) FAIL(edge.status().ToString());
  return *std::move(edge);
}

TEST_CASE(
    "under a low open-file limit the edge refuses connections past its derived limit "
    "and keeps serving and counting",
    "[edge/e2e][limits][e2e]") {
  EdgeFixture f;
  const std::string code = f.Shorten("https://example.com/descriptors").code();
  std::unique_ptr<EdgeProcess> edge = StartLimitedEdge(
      f, "256:256",
      {"--threads=2", "--click_flush_interval=100ms", "--max_connections_per_client=0"});
  const std::string log = edge->Log();
  INFO(log);
  CHECK(absl::StrContains(log, "open-file limit 256 (soft was 256, hard 256)"));
  CHECK(absl::StrContains(log, "derived from the limit"));
  const uint64_t limit = LoggedNumber(log, "--max_connections ");
  const uint64_t reserved = LoggedNumber(log, "derived from the limit; ");
  REQUIRE(limit > 16);
  CHECK(limit + reserved == 256);
  CHECK(edge->Metric("edge_http_max_connections") == static_cast<double>(limit));
  const int idle_descriptors = OpenDescriptors(edge->process().pid());

  // Fill the limit with keep-alive connections, each redirected once.
  const std::string request = absl::StrCat("GET /", code, " HTTP/1.1\r\nHost: sho.rt\r\n\r\n");
  std::vector<HttpConnection> open;
  for (uint64_t i = 0; i < limit; ++i) {
    auto c = HttpConnection::Connect(edge->port());
    REQUIRE(c.ok());
    REQUIRE(c->Send(request).ok());
    auto response = c->Read();
    REQUIRE(response.ok());
    REQUIRE(response->status == 302);
    open.push_back(*std::move(c));
  }
  CHECK(edge->Metric("edge_http_open_connections") == static_cast<double>(limit));
  const int full_descriptors = OpenDescriptors(edge->process().pid());

  // Past the limit: closed at once, unanswered, counted.
  constexpr int kExtra = 20;
  for (int i = 0; i < kExtra; ++i) {
    auto c = HttpConnection::Connect(edge->port());
    REQUIRE(c.ok());
    (void)c->Send(request);
    CHECK(c->WaitClosed(absl::Seconds(2)));
  }
  CHECK(edge->Metric("edge_http_connections_refused_total{reason=\"max_connections\"}") == kExtra);

  // The connections open go on being served from the cache, and every
  // redirect still reaches the service as a click.
  for (HttpConnection& c : open) {
    REQUIRE(c.Send(request).ok());
    auto response = c.Read();
    REQUIRE(response.ok());
    CHECK(response->status == 302);
  }
  CHECK(WaitForMetric(*edge, "edge_clicks_acknowledged_total", 2.0 * limit, absl::Seconds(10)));
  CHECK(edge->Metric("edge_click_rpc_failures_total") == 0);
  CHECK(edge->Metric("edge_service_ready") == 1);
  CHECK(edge->Metric("edge_cache_misses_total") == 1);
  INFO("descriptors: " << idle_descriptors << " idle, " << full_descriptors << " with " << limit
                       << " connections");
  CHECK(full_descriptors < 256);
  CHECK(full_descriptors - static_cast<int>(limit) <= static_cast<int>(reserved));
}

TEST_CASE("the edge raises its soft open-file limit to the hard one", "[edge/e2e][limits][e2e]") {
  EdgeFixture f;
  std::unique_ptr<EdgeProcess> edge = StartLimitedEdge(f, "200:400", {"--threads=1"});
  const std::string log = edge->Log();
  INFO(log);
  CHECK(absl::StrContains(log, "open-file limit 400 (soft was 200, hard 400)"));
  const uint64_t limit = LoggedNumber(log, "--max_connections ");
  const uint64_t reserved = LoggedNumber(log, "derived from the limit; ");
  CHECK(limit + reserved == 400);
  CHECK(edge->Metric("edge_http_max_connections") == static_cast<double>(limit));
  CHECK(edge->Metric("edge_http_max_connections_per_client") == 4096);
}

TEST_CASE("an explicit --max_connections that does not fit the open-file limit stops the start",
          "[edge/e2e][limits][e2e]") {
  EdgeFixture f;
  absl::Status failure;
  StartLimitedEdge(f, "256:256", {"--threads=1", "--max_connections=1000"}, &failure);
  INFO(failure.ToString());
  CHECK(absl::StrContains(failure.message(), "exited during start"));
  CHECK(absl::StrContains(failure.message(),
                          "--max_connections=1000 does not fit the open-file limit 256"));
  // One that fits starts.
  std::unique_ptr<EdgeProcess> edge =
      StartLimitedEdge(f, "256:256", {"--threads=1", "--max_connections=50"});
  CHECK(absl::StrContains(edge->Log(), "--max_connections 50 (as given"));
  CHECK(edge->Metric("edge_http_max_connections") == 50);
}

}  // namespace
}  // namespace shortener::testing
