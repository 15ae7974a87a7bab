// End-to-end: the real shorten-service on a private cluster, over gRPC.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "lib/grpcutil/status.h"
#include "tests/services/shorten/e2e/e2e_fixture.h"

namespace shortener::testing {
namespace {

TEST_CASE("Shorten, Resolve, GetLink and Revoke work over gRPC", "[services/shorten/e2e][e2e]") {
  E2eFixture f;
  v1::ShortenResponse shortened;
  grpc::Status st = f.Shorten("https://Example.com/landing?utm=sms#top", &shortened);
  REQUIRE(st.error_message() == "");
  REQUIRE(st.ok());
  CHECK(shortened.created());
  CHECK(shortened.code().size() == 7);
  CHECK(shortened.short_url() == "https://sho.rt/" + shortened.code());
  CHECK(shortened.link().long_url() == "https://example.com/landing?utm=sms#top");
  CHECK(shortened.link().state() == v1::LINK_STATE_ACTIVE);
  CHECK(shortened.link().owner() == "admin");  // the bootstrap key's tenant

  v1::ShortenResponse again;
  REQUIRE(f.Shorten("https://example.com/landing?utm=sms#top", &again).ok());
  CHECK_FALSE(again.created());
  CHECK(again.code() == shortened.code());

  v1::ResolveResponse resolved;
  REQUIRE(f.Resolve(shortened.code(), &resolved).ok());
  CHECK(resolved.long_url() == "https://example.com/landing?utm=sms#top");
  CHECK(resolved.state() == v1::LINK_STATE_ACTIVE);
  CHECK(resolved.redirect_type() == v1::REDIRECT_TYPE_FOUND);

  v1::GetLinkRequest get;
  get.set_code(shortened.code());
  v1::Link link;
  REQUIRE(f.stub->GetLink(E2eFixture::Ctx().get(), get, &link).ok());
  CHECK(link.code() == shortened.code());
  CHECK(link.create_time().seconds() > 0);
  CHECK_FALSE(link.has_revoke_time());

  v1::RevokeRequest revoke;
  revoke.set_code(shortened.code());
  v1::Link revoked;
  REQUIRE(f.stub->Revoke(E2eFixture::Ctx().get(), revoke, &revoked).ok());
  CHECK(revoked.state() == v1::LINK_STATE_REVOKED);
  CHECK(revoked.has_revoke_time());
  v1::ResolveResponse after;
  REQUIRE(f.Resolve(shortened.code(), &after).ok());
  CHECK(after.state() == v1::LINK_STATE_REVOKED);
  CHECK(after.long_url().empty());
}

TEST_CASE("Errors carry canonical codes and messages that name the problem",
          "[services/shorten/e2e][e2e]") {
  E2eFixture f;
  v1::ShortenResponse out;
  grpc::Status st = f.Shorten("javascript:alert(1)", &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(st.error_message(), Catch::Contains("javascript"));
  st = f.Shorten("", &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(st.error_message(), Catch::Contains("long_url"));

  v1::ResolveResponse resolved;
  st = f.Resolve("../etc/passwd", &resolved);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  st = f.Resolve("nope-not-here", &resolved);
  CHECK(st.error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK_THAT(st.error_message(), Catch::Contains("nope-not-here"));

  v1::ShortenRequest alias;
  alias.set_long_url("https://example.com/a");
  alias.set_custom_alias("promo-2027");
  REQUIRE(f.stub->Shorten(E2eFixture::Ctx().get(), alias, &out).ok());
  CHECK(out.code() == "promo-2027");
  st = f.stub->Shorten(E2eFixture::Ctx().get(), alias, &out);
  CHECK(st.error_code() == grpc::StatusCode::ALREADY_EXISTS);
  CHECK_THAT(st.error_message(), Catch::Contains("promo-2027"));

  v1::RecordClicksRequest clicks;
  v1::RecordClicksResponse clicks_out;
  // No batch id (clicks_e2e_test.cc has the rest).
  CHECK(f.stub->RecordClicks(E2eFixture::Ctx().get(), clicks, &clicks_out).error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);
  v1::GetClickStatsRequest stats;
  stats.set_code("promo-2027");  // an existing link of the caller's
  v1::GetClickStatsResponse stats_out;
  // No clicks yet: the default range (7 days by day) with zeros.
  REQUIRE(f.stub->GetClickStats(E2eFixture::Ctx().get(), stats, &stats_out).ok());
  CHECK(stats_out.total_human_clicks() == 0);
  CHECK(stats_out.buckets_size() >= 7);
}

TEST_CASE("BatchShorten returns one result per item in order", "[services/shorten/e2e][e2e]") {
  E2eFixture f;
  v1::BatchShortenRequest req;
  for (int i = 0; i < 1000; ++i) {
    v1::ShortenRequest* r = req.add_requests();
    r->set_long_url(i == 500 ? std::string("data:text/html,hi")
                             : absl::StrCat("https://example.com/item/", i));
  }
  v1::BatchShortenResponse resp;
  grpc::Status st = f.stub->BatchShorten(E2eFixture::Ctx().get(), req, &resp);
  REQUIRE(st.ok());
  REQUIRE(resp.results_size() == 1000);
  std::set<std::string> codes;
  for (int i = 0; i < 1000; ++i) {
    if (i == 500) {
      REQUIRE(resp.results(i).has_error());
      CHECK(resp.results(i).error().code() == grpc::StatusCode::INVALID_ARGUMENT);
      CHECK_THAT(resp.results(i).error().message(), Catch::Contains("data"));
      continue;
    }
    REQUIRE(resp.results(i).has_response());
    CHECK(resp.results(i).response().link().long_url() ==
          absl::StrCat("https://example.com/item/", i));
    codes.insert(resp.results(i).response().code());
  }
  CHECK(codes.size() == 999);
  // Every acknowledged item is stored.
  for (int i = 0; i < 1000; ++i) {
    if (i == 500) continue;
    v1::ResolveResponse resolved;
    REQUIRE(f.Resolve(resp.results(i).response().code(), &resolved).ok());
    REQUIRE(resolved.long_url() == absl::StrCat("https://example.com/item/", i));
  }

  v1::BatchShortenRequest too_big;
  for (int i = 0; i < 1001; ++i) too_big.add_requests()->set_long_url("https://example.com/");
  st = f.stub->BatchShorten(E2eFixture::Ctx().get(), too_big, &resp);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(st.error_message(), Catch::Contains("1000"));
}

TEST_CASE("A BatchShorten item the service cannot decode gets its own error in its slot",
          "[services/shorten/e2e][e2e]") {
  E2eFixture f;
  v1::BatchShortenRequest req;
  req.add_requests()->set_long_url("https://example.com/decode/0");
  v1::ShortenRequest* bad = req.add_requests();
  bad->set_long_url("https://example.com/decode/1");
  bad->set_redirect_type(static_cast<v1::RedirectType>(99));
  req.add_requests()->set_long_url("https://example.com/decode/2");
  v1::BatchShortenResponse resp;
  grpc::Status st = f.stub->BatchShorten(E2eFixture::Ctx().get(), req, &resp);
  REQUIRE(st.ok());
  REQUIRE(resp.results_size() == 3);
  REQUIRE(resp.results(1).has_error());
  CHECK(resp.results(1).error().code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(resp.results(1).error().message(), Catch::Contains("redirect_type: unknown value 99"));
  for (int i : {0, 2}) {
    REQUIRE(resp.results(i).has_response());
    CHECK(resp.results(i).response().link().long_url() ==
          absl::StrCat("https://example.com/decode/", i));
  }
}

#ifdef SHORTENER_EXPECT_JEMALLOC
TEST_CASE("The service runs on jemalloc when built with it", "[services/shorten/e2e][e2e]") {
  E2eFixture f;
  std::ifstream maps(absl::StrCat("/proc/", f.service->process().pid(), "/maps"));
  REQUIRE(maps.good());
  std::string line;
  bool mapped = false;
  while (std::getline(maps, line)) mapped = mapped || line.find("libjemalloc") != std::string::npos;
  CHECK(mapped);
}
#endif

TEST_CASE("Health and reflection services answer, as grpcurl needs",
          "[services/shorten/e2e][e2e]") {
  E2eFixture f;
  auto channel = grpc::CreateChannel(f.service->target(), grpc::InsecureChannelCredentials());
  auto health = grpc::health::v1::Health::NewStub(channel);
  grpc::health::v1::HealthCheckRequest hreq;
  grpc::health::v1::HealthCheckResponse hresp;
  REQUIRE(health->Check(E2eFixture::Ctx().get(), hreq, &hresp).ok());
  CHECK(hresp.status() == grpc::health::v1::HealthCheckResponse::SERVING);
  hreq.set_service("shortener.v1.ShortenService");
  REQUIRE(health->Check(E2eFixture::Ctx().get(), hreq, &hresp).ok());
  CHECK(hresp.status() == grpc::health::v1::HealthCheckResponse::SERVING);

  auto reflection = grpc::reflection::v1alpha::ServerReflection::NewStub(channel);
  auto ctx = E2eFixture::Ctx();
  auto stream = reflection->ServerReflectionInfo(ctx.get());
  grpc::reflection::v1alpha::ServerReflectionRequest rreq;
  rreq.set_list_services("*");
  REQUIRE(stream->Write(rreq));
  grpc::reflection::v1alpha::ServerReflectionResponse rresp;
  REQUIRE(stream->Read(&rresp));
  std::set<std::string> names;
  for (const auto& s : rresp.list_services_response().service()) names.insert(s.name());
  CHECK(names.count("shortener.v1.ShortenService") == 1);
  CHECK(names.count("grpc.health.v1.Health") == 1);
  // `grpcurl describe` needs the file descriptor of the service.
  rreq.set_file_containing_symbol("shortener.v1.ShortenService");
  REQUIRE(stream->Write(rreq));
  REQUIRE(stream->Read(&rresp));
  CHECK(rresp.file_descriptor_response().file_descriptor_proto_size() >= 1);
  stream->WritesDone();
  CHECK(stream->Finish().ok());
}

TEST_CASE("SIGTERM with calls in flight answers them, commits them and exits 0",
          "[services/shorten/e2e][e2e]") {
  E2eFixture f;
  std::mutex mu;
  std::vector<std::pair<std::string, std::string>> acked;  // code, long_url
  std::atomic<int> counter{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      auto stub = f.service->NewStub();
      while (!stop.load()) {
        v1::ShortenRequest req;
        req.set_long_url(absl::StrCat("https://example.com/term/", counter.fetch_add(1)));
        v1::ShortenResponse resp;
        if (stub->Shorten(E2eFixture::Ctx(absl::Seconds(5)).get(), req, &resp).ok()) {
          std::lock_guard<std::mutex> lock(mu);
          acked.emplace_back(resp.code(), req.long_url());
        } else {
          return;  // the server is gone
        }
      }
    });
  }
  absl::SleepFor(absl::Milliseconds(500));
  REQUIRE(f.service->process().Signal(SIGTERM));
  std::optional<int> code = f.service->process().Wait(absl::Seconds(20));
  stop = true;
  for (auto& t : threads) t.join();
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  CHECK_THAT(f.service->Log(), Catch::Contains("stopped"));
  REQUIRE(acked.size() > 10);
  REQUIRE(f.service->Restart().ok());
  for (const auto& [c, url] : acked) {
    v1::ResolveResponse resolved;
    REQUIRE(f.Resolve(c, &resolved).ok());
    REQUIRE(resolved.long_url() == url);
  }
}

TEST_CASE("An expire_time outside the Timestamp range is refused", "[services/shorten/e2e][e2e]") {
  E2eFixture f;
  v1::ShortenRequest req;
  req.set_long_url("https://example.com/");
  req.mutable_expire_time()->set_seconds(400000000000);
  v1::ShortenResponse out;
  grpc::Status st = f.stub->Shorten(E2eFixture::Ctx().get(), req, &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(st.error_message(), Catch::Contains("expire_time"));
  req.mutable_expire_time()->set_seconds(4000000000);
  req.mutable_expire_time()->set_nanos(-1);
  st = f.stub->Shorten(E2eFixture::Ctx().get(), req, &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
}

// Runs build/bin/`binary` with `args` and returns its exit code and output
// (stdout and stderr).
std::pair<int, std::string> RunBinary(const std::string& binary,
                                      const std::vector<std::string>& args) {
  char templ[] = "/tmp/shortener-run-XXXXXX";
  REQUIRE(mkdtemp(templ) != nullptr);
  std::string out_path = std::string(templ) + "/out";
  std::vector<std::string> argv = {BinaryPath(binary)};
  argv.insert(argv.end(), args.begin(), args.end());
  auto p = Subprocess::Spawn(argv, out_path);
  REQUIRE(p.ok());
  std::optional<int> rc = p->Wait(absl::Seconds(20));
  REQUIRE(rc.has_value());
  std::ifstream in(out_path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::system(absl::StrCat("rm -rf ", templ).c_str());
  return {*rc, ss.str()};
}

std::pair<int, std::string> RunServiceBinary(const std::vector<std::string>& args) {
  return RunBinary("shorten-service", args);
}

TEST_CASE("shortenctl shortens and resolves against the real service",
          "[services/shorten/e2e][e2e]") {
  E2eFixture f;
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "--service=" + f.service->target());
    args.insert(args.begin(), "--api_key_file=" + f.service->admin_key_file());
    return RunBinary("shortenctl", args);
  };
  auto [rc, text] = run({"--json", "shorten", "https://example.com/from-ctl"});
  REQUIRE(rc == 0);
  CHECK_THAT(text, Catch::Contains("\"created\":true"));
  size_t pos = text.find("\"code\":\"");
  REQUIRE(pos != std::string::npos);
  std::string code = text.substr(pos + 8, 7);
  auto [rc2, text2] = run({"resolve", code});
  CHECK(rc2 == 0);
  CHECK_THAT(text2, Catch::Contains("https://example.com/from-ctl"));
  auto [rc3, text3] = run({"resolve", "missing-alias"});
  CHECK(rc3 == 1);
  CHECK_THAT(text3, Catch::Contains("NOT_FOUND"));
}

TEST_CASE("The help flag lists every flag with its default; bad flags fail with one clear line",
          "[services/shorten/e2e][e2e]") {
  auto [rc, help] = RunServiceBinary({"--help"});
  for (const char* flag : {"--listen",
                           "--postgres",
                           "--base_url",
                           "--codec_secret_file",
                           "--create_codec_secret",
                           "--min_code_length",
                           "--max_url_length",
                           "--short_domains",
                           "--denied_domains",
                           "--db_pool_size",
                           "--group_commit_batch",
                           "--group_commit_threads",
                           "--blocking_threads",
                           "--id_initial_step",
                           "--id_max_step",
                           "--id_segment_lifetime",
                           "--db_startup_timeout",
                           "--shutdown_grace",
                           "--bootstrap_admin_key_file",
                           "--api_key_cache_ttl",
                           "--tls_cert",
                           "--tls_key",
                           "--tls_client_ca",
                           "--blocking_queue",
                           "--key_lookup_queue",
                           "--resolve_queue",
                           "--group_commit_queue",
                           "--max_concurrent_streams",
                           "--max_invalidation_subscribers"}) {
    CHECK_THAT(help, Catch::Contains(flag));
  }
  CHECK_THAT(help, Catch::Contains("default: \"127.0.0.1:50051\""));
  auto [rc2, missing] = RunServiceBinary({"--codec_secret_file=/tmp/x"});
  CHECK(rc2 != 0);
  CHECK_THAT(missing, Catch::Contains("--postgres is required"));
  auto [rc3, bad_length] =
      RunServiceBinary({"--postgres=host=/x", "--codec_secret_file=/x", "--min_code_length=11"});
  CHECK(rc3 != 0);
  CHECK_THAT(bad_length, Catch::Contains("--min_code_length"));
  auto [rc4, unknown] = RunServiceBinary({"--no_such_flag"});
  CHECK(rc4 != 0);
  CHECK_THAT(unknown, Catch::Contains("no_such_flag"));
  auto [rc5, no_secret] =
      RunServiceBinary({"--postgres=host=/nonexistent", "--codec_secret_file=/nonexistent/secret"});
  CHECK(rc5 != 0);
  CHECK_THAT(no_secret, Catch::Contains("--codec_secret_file"));
  const std::vector<std::string> base = {"--postgres=host=/nonexistent", "--codec_secret_file=/x"};
  const std::pair<std::vector<std::string>, std::string> tls_cases[] = {
      {{"--tls_key=/k.pem"}, "--tls_key needs --tls_cert"},
      {{"--tls_cert=/c.pem"}, "--tls_cert needs --tls_key"},
      {{"--tls_client_ca=/ca.pem"}, "--tls_client_ca needs --tls_cert"},
      {{"--tls_cert=/nonexistent/c.pem", "--tls_key=/k.pem"},
       "--tls_cert: no such file /nonexistent/c.pem"},
  };
  const std::pair<std::vector<std::string>, std::string> limit_cases[] = {
      {{"--blocking_queue=0"},
       "--blocking_queue, --key_lookup_queue and --resolve_queue must be >= 1"},
      {{"--key_lookup_queue=0"}, "--blocking_queue, --key_lookup_queue and --resolve_queue"},
      {{"--resolve_queue=0"}, "--blocking_queue, --key_lookup_queue and --resolve_queue"},
      {{"--group_commit_queue=999"}, "--group_commit_queue must be >= 1000 (a full BatchShorten)"},
      {{"--max_concurrent_streams=0"},
       "--max_concurrent_streams and --max_invalidation_subscribers"},
      {{"--max_invalidation_subscribers=0"}, "--max_invalidation_subscribers must be >= 1"},
      {{"--max_url_length=0"}, "--max_url_length must be between 1 and 65536"},
  };
  for (const auto& [flags, message] : limit_cases) {
    std::vector<std::string> args = base;
    args.insert(args.end(), flags.begin(), flags.end());
    auto [limit_rc, limit_out] = RunServiceBinary(args);
    INFO(limit_out);
    CHECK(limit_rc == 1);
    CHECK_THAT(limit_out, Catch::Contains(message));
  }
  for (const auto& [flags, message] : tls_cases) {
    std::vector<std::string> args = base;
    args.insert(args.end(), flags.begin(), flags.end());
    auto [tls_rc, tls_out] = RunServiceBinary(args);
    INFO(tls_out);
    CHECK(tls_rc == 1);
    CHECK_THAT(tls_out, Catch::Contains(message));
  }
}

TEST_CASE("A service started with another code secret refuses to run",
          "[services/shorten/e2e][e2e]") {
  E2eFixture f;
  v1::ShortenResponse out;
  REQUIRE(f.Shorten("https://example.com/keep-me", &out).ok());
  ServiceProcessOptions options;
  options.conninfo = f.cluster->ConnInfo();
  options.ready_timeout = absl::Seconds(20);
  auto other = ServiceProcess::Start(options);  // fresh secret file
  REQUIRE_FALSE(other.ok());
  CHECK_THAT(std::string(other.status().message()), Catch::Contains("code secret mismatch"));
}

}  // namespace
}  // namespace shortener::testing
