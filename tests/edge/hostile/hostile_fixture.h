// The setting of every hostile-traffic scenario (issue 17, item 5): a
// private PostgreSQL, the real shorten-service and redirect-edge (default
// flags unless a scenario says otherwise), and what runs beside each
// scenario to show the edge still does its job while it is attacked:
//
//   canary   cached redirects of one live code on kCanaryConnections
//            keep-alive connections, kCanaryRate requests/s in all. Each
//            latency runs from the moment the request was due, not from
//            when it was sent, so a stall counts against every request it
//            held back (no coordinated omission).
//   revoker  about once a second: a fresh link made through the service,
//            cached in the edge (HEAD: no click), revoked (gRPC), then the
//            edge asked (HEAD, every 2 ms) until it answers 410. Measured:
//            how long Revoke takes, and how long after it the edge says 410.
//   memory   the edge's VmRSS every 50 ms and its VmHWM at the end
//            (/proc/<pid>/status).
//
// CheckScenario then asserts what every scenario shares: every canary
// request answered with its 302, canary p99 under kCanaryP99Bound, every
// Revoke answered within a second and the edge answering 410 within a
// second of it, the edge's peak memory under kEdgeMemoryBound; CheckClicks
// that after the edge flushed its clicks (its acknowledged-events metric
// caught up with the queued ones), the canary's code counts exactly the
// canary's redirects as human clicks, and every other code exactly the
// redirects the test saw for it.
//
// Assertions (Catch2) are made on the test's thread only; the canary,
// revoker and memory threads just record.
#ifndef SHORTENER_TESTS_EDGE_HOSTILE_HOSTILE_FIXTURE_H_
#define SHORTENER_TESTS_EDGE_HOSTILE_HOSTILE_FIXTURE_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "shortener/v1/shortener.grpc.pb.h"
#include "tests/support/edge_process.h"
#include "tests/support/http_client.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/service_process.h"

namespace shortener::testing {

// Built with SHORTENER_SANITIZE: the binaries run several times slower and
// ASan keeps freed memory in quarantine, so the time and memory bounds are
// larger (documented in docs/edge.md, "Hostile traffic").
#ifdef SHORTENER_HOSTILE_SANITIZED
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

inline constexpr int kCanaryConnections = 4;
inline constexpr double kCanaryRate = 200;  // requests/s over all its connections
inline const absl::Duration kCanaryP99Bound =
    kSanitized ? absl::Milliseconds(250) : absl::Milliseconds(50);
// Revoke answered, and the edge answering 410 after it, each within this.
inline const absl::Duration kRevocationBound = absl::Seconds(1);
// The edge's VmHWM with default flags in any scenario (docs/edge.md).
inline constexpr uint64_t kEdgeMemoryBound = (kSanitized ? 512ull : 64ull) << 20;

inline constexpr char kChrome[] =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Safari/537.36";

// Every sample of an edge's /metrics (admin port) at one moment: name with
// labels -> value. Empty if it could not be read.
std::map<std::string, double> ReadEdgeMetrics(const EdgeProcess& edge);
// metrics[sample], 0 if absent.
double MetricOr0(const std::map<std::string, double>& metrics, const std::string& sample);

// GET `path` with a browser's User-Agent, as one request line and head.
std::string GetRequest(const std::string& path, const std::string& extra_headers = "");

// What the edge did with some bytes sent on a connection of their own:
// the responses it sent, in order, and whether it then closed the
// connection. Reading stops at the close, or after `quiet` without a byte.
struct RawOutcome {
  std::vector<HttpResponse> responses;
  bool closed = false;
  std::string error;  // a response that could not be parsed
  std::vector<int> statuses() const;
};
RawOutcome SendRaw(int port, const std::string& bytes,
                   absl::Duration quiet = absl::Milliseconds(1500));

// Percentile p (0..1) of `values`; zero if empty.
absl::Duration Percentile(std::vector<absl::Duration> values, double p);

struct CanaryFigures {
  int64_t due = 0;        // requests whose time came
  int64_t redirects = 0;  // answered 302 with the canary's Location
  int64_t failures = 0;   // anything else (status, Location, connection)
  std::string first_failure;
  std::vector<absl::Duration> latencies;  // of the redirects, from when each was due
};

// Cached redirects for `code` at a fixed rate (see the file comment). The
// connections are opened by the constructor, before the scenario begins.
class Canary {
 public:
  Canary(int port, std::string code, std::string location);
  ~Canary();
  CanaryFigures Stop();

 private:
  void Run(int index, absl::Time start);

  const std::string request_;
  const std::string location_;
  std::vector<HttpConnection> connections_;
  std::vector<CanaryFigures> figures_;  // one per connection, merged by Stop
  std::vector<std::string> open_errors_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

struct Revocation {
  bool ok = false;  // made, cached, revoked, and the edge answered 410
  std::string error;
  absl::Duration revoke_rpc;  // Revoke's round trip
  absl::Duration until_410;   // from Revoke's answer to the edge's first 410
};

// Makes and revokes a link about once a second (see the file comment).
class Revoker {
 public:
  Revoker(std::unique_ptr<v1::ShortenService::Stub> stub, int edge_port);
  ~Revoker();
  std::vector<Revocation> Stop();

 private:
  void Run();
  Revocation Once(int round, HttpConnection& edge);

  std::unique_ptr<v1::ShortenService::Stub> stub_;
  const int edge_port_;
  std::vector<Revocation> revocations_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

struct MemoryFigures {
  uint64_t max_rss = 0;  // the largest VmRSS sampled
  uint64_t hwm = 0;      // VmHWM at the end: the peak since the edge started
  uint64_t start_rss = 0;
  int samples = 0;
};

// Samples a process's VmRSS every 50 ms.
class MemoryWatch {
 public:
  explicit MemoryWatch(pid_t pid);
  ~MemoryWatch();
  MemoryFigures Stop();

 private:
  const pid_t pid_;
  MemoryFigures figures_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

struct ScenarioFigures {
  std::string name;
  absl::Duration window;
  CanaryFigures canary;
  std::vector<Revocation> revocations;
  MemoryFigures memory;
};

struct HostileOptions {
  std::vector<std::string> edge_flags;  // beyond EdgeProcess's own
  // Start the default edge (false: the scenario starts its own).
  bool start_edge = true;
  // Load pg_stat_statements (one restart of the cluster) so statements can
  // be counted (StatementCalls).
  bool count_statements = false;
};

class HostileFixture {
 public:
  explicit HostileFixture(HostileOptions options = {});

  // An edge on this service, started as `options` says (key, secret and
  // service filled in here).
  std::unique_ptr<EdgeProcess> StartEdge(EdgeProcessOptions options);

  // A link made through the service and cached in `edge` by one HEAD (not a
  // click). REQUIREs success.
  v1::ShortenResponse CachedLink(const EdgeProcess& edge, const std::string& url);

  // Caches the canary's link in `edge`, then runs `hostile` on this thread
  // while the canary, the revoker and the memory watch run against `edge`,
  // for at least `min_window` in all.
  ScenarioFigures Run(const std::string& name, EdgeProcess& edge,
                      const std::function<void()>& hostile,
                      absl::Duration min_window = absl::Seconds(3));

  // The shared assertions on `figures` (see the file comment), and one line
  // with them on stderr.
  static void CheckScenario(const ScenarioFigures& figures);

  // Waits until `edge` has every click it queued acknowledged by the
  // service, CHECKs none was dropped, then CHECKs the canary's human clicks
  // (and no bot clicks) equal figures.canary.redirects, and every code of
  // `other` has exactly that many clicks (humans and bots).
  void CheckClicks(const EdgeProcess& edge, const ScenarioFigures& figures,
                   const std::map<std::string, int64_t>& other = {});

  // Sum of pg_stat_statements' calls of statements whose text contains
  // `fragment` (count_statements must be set); ResetStatements zeroes them.
  int64_t StatementCalls(const std::string& fragment);
  void ResetStatements();

  std::unique_ptr<PgCluster> cluster;
  std::unique_ptr<ServiceProcess> service;
  std::unique_ptr<v1::ShortenService::Stub> stub;
  std::unique_ptr<EdgeProcess> edge;  // unless start_edge is false
  v1::ShortenResponse canary;         // the canary's link
};

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_EDGE_HOSTILE_HOSTILE_FIXTURE_H_
