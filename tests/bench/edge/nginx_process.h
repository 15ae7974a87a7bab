// Debian's nginx as the reference server of the cached-redirect benchmark:
// its own prefix, config and logs in a temp dir, listening on 127.0.0.1,
// one location that answers every path with `return 302 <url>` plus the
// given headers. Stopped (SIGKILL, by PID) and its dir deleted on
// destruction.
//
// One worker runs as a single process (`master_process off`), so the PID
// started is the one that serves; with more workers there is a master and
// CpuSeconds() counts the whole tree.
#ifndef SHORTENER_TESTS_BENCH_EDGE_NGINX_PROCESS_H_
#define SHORTENER_TESTS_BENCH_EDGE_NGINX_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/support/subprocess.h"

namespace shortener::bench::edge {

struct NginxOptions {
  std::string nginx = "/usr/sbin/nginx";
  int workers = 1;
  std::string location;  // the 302's Location (no '"', '$' or '\')
  // Extra response headers (name, value), e.g. the edge's Cache-Control.
  std::vector<std::pair<std::string, std::string>> headers;
  // Prepended to the command, e.g. {"/usr/bin/taskset", "-c", "0"}.
  std::vector<std::string> launcher;
};

class NginxProcess {
 public:
  // Starts nginx and waits until it answers a 302.
  static absl::StatusOr<std::unique_ptr<NginxProcess>> Start(const NginxOptions& options);
  ~NginxProcess();

  int port() const { return port_; }
  pid_t pid() const { return process_.pid(); }
  // CPU seconds of the serving process(es) so far.
  double CpuSeconds() const;
  const std::string& config() const { return config_; }
  std::string ErrorLog() const;
  bool running() { return process_.running(); }

 private:
  NginxProcess(testing::Subprocess process, int port, std::string dir, std::string config)
      : process_(std::move(process)),
        port_(port),
        dir_(std::move(dir)),
        config_(std::move(config)) {}

  testing::Subprocess process_;
  int port_;
  std::string dir_;
  std::string config_;
};

// The config text (exposed for the report).
std::string NginxConfig(const NginxOptions& options, const std::string& dir, int port);

}  // namespace shortener::bench::edge

#endif  // SHORTENER_TESTS_BENCH_EDGE_NGINX_PROCESS_H_
