// shorten-service and redirect-edge over mutual TLS, as real processes on a
// private cluster, with certificates the openssl tool makes for the test:
// what a client with a certificate of the right CA can do (shorten through
// gRPC and shortenctl, redirect through the edge), and that an edge or a
// client without one, with one from another CA, or in plaintext gets nothing.
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "shortener/v1/shortener.grpc.pb.h"
#include "tests/support/edge_process.h"
#include "tests/support/http_client.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/service_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_certs.h"

namespace shortener::testing {
namespace {

// A cluster and a service that requires client certificates of the test CA.
struct MutualTlsFixture {
  MutualTlsFixture() {
    auto made = TestCerts::Create();
    if (!made.ok()) FAIL(made.status().ToString());
    certs = *std::move(made);
    auto c = PgCluster::Start();
    if (!c.ok()) FAIL(c.status().ToString());
    cluster = *std::move(c);
    ServiceProcessOptions options;
    options.conninfo = cluster->ConnInfo();
    options.tls = certs->ServerMutualTls();
    options.client_tls = certs->ClientMutualTls();
    auto s = ServiceProcess::Start(options);
    if (!s.ok()) FAIL(s.status().ToString());
    service = *std::move(s);
  }

  std::unique_ptr<EdgeProcess> StartEdge(const grpcutil::ClientTlsOptions& tls,
                                         bool wait_subscribed) {
    EdgeProcessOptions options;
    options.service_target = service->target();
    options.secret_file = service->secret_file();
    options.service_tls = tls;
    auto key_file = service->EdgeKeyFile();
    if (!key_file.ok()) FAIL(key_file.status().ToString());
    options.api_key_file = *key_file;
    options.wait_subscribed = wait_subscribed;
    auto e = EdgeProcess::Start(options);
    if (!e.ok()) FAIL(e.status().ToString());
    return *std::move(e);
  }

  std::unique_ptr<TestCerts> certs;
  std::unique_ptr<PgCluster> cluster;
  std::unique_ptr<ServiceProcess> service;
};

// One Shorten through a channel made with `tls`, with the service's admin
// key.
grpc::Status ShortenWith(const ServiceProcess& service, const grpcutil::ClientTlsOptions& tls,
                         const std::string& url, v1::ShortenResponse* response) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      grpcutil::CreateClientChannel(service.target(), tls, {}, service.admin_key());
  REQUIRE(channel.ok());
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  v1::ShortenRequest request;
  request.set_long_url(url);
  return v1::ShortenService::NewStub(*channel)->Shorten(&context, request, response);
}

struct CtlOutcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs shortenctl with `args` (bounded: fails the test after 20 s).
CtlOutcome RunShortenctl(const std::string& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {BinaryPath("shortenctl")};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string log = dir + "/shortenctl.out";
  std::remove(log.c_str());
  absl::StatusOr<Subprocess> child = Subprocess::Spawn(argv, log);
  REQUIRE(child.ok());
  const std::optional<int> code = child->Wait(absl::Seconds(20));
  REQUIRE(code.has_value());
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  return {*code, text.str()};
}

// shortenctl's flags for `tls`, with the service's admin key.
std::vector<std::string> CtlFlags(const ServiceProcess& service,
                                  const grpcutil::ClientTlsOptions& tls) {
  std::vector<std::string> flags = {"--service=" + service.target(), "--timeout=5s",
                                    "--api_key_file=" + service.admin_key_file()};
  if (!tls.ca_file.empty()) flags.push_back("--service_tls_ca=" + tls.ca_file);
  if (!tls.cert_file.empty()) flags.push_back("--service_tls_cert=" + tls.cert_file);
  if (!tls.key_file.empty()) flags.push_back("--service_tls_key=" + tls.key_file);
  return flags;
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST_CASE("over mutual TLS links made by gRPC and shortenctl redirect through the edge",
          "[edge/e2e][tls][pg][e2e]") {
  MutualTlsFixture f;
  CHECK(absl::StrContains(f.service->Log(), "over mTLS (certificate " + f.certs->server_cert() +
                                                ", client certificates signed by " +
                                                f.certs->ca_cert() + ")"));
  std::unique_ptr<EdgeProcess> edge =
      f.StartEdge(f.certs->ClientMutualTls(), /*wait_subscribed=*/true);
  CHECK(absl::StrContains(edge->Log(), "over mTLS"));
  absl::StatusOr<HttpResponse> ready = HttpGet(edge->port(), "/readyz");
  REQUIRE(ready.ok());
  CHECK(ready->status == 200);

  v1::ShortenResponse created;
  const grpc::Status status = ShortenWith(*f.service, f.certs->ClientMutualTls(),
                                          "https://example.com/over-mtls", &created);
  INFO(status.error_message());
  REQUIRE(status.ok());
  absl::StatusOr<HttpResponse> redirect = HttpGet(edge->port(), "/" + created.code());
  REQUIRE(redirect.ok());
  CHECK(redirect->status == 302);
  CHECK(redirect->Header("location") == "https://example.com/over-mtls");

  // shortenctl: shorten, get, then the edge redirects its code too.
  const std::vector<std::string> flags = CtlFlags(*f.service, f.certs->ClientMutualTls());
  const CtlOutcome shortened = RunShortenctl(
      f.certs->dir(), Concat(flags, {"--json", "shorten", "https://example.com/from-ctl"}));
  INFO(shortened.output);
  REQUIRE(shortened.exit_code == 0);
  // {"code":"...",...}: the code is the first field.
  const std::string after_code = shortened.output.substr(shortened.output.find("\"code\":\"") + 8);
  const std::string code = after_code.substr(0, after_code.find('"'));
  REQUIRE_FALSE(code.empty());
  const CtlOutcome got = RunShortenctl(f.certs->dir(), Concat(flags, {"get", code}));
  CHECK(got.exit_code == 0);
  CHECK(absl::StrContains(got.output, "https://example.com/from-ctl"));
  redirect = HttpGet(edge->port(), "/" + code);
  REQUIRE(redirect.ok());
  CHECK(redirect->status == 302);
  CHECK(redirect->Header("location") == "https://example.com/from-ctl");
}

TEST_CASE("a mutual TLS service refuses edges and clients without a certificate of its CA",
          "[edge/e2e][tls][pg][e2e]") {
  MutualTlsFixture f;
  v1::ShortenResponse created;
  REQUIRE(ShortenWith(*f.service, f.certs->ClientMutualTls(), "https://example.com/cold", &created)
              .ok());

  SECTION("gRPC clients") {
    v1::ShortenResponse ignored;
    CHECK(ShortenWith(*f.service, f.certs->ClientWithoutCert(), "https://example.com/no-cert",
                      &ignored)
              .error_code() == grpc::StatusCode::UNAVAILABLE);
    CHECK(ShortenWith(*f.service, f.certs->ClientFromOtherCa(), "https://example.com/other-ca",
                      &ignored)
              .error_code() == grpc::StatusCode::UNAVAILABLE);
    CHECK(ShortenWith(*f.service, grpcutil::ClientTlsOptions(), "https://example.com/plaintext",
                      &ignored)
              .error_code() == grpc::StatusCode::UNAVAILABLE);
  }
  SECTION("shortenctl") {
    const CtlOutcome no_cert = RunShortenctl(
        f.certs->dir(),
        Concat(CtlFlags(*f.service, f.certs->ClientWithoutCert()), {"get", created.code()}));
    CHECK(no_cert.exit_code == 1);
    CHECK(absl::StrContains(no_cert.output, "TLS handshake failed"));
    const CtlOutcome plaintext = RunShortenctl(
        f.certs->dir(),
        Concat(CtlFlags(*f.service, grpcutil::ClientTlsOptions()), {"get", created.code()}));
    CHECK(plaintext.exit_code == 1);
    CHECK(absl::StrContains(plaintext.output, "UNAVAILABLE: cannot connect to"));
  }
  SECTION("edges") {
    const grpcutil::ClientTlsOptions refused[] = {f.certs->ClientWithoutCert(),
                                                  f.certs->ClientFromOtherCa()};
    for (const grpcutil::ClientTlsOptions& tls : refused) {
      INFO("edge with --service_tls_cert=" << tls.cert_file);
      std::unique_ptr<EdgeProcess> edge = f.StartEdge(tls, /*wait_subscribed=*/false);
      // Not ready at any point: several probes over a second and a half, so
      // that reconnect attempts happen in between.
      for (int i = 0; i < 6; ++i) {
        absl::StatusOr<HttpResponse> ready = HttpGet(edge->port(), "/readyz");
        REQUIRE(ready.ok());
        CHECK(ready->status == 503);
        absl::SleepFor(absl::Milliseconds(250));
      }
      absl::StatusOr<HttpResponse> cold = HttpGet(edge->port(), "/" + created.code());
      REQUIRE(cold.ok());
      CHECK(cold->status == 503);
      CHECK(edge->Metric("edge_invalidation_stream_up") == 0);
    }
  }
}

TEST_CASE("service and edge with TLS files that do not fit refuse to start naming the flag",
          "[edge/e2e][tls][pg][e2e]") {
  auto made = TestCerts::Create();
  if (!made.ok()) FAIL(made.status().ToString());
  std::unique_ptr<TestCerts> certs = *std::move(made);

  // The TLS files are checked before the database is touched: no cluster.
  ServiceProcessOptions service;
  service.conninfo = "host=/nonexistent dbname=none";
  service.tls = certs->ServerMutualTls();
  service.tls.key_file = certs->client_key();
  service.ready_timeout = absl::Seconds(10);
  absl::StatusOr<std::unique_ptr<ServiceProcess>> refused = ServiceProcess::Start(service);
  REQUIRE_FALSE(refused.ok());
  CHECK(absl::StrContains(refused.status().message(),
                          "INVALID_ARGUMENT: --tls_key: the key in " + certs->client_key() +
                              " does not match the certificate in " + certs->server_cert()));

  // The edge reads its TLS files before it listens.
  EdgeProcessOptions edge;
  edge.service_target = "127.0.0.1:1";
  edge.secret_file = certs->dir() + "/codec.secret";
  std::ofstream(edge.secret_file) << std::string(64, 'a') << "\n";
  edge.api_key_file = certs->dir() + "/edge.key";
  std::ofstream(edge.api_key_file) << "shk_" << std::string(43, 'k') << "\n";
  edge.service_tls = certs->ClientMutualTls();
  edge.service_tls.ca_file = certs->client_key();
  edge.ready_timeout = absl::Seconds(10);
  absl::StatusOr<std::unique_ptr<EdgeProcess>> edge_refused = EdgeProcess::Start(edge);
  REQUIRE_FALSE(edge_refused.ok());
  CHECK(absl::StrContains(
      edge_refused.status().message(),
      "--service_tls_ca: no PEM certificate (BEGIN CERTIFICATE) in " + certs->client_key()));
}

}  // namespace
}  // namespace shortener::testing
