// redirect-edge as a process, end to end (Postgres, shorten-service and
// redirect-edge as real processes): start-up checks and configuration
// errors, --help, a revoked key, and shutdown (drain, --shutdown_delay).
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "lib/grpcutil/status.h"
#include "tests/edge/e2e/edge_fixture.h"

namespace shortener::testing {
namespace {

TEST_CASE("edge drains on SIGTERM: in-flight requests finish and it exits 0", "[edge/e2e][e2e]") {
  EdgeFixture f({"--resolve_timeout=10s"});
  const v1::ShortenResponse created = f.Shorten("https://example.com/in-flight");
  auto idle = HttpConnection::Connect(f.edge->port());
  REQUIRE(idle.ok());
  // Freeze the service so the miss stays in flight.
  REQUIRE(f.service->process().Freeze());
  auto busy = HttpConnection::Connect(f.edge->port());
  REQUIRE(busy.ok());
  REQUIRE(busy->Send(absl::StrCat("GET /", created.code(), " HTTP/1.1\r\nHost: x\r\n\r\n")).ok());
  absl::SleepFor(absl::Milliseconds(300));
  const absl::Time term = absl::Now();
  REQUIRE(f.edge->process().Signal(SIGTERM));
  absl::SleepFor(absl::Milliseconds(300));
  // No new connections once draining.
  CHECK_FALSE(HttpConnection::Connect(f.edge->port(), absl::Milliseconds(200)).ok());
  // The idle keep-alive connection is closed.
  CHECK(idle->WaitClosed(absl::Seconds(3)));
  REQUIRE(f.service->process().Signal(SIGCONT));
  auto r = busy->Read(false, absl::Seconds(10));
  REQUIRE(r.ok());
  CHECK(r->status == 302);
  CHECK(r->Header("location") == created.link().long_url());
  CHECK(f.edge->process().Wait(absl::Seconds(10)) == 0);
  CHECK(absl::Now() - term < absl::Seconds(10));
}

// Whether `done` holds within `limit` (polled every 10 ms).
bool Within(absl::Duration limit, const std::function<bool()>& done) {
  const absl::Time give_up = absl::Now() + limit;
  while (!done()) {
    if (absl::Now() > give_up) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

TEST_CASE("with --shutdown_delay, SIGTERM first makes /readyz 503 while redirects go on",
          "[edge/e2e][e2e]") {
  EdgeFixture f({"--shutdown_delay=3s"});
  const v1::ShortenResponse created = f.Shorten("https://example.com/lame-duck");
  REQUIRE(f.Get("/readyz").status == 200);
  const absl::Time term = absl::Now();
  REQUIRE(f.edge->process().Signal(SIGTERM));
  // Not ready on both listeners, while new connections are still served.
  CHECK(Within(absl::Seconds(2), [&f] { return f.Get("/readyz").status == 503; }));
  auto admin = HttpGet(f.edge->admin_port(), "/readyz");
  REQUIRE(admin.ok());
  CHECK(admin->status == 503);
  const HttpResponse redirect = f.Get("/" + created.code());
  CHECK(redirect.status == 302);
  CHECK(redirect.Header("location") == "https://example.com/lame-duck");
  CHECK(absl::Now() - term < absl::Seconds(3));
  // Then the drain, as without the delay.
  CHECK(f.edge->process().Wait(absl::Seconds(15)) == 0);
  CHECK(absl::Now() - term >= absl::Seconds(3));
  CHECK_THAT(f.edge->Log(), Catch::Contains("not ready, serving on for 3s before draining"));
}

TEST_CASE("a second SIGTERM during --shutdown_delay drains at once", "[edge/e2e][e2e]") {
  EdgeFixture f({"--shutdown_delay=60s"});
  const absl::Time term = absl::Now();
  REQUIRE(f.edge->process().Signal(SIGTERM));
  REQUIRE(Within(absl::Seconds(10), [&f] {
    return absl::StrContains(f.edge->Log(), "not ready, serving on for 1m before draining");
  }));
  REQUIRE(f.edge->process().Signal(SIGTERM));
  CHECK(f.edge->process().Wait(absl::Seconds(15)) == 0);
  CHECK(absl::Now() - term < absl::Seconds(20));
  CHECK_THAT(f.edge->Log(), Catch::Contains("second signal: draining now"));
}

// Runs redirect-edge with `flags`; returns its exit code and output.
std::pair<int, std::string> RunEdgeExpectingExit(const std::vector<std::string>& flags) {
  char dir_template[] = "/tmp/shortener-edge-flags-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string log = std::string(dir_template) + "/out.log";
  // Never the default admin port: another edge may hold it (flags may
  // override this, the last one wins).
  std::vector<std::string> argv = {BinaryPath("redirect-edge"), "--admin_listen=127.0.0.1:0"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  auto process = Subprocess::Spawn(argv, log);
  REQUIRE(process.ok());
  const std::optional<int> rc = process->Wait(absl::Seconds(10));
  REQUIRE(rc.has_value());
  std::ifstream in(log);
  std::stringstream out;
  out << in.rdbuf();
  std::filesystem::remove_all(dir_template);
  return {*rc, out.str()};
}

TEST_CASE("an edge whose key is revoked stops resolving, is not ready, and says why",
          "[edge/e2e][e2e]") {
  EdgeFixture f;
  const std::string cached = f.Shorten("https://example.com/cached-before").code();
  std::vector<std::string> cold;  // uncached codes, one per attempt below
  for (int i = 0; i < 30; ++i) {
    cold.push_back(f.Shorten(absl::StrCat("https://example.com/cold-after/", i)).code());
  }
  REQUIRE(f.Get("/" + cached).status == 302);
  REQUIRE(f.Get("/readyz").status == 200);
  v1::ListApiKeysResponse keys;
  REQUIRE(f.stub->ListApiKeys(EdgeFixture::Ctx().get(), v1::ListApiKeysRequest(), &keys).ok());
  int64_t edge_key = 0;
  for (const v1::ApiKey& k : keys.api_keys()) {
    if (k.name() == "edge") edge_key = k.id();
  }
  REQUIRE(edge_key != 0);
  v1::RevokeApiKeyRequest revoke;
  revoke.set_id(edge_key);
  v1::ApiKey revoked;
  REQUIRE(f.stub->RevokeApiKey(EdgeFixture::Ctx().get(), revoke, &revoked).ok());
  // The service drops the key within a second: a miss then fails (503, as
  // for any trouble upstream), and the edge reports itself not ready.
  HttpResponse miss;
  for (const std::string& code : cold) {
    // Until the revocation lands, misses resolve (and get cached): a fresh
    // code each time.
    miss = f.Get("/" + code);
    if (miss.status == 503) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  CHECK(miss.status == 503);
  CHECK(miss.Has("retry-after"));
  CHECK(f.Get("/readyz").status == 503);
  // What was cached before still redirects: the public is not punished for
  // a key problem.
  CHECK(f.Get("/" + cached).status == 302);
  CHECK_THAT(f.edge->Log(), Catch::Contains("refuses this edge's key"));
  CHECK_THAT(f.edge->Log(), Catch::Contains("api key revoked"));
}

TEST_CASE("edge --help lists every flag with its default", "[edge/e2e][e2e]") {
  const auto [rc, out] = RunEdgeExpectingExit({"--help"});
  CHECK(rc == 1);  // abseil's --help exits 1
  for (const char* flag : {"--listen",
                           "--admin_listen",
                           "--service",
                           "--threads",
                           "--codec_secret_file",
                           "--api_key_file",
                           "--allowed_schemes",
                           "--min_code_length",
                           "--cache_entries",
                           "--cache_bytes",
                           "--cache_ttl",
                           "--negative_cache_ttl",
                           "--stale_grace",
                           "--trusted_proxies",
                           "--resolve_timeout",
                           "--resolve_batch",
                           "--resolve_in_flight",
                           "--shutdown_grace",
                           "--max_request_line",
                           "--idle_timeout",
                           "--access_log",
                           "--service_tls_ca",
                           "--service_tls_cert",
                           "--service_tls_key",
                           "--service_tls_server_name"}) {
    INFO(flag);
    CHECK(absl::StrContains(out, absl::StrCat(flag, " (")));
  }
  CHECK(absl::StrContains(out, "default: 1000000"));
}

TEST_CASE("edge stops at a secret file others can write and warns about one they can read",
          "[edge/e2e][e2e]") {
  EdgeFixture f;
  char templ[] = "/tmp/shortener-edge-secrets-XXXXXX";
  REQUIRE(::mkdtemp(templ) != nullptr);
  const std::string dir = templ;
  // Copies of the real key and secret, with the mode under test.
  const auto copy = [&](const std::string& from, const std::string& name, mode_t mode) {
    const std::string to = dir + "/" + name;
    std::filesystem::copy_file(from, to);
    REQUIRE(::chmod(to.c_str(), mode) == 0);
    return to;
  };
  const std::string service = absl::StrCat("--service=", f.service->target());
  const std::string key_file = *f.service->EdgeKeyFile();
  const std::string secret_file = f.service->secret_file();
  const std::string open_key = copy(key_file, "open.key", 0666);
  const std::string group_secret = copy(secret_file, "group.secret", 0620);
  const auto [rc, out] = RunEdgeExpectingExit(
      {service, "--api_key_file=" + open_key, "--codec_secret_file=" + secret_file});
  CHECK(rc == 1);
  CHECK_THAT(out, Catch::Contains(absl::StrCat("--api_key_file: ", open_key,
                                               " is writable by other users (mode 0666)")));
  const auto [rc2, out2] = RunEdgeExpectingExit(
      {service, "--api_key_file=" + key_file, "--codec_secret_file=" + group_secret});
  CHECK(rc2 == 1);
  CHECK_THAT(out2, Catch::Contains(absl::StrCat("--codec_secret_file: codec secret: ", group_secret,
                                                " is writable by other users (mode 0620)")));
  const auto [rc3, out3] = RunEdgeExpectingExit(
      {service, "--api_key_file=" + dir, "--codec_secret_file=" + secret_file});
  CHECK(rc3 == 1);
  CHECK_THAT(out3, Catch::Contains(absl::StrCat("--api_key_file: ", dir,
                                                " is not a regular file (a directory)")));
  // Readable by others: the edge starts, and says so.
  const std::string readable_key = copy(key_file, "readable.key", 0644);
  auto edge = f.StartEdge(f.service->target(), {"--api_key_file=" + readable_key});
  CHECK_THAT(edge->Log(), Catch::Contains(absl::StrCat("--api_key_file: ", readable_key,
                                                       " is readable by other users (mode 0644)")));
  CHECK(edge->Metric("edge_service_ready") == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("edge refuses bad configuration with a message naming the flag", "[edge/e2e][e2e]") {
  EdgeFixture f;
  const std::string secret = absl::StrCat("--codec_secret_file=", f.service->secret_file());
  const std::string service = absl::StrCat("--service=", f.service->target());
  auto key_file = f.service->EdgeKeyFile();
  REQUIRE(key_file.ok());
  const std::string key = absl::StrCat("--api_key_file=", *key_file);
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  const int busy_port = f.edge->port();
  const std::vector<Case> cases = {
      {{service, key}, "--codec_secret_file is required"},
      {{service, key, "--codec_secret_file=/nonexistent/secret"}, "--codec_secret_file"},
      {{service, secret}, "--api_key_file is required"},
      {{service, secret, "--api_key_file=/nonexistent/key"},
       "--api_key_file: cannot read /nonexistent/key"},
      {{service, secret, "--api_key_file=/dev/null"},
       "--api_key_file: /dev/null is not a regular file (a device, FIFO or socket)"},
      {{service, key, secret, "--listen=127.0.0.1"}, "--listen=\"127.0.0.1\": no port"},
      {{service, key, secret, "--listen=127.0.0.1:99999"}, "port must be 0..65535"},
      {{service, key, secret, "--listen=not-an-ip:8080"}, "--listen"},
      {{service, key, secret, absl::StrCat("--listen=127.0.0.1:", busy_port)},
       absl::StrCat("127.0.0.1:", busy_port)},
      {{service, key, secret, "--listen=127.0.0.1:18080", "--admin_listen=127.0.0.1:18080"},
       "--admin_listen=\"127.0.0.1:18080\": must not use the --listen port 18080"},
      {{service, key, secret, "--admin_listen=127.0.0.1"}, "--admin_listen=\"127.0.0.1\": no port"},
      {{service, key, secret, absl::StrCat("--admin_listen=127.0.0.1:", busy_port)},
       absl::StrCat("--admin_listen: ")},
      {{service, key, secret, "--trusted_proxies=10.0.0.0/33"}, "trusted proxy \"10.0.0.0/33\""},
      {{service, key, secret, "--cache_ttl=0s"}, "--cache_ttl must be > 0"},
      {{service, key, secret, "--threads=-1"}, "--threads"},
      {{service, key, secret, "--resolve_batch=5000"}, "--resolve_batch must be 1..1000"},
      {{service, key, secret, "--resolve_queue=0"}, "--resolve_queue must be >= 1"},
      {{service, key, secret, "--miss_deadline=-1s"}, "--miss_deadline must be >= 0"},
      {{service, key, secret, "--shutdown_delay=-1s"},
       "--shutdown_delay and --shutdown_grace must be >= 0"},
      {{service, key, secret, "--max_alias_misses=0"}, "--max_alias_misses must be >= 1"},
      {{service, key, secret, "--negative_cache_share=0.9"},
       "--negative_cache_share must be 0..0.5"},
      {{service, key, secret, "--min_code_length=11"}, "--min_code_length"},
      {{service, key, secret, "--service_tls_key=/k.pem"},
       "--service_tls_key needs --service_tls_cert"},
      {{service, key, secret, "--service_tls_cert=/c.pem"},
       "--service_tls_cert needs --service_tls_key"},
      {{service, key, secret, "--service_tls_server_name=shorten.internal"},
       "--service_tls_server_name needs --service_tls_ca"},
      {{service, key, secret, "--service_tls_ca=/nonexistent/ca.pem"},
       "--service_tls_ca: no such file /nonexistent/ca.pem"},
  };
  for (const Case& c : cases) {
    const auto [rc, out] = RunEdgeExpectingExit(c.flags);
    INFO(absl::StrJoin(c.flags, " ") << "\n" << out);
    CHECK(rc == 1);
    CHECK(absl::StrContains(out, c.message));
  }
}

}  // namespace
}  // namespace shortener::testing
