// ServiceClient against the real shorten-service (a child process on a
// private PostgreSQL cluster, as the edge's end-to-end tests run it): the
// LinkResolver contract suite, plus what only it has (readiness follows
// the service's verdict on the edge's key).
#include "edge/upstream/service_client.h"

#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/codec/short_codec.h"
#include "lib/grpcutil/api_key_channel.h"
#include "lib/grpcutil/status.h"
#include "proto/redirect_type.h"
#include "tests/edge/upstream/link_resolver_contract.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/service_process.h"

namespace shortener::edge::testing {
namespace {

namespace pb = ::shortener::v1;
using ::shortener::testing::PgCluster;
using ::shortener::testing::ServiceProcess;
using ::shortener::testing::ServiceProcessOptions;

std::unique_ptr<grpc::ClientContext> Context() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return context;
}

// A private cluster and a shorten-service on it; links are made with the
// admin key, the client under test speaks with the edge's key over the
// edge's channel arguments, as redirect-edge does.
class ServiceContractUpstream final : public ContractUpstream {
 public:
  ServiceContractUpstream() {
    auto cluster = PgCluster::Start();
    REQUIRE(cluster.ok());
    cluster_ = *std::move(cluster);
    ServiceProcessOptions options;
    options.conninfo = cluster_->ConnInfo();
    auto service = ServiceProcess::Start(options);
    if (!service.ok()) FAIL(service.status().ToString());
    service_ = *std::move(service);
    admin_ = service_->NewStub();
    auto secret = codec::ReadSecretFile(service_->secret_file());
    REQUIRE(secret.ok());
    codec::CodecOptions codec_options;
    codec_options.secret = *secret;
    auto codec = codec::ShortCodec::Create(codec_options);
    REQUIRE(codec.ok());
    codec_ = std::make_unique<codec::ShortCodec>(*std::move(codec));
    auto key_file = service_->EdgeKeyFile();
    REQUIRE(key_file.ok());
    auto key = grpcutil::ReadApiKeyFile("api_key_file", *key_file);
    REQUIRE(key.ok());
    client_ = NewClient(*key);
  }

  // A client over a channel of its own whose calls carry `api_key`.
  std::unique_ptr<ServiceClient> NewClient(const std::string& api_key) const {
    return std::make_unique<ServiceClient>(
        grpcutil::CreateChannelWithApiKey(service_->target(), grpc::InsecureChannelCredentials(),
                                          EdgeChannelArguments(), api_key),
        ServiceClientOptions{});
  }
  ServiceProcess& service() { return *service_; }
  const PgCluster& cluster() const { return *cluster_; }

  LinkResolver& resolver() override { return *client_; }

  std::string CreateLink(const ContractLink& link) override {
    pb::ShortenRequest request;
    request.set_long_url(link.long_url);
    request.set_force_new(true);
    request.set_redirect_type(RedirectTypeOf(link.redirect_status));
    if (link.expire_time.has_value()) {
      *request.mutable_expire_time() = grpcutil::ToProtoTimestamp(*link.expire_time);
    }
    if (!link.alias.empty()) request.set_custom_alias(link.alias);
    pb::ShortenResponse response;
    const grpc::Status status = admin_->Shorten(Context().get(), request, &response);
    INFO(status.error_message());
    REQUIRE(status.ok());
    return response.code();
  }

  void Revoke(const std::string& code) override {
    pb::RevokeRequest request;
    request.set_code(code);
    pb::Link link;
    const grpc::Status status = admin_->Revoke(Context().get(), request, &link);
    INFO(status.error_message());
    REQUIRE(status.ok());
  }

  std::string UnknownCode() override { return *codec_->Encode(4'000'000'000ULL); }
  absl::Time Now() override { return absl::Now(); }
  void Elapse(absl::Duration duration) override { absl::SleepFor(duration); }

  void Stop() override {
    REQUIRE(service_->process().Signal(SIGKILL));
    service_->process().Wait(absl::Seconds(10));
  }
  void Restart() override { REQUIRE(service_->Restart().ok()); }

 private:
  std::unique_ptr<PgCluster> cluster_;
  std::unique_ptr<ServiceProcess> service_;
  std::unique_ptr<pb::ShortenService::Stub> admin_;
  std::unique_ptr<codec::ShortCodec> codec_;
  std::unique_ptr<ServiceClient> client_;
};

}  // namespace

std::unique_ptr<ContractUpstream> NewContractUpstream() {
  return std::make_unique<ServiceContractUpstream>();
}

namespace {

TEST_CASE("service client: a key the service refuses makes the client not ready",
          "[edge/upstream][pg][e2e]") {
  ServiceContractUpstream upstream;
  const std::string code = upstream.CreateLink(ContractLink("https://example.com/key"));
  // An infrastructure key without the resolve scope.
  pb::CreateApiKeyRequest request;
  request.set_name("watch-only");
  request.set_infrastructure(true);
  request.add_scopes("watch_invalidations");
  auto key = upstream.service().CreateKey(request);
  REQUIRE(key.ok());
  std::unique_ptr<ServiceClient> refused = upstream.NewClient(*key);
  const ResolveReply reply = ResolveAndWait(*refused, code).reply;
  CHECK(reply.outcome == ResolveOutcome::kUnavailable);
  CHECK(absl::IsPermissionDenied(reply.error));
  // Connected, but of no use: /readyz must say so.
  CHECK_FALSE(refused->Ready());
  // The edge's own key is fine on the same service.
  CHECK(ResolveAndWait(upstream.resolver(), code).reply.outcome == ResolveOutcome::kActive);
  CHECK(Eventually([&] { return upstream.resolver().Ready(); }));
}

// The Resolve calls a service served, from the "served: ..." line it logs
// when it stops (docs/operations.md); -1 when there is none.
int ResolvesServed(const std::string& log) {
  std::smatch match;
  if (!std::regex_search(log, match, std::regex("served:.* Resolve=([0-9]+)"))) return -1;
  return std::stoi(match[1]);
}

TEST_CASE("service client: calls spread over every replica the target names (round_robin)",
          "[edge/upstream][pg][e2e]") {
  ServiceContractUpstream upstream;
  const std::string code = upstream.CreateLink(ContractLink("https://example.com/spread"));
  ServiceProcessOptions options;
  options.conninfo = upstream.cluster().ConnInfo();
  options.secret_file = upstream.service().secret_file();
  options.admin_key_file = upstream.service().admin_key_file();
  // This one closes connections every second (GOAWAY, as it does every 5
  // minutes by default so that edges find new replicas): the calls below,
  // spread over 3 s, must not notice.
  options.extra_flags = {"--max_connection_age=1s"};
  auto second = ServiceProcess::Start(options);
  REQUIRE(second.ok());
  auto key_file = upstream.service().EdgeKeyFile();
  REQUIRE(key_file.ok());
  auto key = grpcutil::ReadApiKeyFile("api_key_file", *key_file);
  REQUIRE(key.ok());
  // Two replicas behind one target, as a headless Service's DNS name
  // gives them (gRPC's static ipv4: list: one DNS name cannot name two
  // ports on 127.0.0.1).
  const std::string target =
      absl::StrCat("ipv4:127.0.0.1:", upstream.service().port(), ",127.0.0.1:", (*second)->port());
  ServiceClient client(grpcutil::CreateChannelWithApiKey(target, grpc::InsecureChannelCredentials(),
                                                         EdgeChannelArguments(), *key),
                       ServiceClientOptions{});
  constexpr int kCalls = 40;
  for (int i = 0; i < kCalls; ++i) {
    const ResolveReply reply = ResolveAndWait(client, code).reply;
    INFO(i << ": " << reply.error.ToString());
    REQUIRE(reply.outcome == ResolveOutcome::kActive);
    absl::SleepFor(absl::Milliseconds(75));
  }
  std::vector<int> served;
  for (ServiceProcess* service : {&upstream.service(), second->get()}) {
    REQUIRE(service->process().Signal(SIGTERM));
    REQUIRE(service->process().Wait(absl::Seconds(30)) == std::optional<int>(0));
    served.push_back(ResolvesServed(service->Log()));
  }
  INFO("Resolve calls served: " << served[0] << " and " << served[1]);
  CHECK(served[0] + served[1] == kCalls);
  // pick_first would give one replica all of them; round_robin alternates
  // once both are connected.
  CHECK(served[0] >= kCalls / 4);
  CHECK(served[1] >= kCalls / 4);
}

}  // namespace
}  // namespace shortener::edge::testing
