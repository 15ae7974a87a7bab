#include "tests/bench/edge/nginx_process.h"

#include <signal.h>
#include <stdlib.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/bench/edge/proc_stats.h"
#include "tests/support/http_client.h"
#include "tests/support/orphan_reaper.h"

namespace shortener::bench::edge {

std::string NginxConfig(const NginxOptions& o, const std::string& dir, int port) {
  std::string headers;
  for (const auto& [name, value] : o.headers) {
    absl::StrAppend(&headers, "      add_header ", name, " \"", value, "\" always;\n");
  }
  return absl::StrCat(
      "daemon off;\n", o.workers == 1 ? "master_process off;\n" : "master_process on;\n",
      "worker_processes ", o.workers, ";\n", "pid ", dir, "/nginx.pid;\n", "error_log ", dir,
      "/error.log warn;\n", "events {\n  worker_connections 4096;\n}\n", "http {\n",
      "  access_log off;\n", "  server_tokens off;\n", "  keepalive_requests 10000000;\n",
      "  keepalive_timeout 300s;\n", "  client_body_temp_path ", dir, "/client_body;\n",
      "  proxy_temp_path ", dir, "/proxy;\n", "  fastcgi_temp_path ", dir, "/fastcgi;\n",
      "  uwsgi_temp_path ", dir, "/uwsgi;\n", "  scgi_temp_path ", dir, "/scgi;\n", "  server {\n",
      // reuseport: with several workers each gets its own accept queue.
      "    listen 127.0.0.1:", port, o.workers > 1 ? " reuseport" : "", ";\n", "    location / {\n",
      headers, "      return 302 \"", o.location, "\";\n", "    }\n", "  }\n", "}\n");
}

absl::StatusOr<std::unique_ptr<NginxProcess>> NginxProcess::Start(const NginxOptions& o) {
  testing::ReapOrphans("edge-bench-nginx-");
  char templ[] = "/tmp/edge-bench-nginx-XXXXXX";
  if (mkdtemp(templ) == nullptr) return absl::InternalError("mkdtemp failed");
  const std::string dir = templ;
  testing::RecordOwner(dir);
  const int port = testing::PickUnusedPort();
  const std::string config = NginxConfig(o, dir, port);
  {
    std::ofstream out(dir + "/nginx.conf");
    out << config;
    if (!out) return absl::InternalError("cannot write nginx.conf");
  }
  std::vector<std::string> argv = o.launcher;
  argv.insert(argv.end(),
              {o.nginx, "-p", dir + "/", "-e", dir + "/error.log", "-c", dir + "/nginx.conf"});
  absl::StatusOr<testing::Subprocess> process =
      testing::Subprocess::Spawn(argv, dir + "/stdout.log");
  if (!process.ok()) return process.status();
  testing::RecordChild(dir, process->pid());
  std::unique_ptr<NginxProcess> nginx(new NginxProcess(*std::move(process), port, dir, config));
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    if (!nginx->process_.running()) {
      return absl::FailedPreconditionError(
          absl::StrCat("nginx exited during start; error log:\n", nginx->ErrorLog()));
    }
    absl::StatusOr<testing::HttpResponse> r = testing::HttpGet(port, "/probe");
    if (r.ok() && r->status == 302) return nginx;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("nginx not ready in time; error log:\n", nginx->ErrorLog()));
}

NginxProcess::~NginxProcess() {
  // With a master, SIGKILL to it alone would orphan the workers: ask it to
  // stop them (SIGTERM: fast shutdown) first.
  if (process_.running()) {
    process_.Signal(SIGTERM);
    process_.Wait(absl::Seconds(5));
  }
  process_ = testing::Subprocess();
  const std::string cmd = absl::StrCat("rm -rf '", dir_, "'");
  const int rc = std::system(cmd.c_str());
  (void)rc;
}

double NginxProcess::CpuSeconds() const { return ProcessTreeCpuSeconds(process_.pid()); }

std::string NginxProcess::ErrorLog() const {
  std::ifstream in(dir_ + "/error.log");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace shortener::bench::edge
