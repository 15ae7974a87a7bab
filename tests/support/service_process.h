// Runs the real shorten-service binary against a PgCluster for end-to-end
// tests and benchmarks: picks a free port, writes a code secret, starts the
// process (over TLS if asked) with a bootstrap admin key, waits until it
// accepts gRPC connections. Stopped (SIGKILL if still running) on
// destruction. Stubs made here carry an API key (admin unless another is
// given).
#ifndef SHORTENER_TESTS_SUPPORT_SERVICE_PROCESS_H_
#define SHORTENER_TESTS_SUPPORT_SERVICE_PROCESS_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/grpcutil/tls.h"
#include "shortener/v1/shortener.grpc.pb.h"
#include "tests/support/subprocess.h"

namespace shortener::testing {

struct ServiceProcessOptions {
  std::string conninfo;     // required
  std::string secret_file;  // empty: a fresh one in a temp dir
  // --bootstrap_admin_key_file; empty: admin.key in the temp dir (created
  // by the service).
  std::string admin_key_file;
  std::string base_url = "https://sho.rt/";
  int port = 0;                    // 0: pick a free one
  grpcutil::ServerTlsOptions tls;  // --tls_*; default plaintext
  // How the readiness probe connects: must fit `tls` (a CA, and a client
  // certificate when tls.client_ca_file is set).
  grpcutil::ClientTlsOptions client_tls;
  std::vector<std::string> extra_flags;
  absl::Duration ready_timeout = absl::Seconds(30);
  // The shorten-service to run; empty: this build tree's (benchmarks run
  // an older build side by side).
  std::string binary;
};

class ServiceProcess {
 public:
  // Starts the service and waits until its port accepts gRPC connections.
  // FAILED_PRECONDITION with the tail of its log if it exits first.
  static absl::StatusOr<std::unique_ptr<ServiceProcess>> Start(ServiceProcessOptions options);
  // Kills the process if it still runs and deletes its temp dir.
  ~ServiceProcess();

  std::string target() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  // The admin listener's port (/metrics, /healthz, /readyz), from the log
  // line that names it; -1 when there is none (--admin_listen= in
  // extra_flags).
  int admin_port() const;
  const std::string& log_path() const { return log_path_; }
  const std::string& secret_file() const { return options_.secret_file; }
  const std::string& admin_key_file() const { return options_.admin_key_file; }
  // The bootstrap admin key (read from its file once the service started).
  const std::string& admin_key() const { return admin_key_; }

  // A stub whose calls carry `api_key` (default: the admin key; "" for
  // none), over options.client_tls.
  std::unique_ptr<v1::ShortenService::Stub> NewStub() const { return NewStub(admin_key_); }
  std::unique_ptr<v1::ShortenService::Stub> NewStub(const std::string& api_key,
                                                    const grpc::ChannelArguments& args = {}) const;
  // Creates a key through the admin RPC and returns it.
  absl::StatusOr<std::string> CreateKey(const std::string& name, const std::string& scopes,
                                        const std::string& tenant = "");
  absl::StatusOr<std::string> CreateKey(const v1::CreateApiKeyRequest& request);
  // A file holding an infrastructure key with scopes
  // resolve,record_clicks,watch_invalidations for edges (created on first
  // use, then the same file).
  absl::StatusOr<std::string> EdgeKeyFile();
  Subprocess& process() { return process_; }
  // The log's content (for assertions on messages).
  std::string Log() const;
  // Starts the same configuration again (after a kill).
  absl::Status Restart();

 private:
  ServiceProcess(ServiceProcessOptions options, Subprocess process, int port, std::string dir)
      : options_(std::move(options)),
        process_(std::move(process)),
        port_(port),
        dir_(dir),
        log_path_(dir + "/service.log") {}
  static absl::StatusOr<Subprocess> Launch(const ServiceProcessOptions& options, int port,
                                           const std::string& log_path);

  ServiceProcessOptions options_;
  Subprocess process_;
  int port_;
  std::string dir_;  // temp dir with the log (and the secret unless given)
  std::string admin_key_;
  std::string edge_key_file_;
  std::string log_path_;
};

// Waits until a gRPC server at `target` accepts a connection (made as `tls`
// says: the handshake must succeed too).
bool WaitForGrpcServer(const std::string& target, absl::Duration timeout,
                       const grpcutil::ClientTlsOptions& tls = {});

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SUPPORT_SERVICE_PROCESS_H_
