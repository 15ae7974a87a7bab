// Shared setup of the redirect-edge end-to-end tests: a private cluster, the
// real shorten-service, the real redirect-edge in front of it, a gRPC stub
// to create links, and the codec (to make codes that pass or fail the
// prefilter).
#ifndef SHORTENER_TESTS_EDGE_E2E_EDGE_FIXTURE_H_
#define SHORTENER_TESTS_EDGE_E2E_EDGE_FIXTURE_H_

#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "lib/codec/short_codec.h"
#include "shortener/v1/shortener.grpc.pb.h"
#include "tests/support/edge_process.h"
#include "tests/support/http_client.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/service_process.h"

namespace shortener::testing {

// A temp directory for an edge's click spool, removed at the end.
class SpoolDir {
 public:
  SpoolDir() {
    char templ[] = "/tmp/edge_click_spool.XXXXXX";
    REQUIRE(mkdtemp(templ) != nullptr);
    path_ = templ;
  }
  ~SpoolDir() { std::filesystem::remove_all(path_); }
  SpoolDir(const SpoolDir&) = delete;
  SpoolDir& operator=(const SpoolDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct EdgeFixture {
  explicit EdgeFixture(std::vector<std::string> edge_flags = {},
                       std::vector<std::string> service_flags = {}) {
    auto c = PgCluster::Start();
    REQUIRE(c.ok());
    cluster = *std::move(c);
    ServiceProcessOptions options;
    options.conninfo = cluster->ConnInfo();
    options.extra_flags = std::move(service_flags);
    auto s = ServiceProcess::Start(options);
    if (!s.ok()) FAIL(s.status().ToString());
    service = *std::move(s);
    stub = service->NewStub();  // with the admin key
    auto secret = codec::ReadSecretFile(service->secret_file());
    REQUIRE(secret.ok());
    codec::CodecOptions codec_options;
    codec_options.secret = *secret;
    auto built = codec::ShortCodec::Create(codec_options);
    REQUIRE(built.ok());
    codec = std::make_unique<codec::ShortCodec>(*std::move(built));
    edge = StartEdge(service->target(), std::move(edge_flags));
  }

  // A second service replica on the same database and secret, and an edge
  // of its own (with `edge_flags`): what the cross-replica tests need.
  struct Replica {
    std::unique_ptr<ServiceProcess> service;
    std::unique_ptr<EdgeProcess> edge;
  };
  Replica StartReplica(std::vector<std::string> edge_flags) {
    ServiceProcessOptions options;
    options.conninfo = cluster->ConnInfo();
    options.secret_file = service->secret_file();
    auto started = ServiceProcess::Start(options);
    if (!started.ok()) FAIL(started.status().ToString());
    Replica replica;
    replica.service = *std::move(started);
    replica.edge = StartEdge(replica.service->target(), std::move(edge_flags));
    return replica;
  }

  std::unique_ptr<EdgeProcess> StartEdge(const std::string& service_target,
                                         std::vector<std::string> flags) {
    EdgeProcessOptions options;
    options.service_target = service_target;
    options.secret_file = service->secret_file();
    auto key_file = service->EdgeKeyFile();
    if (!key_file.ok()) FAIL(key_file.status().ToString());
    options.api_key_file = *key_file;
    options.extra_flags = std::move(flags);
    auto e = EdgeProcess::Start(options);
    if (!e.ok()) FAIL(e.status().ToString());
    return *std::move(e);
  }

  static std::unique_ptr<grpc::ClientContext> Ctx(absl::Duration timeout = absl::Seconds(10)) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
    return ctx;
  }

  // Shortens through the service and returns the response (REQUIREs OK).
  v1::ShortenResponse Shorten(v1::ShortenRequest request) {
    v1::ShortenResponse response;
    grpc::Status status = stub->Shorten(Ctx().get(), request, &response);
    INFO(status.error_message());
    REQUIRE(status.ok());
    return response;
  }
  v1::ShortenResponse Shorten(const std::string& url) {
    v1::ShortenRequest request;
    request.set_long_url(url);
    request.set_force_new(true);
    return Shorten(request);
  }

  void Revoke(const std::string& code) {
    v1::RevokeRequest request;
    request.set_code(code);
    v1::Link link;
    grpc::Status status = stub->Revoke(Ctx().get(), request, &link);
    INFO(status.error_message());
    REQUIRE(status.ok());
  }

  // A code that passes the prefilter but names no link.
  std::string UnknownCode() const { return *codec->Encode(4'000'000'000ULL); }
  // A code of the generated shape whose check character is wrong.
  std::string PrefilteredCode() const {
    std::string code = UnknownCode();
    for (char c : std::string("ABCDEFGHIJ")) {
      code.back() = c;
      if (!codec->PassesPrefilter(code)) break;
    }
    REQUIRE(codec->IsGeneratedShape(code));
    REQUIRE_FALSE(codec->PassesPrefilter(code));
    return code;
  }

  HttpResponse Get(const std::string& target, const std::string& method = "GET",
                   const std::string& extra_headers = "") {
    auto response = HttpGet(edge->port(), target, method, extra_headers);
    INFO(method << " " << target << ": " << response.status().ToString());
    REQUIRE(response.ok());
    return *std::move(response);
  }

  std::unique_ptr<PgCluster> cluster;
  std::unique_ptr<ServiceProcess> service;
  std::unique_ptr<v1::ShortenService::Stub> stub;
  std::unique_ptr<codec::ShortCodec> codec;
  std::unique_ptr<EdgeProcess> edge;
};

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_EDGE_E2E_EDGE_FIXTURE_H_
