#include "tests/support/edge_process.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "tests/support/http_client.h"
#include "tests/support/orphan_reaper.h"

namespace shortener::testing {

absl::StatusOr<std::unique_ptr<EdgeProcess>> EdgeProcess::Start(EdgeProcessOptions options) {
  ReapOrphans("shortener-edge-");
  char templ[] = "/tmp/shortener-edge-XXXXXX";
  if (mkdtemp(templ) == nullptr) return absl::InternalError("mkdtemp failed");
  const std::string dir = templ;
  RecordOwner(dir);
  // A port picked free can be taken by another process before the edge
  // binds it (tests run in parallel): then pick another, a few times.
  for (int attempt = 1;; ++attempt) {
    const int port = options.port != 0 ? options.port : PickUnusedPort();
    int admin_port = options.admin_port;
    while (admin_port == 0 || admin_port == port) admin_port = PickUnusedPort();
    // A test's own --admin_listen (the last flag wins) names the port.
    for (const std::string& flag : options.extra_flags) {
      constexpr absl::string_view kAdminFlag = "--admin_listen=";
      if (!absl::StartsWith(flag, kAdminFlag)) continue;
      const size_t colon = flag.rfind(':');
      if (colon == std::string::npos || !absl::SimpleAtoi(flag.substr(colon + 1), &admin_port)) {
        admin_port = 0;
      }
    }
    std::vector<std::string> argv = options.launcher;
    argv.insert(argv.end(), {
                                BinaryPath("redirect-edge"),
                                absl::StrCat("--listen=127.0.0.1:", port),
                                absl::StrCat("--admin_listen=127.0.0.1:", admin_port),
                                absl::StrCat("--service=", options.service_target),
                                absl::StrCat("--codec_secret_file=", options.secret_file),
                                absl::StrCat("--api_key_file=", options.api_key_file),
                            });
    const std::pair<const char*, const std::string*> tls_flags[] = {
        {"--service_tls_ca=", &options.service_tls.ca_file},
        {"--service_tls_cert=", &options.service_tls.cert_file},
        {"--service_tls_key=", &options.service_tls.key_file},
        {"--service_tls_server_name=", &options.service_tls.server_name},
    };
    for (const auto& [flag, value] : tls_flags) {
      if (!value->empty()) argv.push_back(flag + *value);
    }
    argv.insert(argv.end(), options.extra_flags.begin(), options.extra_flags.end());
    std::remove((dir + "/edge.log").c_str());  // each attempt's log on its own
    absl::StatusOr<Subprocess> process = Subprocess::Spawn(argv, dir + "/edge.log");
    if (!process.ok()) return process.status();
    RecordChild(dir, process->pid());
    std::unique_ptr<EdgeProcess> edge(new EdgeProcess(*std::move(process), port, admin_port, dir));
    const absl::Time deadline = absl::Now() + options.ready_timeout;
    bool port_taken = false;
    while (absl::Now() < deadline) {
      if (!edge->process_.running()) {
        const std::string log = edge->Log();
        port_taken = log.find("--listen: ") != std::string::npos ||
                     (options.admin_port == 0 && log.find("--admin_listen: ") != std::string::npos);
        if (port_taken && options.port == 0 && attempt < 3) break;
        return absl::FailedPreconditionError(
            absl::StrCat("redirect-edge exited during start; log:\n", log));
      }
      absl::StatusOr<HttpResponse> health = HttpGet(port, "/healthz");
      if (health.ok() && health->status == 200 &&
          (!options.wait_subscribed || edge->Metric("edge_invalidation_stream_up") == 1)) {
        return edge;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    if (!port_taken) {
      return absl::DeadlineExceededError(
          absl::StrCat("redirect-edge not ready in time; log:\n", edge->Log()));
    }
    edge->dir_.clear();  // keep the temp dir for the next attempt
  }
}

EdgeProcess::~EdgeProcess() {
  process_ = Subprocess();
  if (dir_.empty()) return;
  const std::string cmd = absl::StrCat("rm -rf '", dir_, "'");
  const int rc = std::system(cmd.c_str());
  (void)rc;
}

std::string EdgeProcess::Log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double EdgeProcess::Metric(const std::string& sample) const {
  absl::StatusOr<HttpResponse> metrics = HttpGet(admin_port_, "/metrics");
  if (!metrics.ok() || metrics->status != 200) return -1;
  for (absl::string_view line : absl::StrSplit(metrics->body, '\n')) {
    if (line.size() > sample.size() && line.substr(0, sample.size()) == sample &&
        line[sample.size()] == ' ') {
      double value = 0;
      if (absl::SimpleAtod(line.substr(sample.size() + 1), &value)) return value;
    }
  }
  return -1;
}

bool WaitForMetric(const EdgeProcess& edge, const std::string& sample, double value,
                   absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (edge.Metric(sample) == value) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return false;
}

}  // namespace shortener::testing
