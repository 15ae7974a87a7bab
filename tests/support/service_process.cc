#include "tests/support/service_process.h"

#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "lib/common/private_file.h"
#include "lib/grpcutil/api_key_channel.h"
#include "tests/support/orphan_reaper.h"

namespace shortener::testing {

bool WaitForGrpcServer(const std::string& target, absl::Duration timeout,
                       const grpcutil::ClientTlsOptions& tls) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      grpcutil::CreateClientChannel(target, tls);
  if (!channel.ok()) return false;
  return (*channel)->WaitForConnected(std::chrono::system_clock::now() +
                                      absl::ToChronoMilliseconds(timeout));
}

absl::StatusOr<Subprocess> ServiceProcess::Launch(const ServiceProcessOptions& options, int port,
                                                  const std::string& log_path) {
  std::vector<std::string> argv = {
      options.binary.empty() ? BinaryPath("shorten-service") : options.binary,
      absl::StrCat("--listen=127.0.0.1:", port),
      absl::StrCat("--postgres=", options.conninfo),
      absl::StrCat("--base_url=", options.base_url),
      absl::StrCat("--codec_secret_file=", options.secret_file),
      "--create_codec_secret",
      absl::StrCat("--bootstrap_admin_key_file=", options.admin_key_file),
      // Any free port (admin_port() reads it from the log): tests run in
      // parallel, and the default port would be taken by the first.
      "--admin_listen=127.0.0.1:0",
  };
  const std::pair<const char*, const std::string*> tls_flags[] = {
      {"--tls_cert=", &options.tls.cert_file},
      {"--tls_key=", &options.tls.key_file},
      {"--tls_client_ca=", &options.tls.client_ca_file},
  };
  for (const auto& [flag, value] : tls_flags) {
    if (!value->empty()) argv.push_back(flag + *value);
  }
  argv.insert(argv.end(), options.extra_flags.begin(), options.extra_flags.end());
  return Subprocess::Spawn(argv, log_path);
}

absl::StatusOr<std::unique_ptr<ServiceProcess>> ServiceProcess::Start(
    ServiceProcessOptions options) {
  ReapOrphans("shortener-svc-");
  char templ[] = "/tmp/shortener-svc-XXXXXX";
  if (mkdtemp(templ) == nullptr) return absl::InternalError("mkdtemp failed");
  std::string dir = templ;
  RecordOwner(dir);
  if (options.secret_file.empty()) options.secret_file = dir + "/codec.secret";
  if (options.admin_key_file.empty()) options.admin_key_file = dir + "/admin.key";
  // A port picked free can be taken by another process before the service
  // binds it (tests run in parallel): then pick another, a few times.
  for (int attempt = 1;; ++attempt) {
    int port = options.port != 0 ? options.port : PickUnusedPort();
    const std::string log_path = dir + "/service.log";
    std::remove(log_path.c_str());  // each attempt's log on its own
    absl::StatusOr<Subprocess> process = Launch(options, port, log_path);
    if (!process.ok()) return process.status();
    RecordChild(dir, process->pid());
    std::unique_ptr<ServiceProcess> service(
        new ServiceProcess(options, *std::move(process), port, dir));
    absl::Time deadline = absl::Now() + service->options_.ready_timeout;
    bool port_taken = false;
    while (absl::Now() < deadline) {
      if (!service->process_.running()) {
        const std::string log = service->Log();
        port_taken = log.find("--listen: cannot listen on") != std::string::npos;
        if (port_taken && options.port == 0 && attempt < 3) break;
        return absl::FailedPreconditionError(
            absl::StrCat("shorten-service exited during start; log:\n", log));
      }
      if (WaitForGrpcServer(service->target(), absl::Milliseconds(200), options.client_tls)) {
        absl::StatusOr<std::string> key =
            grpcutil::ReadApiKeyFile("bootstrap_admin_key_file", service->options_.admin_key_file);
        if (!key.ok()) return key.status();
        service->admin_key_ = *std::move(key);
        return service;
      }
    }
    if (!port_taken) {
      return absl::DeadlineExceededError(
          absl::StrCat("shorten-service not ready in time; log:\n", service->Log()));
    }
    // Keep the temp dir (and its secret) for the next attempt.
    service->dir_.clear();
  }
}

int ServiceProcess::admin_port() const {
  const std::string kLine = "admin listener (/metrics, /healthz, /readyz) on ";
  const std::string log = Log();
  const size_t at = log.rfind(kLine);  // the latest start's
  if (at == std::string::npos) return -1;
  const size_t end = log.find('\n', at);
  const std::string address = log.substr(at + kLine.size(), end - at - kLine.size());
  int port = -1;
  if (!absl::SimpleAtoi(address.substr(address.rfind(':') + 1), &port)) return -1;
  return port;
}

ServiceProcess::~ServiceProcess() {
  process_ = Subprocess();  // kills and reaps a running child
  if (dir_.empty()) return;
  std::string cmd = absl::StrCat("rm -rf '", dir_, "'");
  int rc = std::system(cmd.c_str());
  (void)rc;
}

absl::Status ServiceProcess::Restart() {
  if (process_.running()) return absl::OkStatus();
  absl::StatusOr<Subprocess> process = Launch(options_, port_, log_path_);
  if (!process.ok()) return process.status();
  process_ = *std::move(process);
  RecordChild(dir_, process_.pid());
  absl::Time deadline = absl::Now() + options_.ready_timeout;
  while (absl::Now() < deadline) {
    if (!process_.running()) {
      return absl::FailedPreconditionError(
          absl::StrCat("shorten-service exited during restart; log:\n", Log()));
    }
    if (WaitForGrpcServer(target(), absl::Milliseconds(200), options_.client_tls)) {
      return absl::OkStatus();
    }
  }
  return absl::DeadlineExceededError("shorten-service not ready in time after restart");
}

std::unique_ptr<v1::ShortenService::Stub> ServiceProcess::NewStub(
    const std::string& api_key, const grpc::ChannelArguments& args) const {
  // Over the TLS the readiness probe uses (plaintext unless asked); a bad
  // TLS file was already caught by that probe, so value() cannot throw here
  // unless the files changed since.
  return v1::ShortenService::NewStub(
      grpcutil::CreateClientChannel(target(), options_.client_tls, args, api_key).value());
}

absl::StatusOr<std::string> ServiceProcess::CreateKey(const v1::CreateApiKeyRequest& request) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::CreateApiKeyResponse response;
  grpc::Status status = NewStub()->CreateApiKey(&ctx, request, &response);
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        absl::StrCat("CreateApiKey: ", status.error_message()));
  }
  return response.key();
}

absl::StatusOr<std::string> ServiceProcess::CreateKey(const std::string& name,
                                                      const std::string& scopes,
                                                      const std::string& tenant) {
  v1::CreateApiKeyRequest request;
  request.set_name(name);
  request.set_tenant(tenant);
  for (absl::string_view scope : absl::StrSplit(scopes, ',', absl::SkipEmpty())) {
    request.add_scopes(std::string(scope));
  }
  return CreateKey(request);
}

absl::StatusOr<std::string> ServiceProcess::EdgeKeyFile() {
  if (!edge_key_file_.empty()) return edge_key_file_;
  v1::CreateApiKeyRequest request;
  request.set_name("edge");
  request.set_infrastructure(true);
  for (const char* scope : {"resolve", "record_clicks", "watch_invalidations"}) {
    request.add_scopes(scope);
  }
  absl::StatusOr<std::string> key = CreateKey(request);
  if (!key.ok()) return key.status();
  const std::string path = dir_ + "/edge.key";
  absl::Status written = CreatePrivateFile(path, *key + "\n", "edge key");
  if (!written.ok()) return written;
  edge_key_file_ = path;
  return edge_key_file_;
}

std::string ServiceProcess::Log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace shortener::testing
