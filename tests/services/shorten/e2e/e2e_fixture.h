// Shared setup of the end-to-end tests: a private cluster, the real service,
// and a stub.
#ifndef SHORTENER_TESTS_SERVICES_SHORTEN_E2E_E2E_FIXTURE_H_
#define SHORTENER_TESTS_SERVICES_SHORTEN_E2E_E2E_FIXTURE_H_

#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "shortener/v1/shortener.grpc.pb.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/service_process.h"

namespace shortener::testing {

struct E2eFixture {
  explicit E2eFixture(std::vector<std::string> extra_flags = {}) {
    auto c = PgCluster::Start();
    REQUIRE(c.ok());
    cluster = *std::move(c);
    ServiceProcessOptions options;
    options.conninfo = cluster->ConnInfo();
    options.extra_flags = std::move(extra_flags);
    auto s = ServiceProcess::Start(options);
    if (!s.ok()) FAIL(s.status().ToString());
    service = *std::move(s);
    stub = service->NewStub();  // with the admin key
  }

  // A context with a deadline, so a hung service fails the test instead of
  // hanging it.
  static std::unique_ptr<grpc::ClientContext> Ctx(absl::Duration timeout = absl::Seconds(10)) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
    return ctx;
  }

  grpc::Status Shorten(const std::string& url, v1::ShortenResponse* out) {
    v1::ShortenRequest req;
    req.set_long_url(url);
    return stub->Shorten(Ctx().get(), req, out);
  }

  grpc::Status Resolve(const std::string& code, v1::ResolveResponse* out) {
    v1::ResolveRequest req;
    req.set_code(code);
    return stub->Resolve(Ctx().get(), req, out);
  }

  std::unique_ptr<PgCluster> cluster;
  std::unique_ptr<ServiceProcess> service;
  std::unique_ptr<v1::ShortenService::Stub> stub;
};

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SERVICES_SHORTEN_E2E_E2E_FIXTURE_H_
