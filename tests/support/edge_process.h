// Runs the real redirect-edge binary for end-to-end tests and benchmarks:
// picks free ports (the public one and the admin listener's, where /metrics
// is), starts the process against a shorten-service, waits until /healthz
// answers. Stopped (SIGKILL if still running) on destruction.
#ifndef SHORTENER_TESTS_SUPPORT_EDGE_PROCESS_H_
#define SHORTENER_TESTS_SUPPORT_EDGE_PROCESS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/grpcutil/tls.h"
#include "tests/support/subprocess.h"

namespace shortener::testing {

struct EdgeProcessOptions {
  std::string service_target;              // required: HOST:PORT of the shorten-service
  std::string secret_file;                 // required: the service's codec secret
  std::string api_key_file;                // required: --api_key_file (ServiceProcess::EdgeKeyFile)
  grpcutil::ClientTlsOptions service_tls;  // --service_tls_*; default plaintext
  int port = 0;                            // 0: pick a free one
  // --admin_listen's port (/metrics, /healthz, /readyz); 0: pick a free one.
  // An --admin_listen in extra_flags wins (then Metric() reads this port).
  int admin_port = 0;
  std::vector<std::string> extra_flags;
  // Prepended to the command line, e.g. {"/usr/bin/taskset", "-c", "0"}
  // (the first element is an absolute path: no PATH look-up).
  std::vector<std::string> launcher;
  // Wait for the invalidation stream to be subscribed (edge_invalidation_stream_up 1).
  bool wait_subscribed = true;
  absl::Duration ready_timeout = absl::Seconds(20);
};

class EdgeProcess {
 public:
  static absl::StatusOr<std::unique_ptr<EdgeProcess>> Start(EdgeProcessOptions options);
  ~EdgeProcess();

  int port() const { return port_; }
  // The admin listener's port: /metrics (not on port()), /healthz, /readyz.
  int admin_port() const { return admin_port_; }
  Subprocess& process() { return process_; }
  const std::string& log_path() const { return log_path_; }
  std::string Log() const;
  // The value of one unlabelled (or exactly labelled, e.g.
  // `edge_http_responses_total{code="302"}`) sample from /metrics on the
  // admin port; -1 if absent.
  double Metric(const std::string& sample) const;

 private:
  EdgeProcess(Subprocess process, int port, int admin_port, std::string dir)
      : process_(std::move(process)),
        port_(port),
        admin_port_(admin_port),
        dir_(dir),
        log_path_(dir + "/edge.log") {}

  Subprocess process_;
  int port_;
  int admin_port_;
  std::string dir_;
  std::string log_path_;
};

// Waits until `sample` in the edge's /metrics equals `value`.
bool WaitForMetric(const EdgeProcess& edge, const std::string& sample, double value,
                   absl::Duration timeout);

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SUPPORT_EDGE_PROCESS_H_
