// End-to-end access control: the real shorten-service on a private cluster,
// over gRPC. Every refusal the Authorizer and the domain logic make
// (UNAUTHENTICATED, PERMISSION_DENIED for a scope or a domain,
// RESOURCE_EXHAUSTED with the wait, NOT_FOUND for another tenant's link),
// the admin RPCs, infrastructure keys (the only ones that may record clicks
// and watch invalidations), key revocation reaching every replica within a
// second, the bootstrap admin key file, and that no plaintext key reaches the
// database.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <pqxx/pqxx>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "tests/services/shorten/e2e/e2e_fixture.h"

namespace shortener::testing {
namespace {

using Stub = v1::ShortenService::Stub;

std::unique_ptr<grpc::ClientContext> Ctx() { return E2eFixture::Ctx(); }

// Calls RPC `name` with a plausible request and returns its status. Every
// ShortenService RPC is here: the "every RPC" tests loop over kRpcs.
grpc::Status Call(Stub& stub, const std::string& name, const std::string& code = "abcdefg") {
  auto ctx = Ctx();
  if (name == "Shorten") {
    v1::ShortenRequest req;
    req.set_long_url("https://example.com/auth-test");
    v1::ShortenResponse resp;
    return stub.Shorten(ctx.get(), req, &resp);
  }
  if (name == "BatchShorten") {
    v1::BatchShortenRequest req;
    req.add_requests()->set_long_url("https://example.com/auth-batch");
    v1::BatchShortenResponse resp;
    return stub.BatchShorten(ctx.get(), req, &resp);
  }
  if (name == "Resolve") {
    v1::ResolveRequest req;
    req.set_code(code);
    v1::ResolveResponse resp;
    return stub.Resolve(ctx.get(), req, &resp);
  }
  if (name == "BatchResolve") {
    v1::BatchResolveRequest req;
    req.add_codes(code);
    v1::BatchResolveResponse resp;
    return stub.BatchResolve(ctx.get(), req, &resp);
  }
  if (name == "GetLink") {
    v1::GetLinkRequest req;
    req.set_code(code);
    v1::Link resp;
    return stub.GetLink(ctx.get(), req, &resp);
  }
  if (name == "Revoke") {
    v1::RevokeRequest req;
    req.set_code(code);
    v1::Link resp;
    return stub.Revoke(ctx.get(), req, &resp);
  }
  if (name == "RecordClicks") {
    v1::RecordClicksRequest req;
    req.set_batch_id("b1");
    v1::RecordClicksResponse resp;
    return stub.RecordClicks(ctx.get(), req, &resp);
  }
  if (name == "GetClickStats") {
    v1::GetClickStatsRequest req;
    req.set_code(code);
    v1::GetClickStatsResponse resp;
    return stub.GetClickStats(ctx.get(), req, &resp);
  }
  if (name == "WatchInvalidations") {
    v1::WatchInvalidationsRequest req;
    req.set_subscriber("auth-test");
    auto reader = stub.WatchInvalidations(ctx.get(), req);
    v1::Invalidation first;
    if (reader->Read(&first)) {
      ctx->TryCancel();  // subscribed: that is all this call needed to show
      reader->Finish();
      return grpc::Status::OK;
    }
    return reader->Finish();
  }
  if (name == "CreateApiKey") {
    v1::CreateApiKeyRequest req;
    req.set_name("made-in-test");
    req.add_scopes("resolve");
    v1::CreateApiKeyResponse resp;
    return stub.CreateApiKey(ctx.get(), req, &resp);
  }
  if (name == "ListApiKeys") {
    v1::ListApiKeysResponse resp;
    return stub.ListApiKeys(ctx.get(), v1::ListApiKeysRequest(), &resp);
  }
  if (name == "RevokeApiKey") {
    v1::RevokeApiKeyRequest req;
    req.set_id(1LL << 40);
    v1::ApiKey resp;
    return stub.RevokeApiKey(ctx.get(), req, &resp);
  }
  FAIL("unknown rpc " << name);
  return grpc::Status::CANCELLED;
}

// Every RPC and the scope it needs.
const std::map<std::string, std::string> kRpcScopes = {
    {"Shorten", "shorten"},
    {"BatchShorten", "shorten"},
    {"Resolve", "resolve"},
    {"BatchResolve", "resolve"},
    {"GetLink", "stats"},
    {"Revoke", "revoke"},
    {"RecordClicks", "record_clicks"},
    {"GetClickStats", "stats"},
    {"WatchInvalidations", "watch_invalidations"},
    {"CreateApiKey", "admin"},
    {"ListApiKeys", "admin"},
    {"RevokeApiKey", "admin"},
};

std::string CreateKey(E2eFixture& f, const std::string& name, const std::string& scopes,
                      const std::string& tenant = "") {
  auto key = f.service->CreateKey(name, scopes, tenant);
  INFO(key.status().ToString());
  REQUIRE(key.ok());
  return *key;
}

// An infrastructure key (no tenant) with `scopes`, as an edge's.
std::string CreateInfrastructureKey(E2eFixture& f, const std::string& name,
                                    const std::vector<std::string>& scopes) {
  v1::CreateApiKeyRequest request;
  request.set_name(name);
  request.set_infrastructure(true);
  for (const std::string& scope : scopes) request.add_scopes(scope);
  auto key = f.service->CreateKey(request);
  INFO(key.status().ToString());
  REQUIRE(key.ok());
  return *key;
}

bool IsInfrastructureScope(const std::string& scope) {
  return scope == "record_clicks" || scope == "watch_invalidations";
}

// A stub sending `authorization: <value>` exactly as given.
std::unique_ptr<Stub> RawAuthStub(const ServiceProcess& service, const std::string& value) {
  class Fixed final : public grpc::experimental::Interceptor {
   public:
    explicit Fixed(std::string v) : v_(std::move(v)) {}
    void Intercept(grpc::experimental::InterceptorBatchMethods* m) override {
      if (m->QueryInterceptionHookPoint(
              grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
        m->GetSendInitialMetadata()->emplace("authorization", v_);
      }
      m->Proceed();
    }
    std::string v_;
  };
  class Factory final : public grpc::experimental::ClientInterceptorFactoryInterface {
   public:
    explicit Factory(std::string v) : v_(std::move(v)) {}
    grpc::experimental::Interceptor* CreateClientInterceptor(
        grpc::experimental::ClientRpcInfo*) override {
      return new Fixed(v_);
    }
    std::string v_;
  };
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> factories;
  factories.push_back(std::make_unique<Factory>(value));
  return v1::ShortenService::NewStub(grpc::experimental::CreateCustomChannelWithInterceptors(
      service.target(), grpc::InsecureChannelCredentials(), grpc::ChannelArguments(),
      std::move(factories)));
}

TEST_CASE("every RPC without a usable key is UNAUTHENTICATED naming the problem",
          "[services/shorten/e2e][auth][e2e]") {
  E2eFixture f;
  auto no_key = f.service->NewStub("");
  auto unknown = f.service->NewStub("shk_" + std::string(43, 'x'));
  auto basic = RawAuthStub(*f.service, "Basic dXNlcjpwYXNz");
  auto empty_bearer = RawAuthStub(*f.service, "Bearer ");
  for (const auto& [rpc, scope] : kRpcScopes) {
    INFO(rpc);
    grpc::Status st = Call(*no_key, rpc);
    CHECK(st.error_code() == grpc::StatusCode::UNAUTHENTICATED);
    CHECK_THAT(st.error_message(), Catch::Contains("authorization: missing"));
    st = Call(*unknown, rpc);
    CHECK(st.error_code() == grpc::StatusCode::UNAUTHENTICATED);
    CHECK_THAT(st.error_message(), Catch::Contains("api key unknown"));
    CHECK_THAT(st.error_message(), !Catch::Contains("xxxxxxxx"));  // never echoed
    st = Call(*basic, rpc);
    CHECK(st.error_code() == grpc::StatusCode::UNAUTHENTICATED);
    CHECK_THAT(st.error_message(), Catch::Contains("Bearer"));
    st = Call(*empty_bearer, rpc);
    CHECK(st.error_code() == grpc::StatusCode::UNAUTHENTICATED);
  }
}

TEST_CASE("a key without the scope an RPC needs is PERMISSION_DENIED naming the scope",
          "[services/shorten/e2e][auth][e2e]") {
  E2eFixture f;
  // record_clicks only: every RPC but RecordClicks needs something else.
  auto clicks_only =
      f.service->NewStub(CreateInfrastructureKey(f, "clicks-only", {"record_clicks"}));
  // Every scope a tenant key may hold but admin.
  auto tenant = f.service->NewStub(CreateKey(f, "tenant-all", "shorten,resolve,revoke,stats"));
  for (const auto& [rpc, scope] : kRpcScopes) {
    INFO(rpc);
    if (scope != "record_clicks") {
      grpc::Status st = Call(*clicks_only, rpc);
      CHECK(st.error_code() == grpc::StatusCode::PERMISSION_DENIED);
      CHECK_THAT(st.error_message(), Catch::Contains(absl::StrCat(
                                         "api key \"clicks-only\" lacks scope \"", scope, "\"")));
    }
    grpc::Status st = Call(*tenant, rpc);
    if (scope == "admin" || IsInfrastructureScope(scope)) {
      CHECK(st.error_code() == grpc::StatusCode::PERMISSION_DENIED);
      CHECK_THAT(st.error_message(), Catch::Contains(absl::StrCat("lacks scope \"", scope, "\"")));
    } else {
      // Past the authorizer: whatever the RPC itself answers.
      CHECK(st.error_code() != grpc::StatusCode::PERMISSION_DENIED);
      CHECK(st.error_code() != grpc::StatusCode::UNAUTHENTICATED);
    }
  }
  // RecordClicks with its scope gets past authorization (to the batch's
  // own checks).
  CHECK(Call(*clicks_only, "RecordClicks").error_code() != grpc::StatusCode::PERMISSION_DENIED);
}

TEST_CASE("only infrastructure keys may record clicks and watch invalidations",
          "[services/shorten/e2e][auth][e2e]") {
  E2eFixture f;
  // A tenant key with either scope is refused at creation, saying why.
  struct Refused {
    std::vector<std::string> scopes;
    std::string message;
  };
  for (const Refused& refused : std::vector<Refused>{
           {{"resolve", "record_clicks"},
            "scopes: record_clicks is for infrastructure keys only (infrastructure = true, no "
            "tenant): a tenant key holding it could spend another tenant's click budget and "
            "inflate its statistics"},
           {{"resolve", "watch_invalidations"},
            "a tenant key holding it could watch every tenant's revocations"},
           {{"shorten", "record_clicks", "watch_invalidations"}, "record_clicks"},
           {{"admin", "record_clicks"}, "record_clicks is for infrastructure keys only"},
       }) {
    for (const std::string tenant : {"", "acme"}) {
      v1::CreateApiKeyRequest req;
      req.set_name("tenant-edge");
      req.set_tenant(tenant);
      for (const std::string& scope : refused.scopes) req.add_scopes(scope);
      v1::CreateApiKeyResponse resp;
      grpc::Status st = f.stub->CreateApiKey(Ctx().get(), req, &resp);
      INFO(absl::StrJoin(refused.scopes, ",")
           << " tenant=" << tenant << ": " << st.error_message());
      CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
      CHECK_THAT(st.error_message(), Catch::Contains(refused.message));
    }
  }
  // An infrastructure key has no tenant and holds nothing a tenant key does
  // but resolve.
  v1::CreateApiKeyRequest with_tenant;
  with_tenant.set_name("edge-with-tenant");
  with_tenant.set_tenant("acme");
  with_tenant.set_infrastructure(true);
  with_tenant.add_scopes("record_clicks");
  v1::CreateApiKeyResponse ignored;
  grpc::Status st = f.stub->CreateApiKey(Ctx().get(), with_tenant, &ignored);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(st.error_message(), Catch::Contains("tenant: an infrastructure key has no tenant"));
  for (const char* scope : {"shorten", "stats", "revoke", "admin"}) {
    v1::CreateApiKeyRequest req;
    req.set_name("edge-too-wide");
    req.set_infrastructure(true);
    req.add_scopes("resolve");
    req.add_scopes(scope);
    st = f.stub->CreateApiKey(Ctx().get(), req, &ignored);
    INFO(scope << ": " << st.error_message());
    CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_THAT(st.error_message(),
               Catch::Contains(absl::StrCat("an infrastructure key may hold only resolve, "
                                            "record_clicks and watch_invalidations, not \"",
                                            scope, "\"")));
  }

  // The edge's key, as run.sh makes it: shown as infrastructure, no tenant.
  v1::CreateApiKeyRequest edge_req;
  edge_req.set_name("edge-eu-1");
  edge_req.set_infrastructure(true);
  for (const char* scope : {"resolve", "record_clicks", "watch_invalidations"}) {
    edge_req.add_scopes(scope);
  }
  v1::CreateApiKeyResponse edge_key;
  REQUIRE(f.stub->CreateApiKey(Ctx().get(), edge_req, &edge_key).ok());
  CHECK(edge_key.api_key().infrastructure());
  CHECK(edge_key.api_key().tenant().empty());
  CHECK(std::vector<std::string>(edge_key.api_key().scopes().begin(),
                                 edge_key.api_key().scopes().end()) ==
        std::vector<std::string>{"record_clicks", "resolve", "watch_invalidations"});
  v1::ListApiKeysResponse list;
  REQUIRE(f.stub->ListApiKeys(Ctx().get(), v1::ListApiKeysRequest(), &list).ok());
  for (const v1::ApiKey& k : list.api_keys()) {
    INFO(k.name());
    CHECK(k.infrastructure() == (k.id() == edge_key.api_key().id()));
  }
  // And in the database: no tenant.
  {
    pqxx::connection conn(f.cluster->ConnInfo());
    pqxx::nontransaction tx(conn);
    CHECK(tx.exec1("SELECT count(*) FROM api_keys WHERE tenant IS NULL")[0].as<int>() == 1);
  }

  // A tenant key with every scope it may hold cannot record clicks or watch
  // invalidations; the edge's key can, and so can the admin's (admin implies
  // every scope: it could make itself an infrastructure key anyway).
  auto tenant = f.service->NewStub(CreateKey(f, "acme-tool", "shorten,resolve,revoke,stats"));
  auto edge = f.service->NewStub(edge_key.key());
  v1::ShortenResponse link;
  REQUIRE(f.Shorten("https://example.com/infrastructure-clicks", &link).ok());
  int batch = 0;
  const auto record_one_click = [&](Stub& stub) {
    v1::RecordClicksRequest req;
    req.set_batch_id(absl::StrCat("infrastructure-test-", ++batch));
    v1::ClickEvent* event = req.add_events();
    event->set_code(link.code());
    event->mutable_time()->set_seconds(absl::ToUnixSeconds(absl::Now()));
    event->set_http_status(302);
    v1::RecordClicksResponse resp;
    return stub.RecordClicks(Ctx().get(), req, &resp);
  };
  st = record_one_click(*tenant);
  CHECK(st.error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK_THAT(st.error_message(),
             Catch::Contains("api key \"acme-tool\" lacks scope \"record_clicks\""));
  st = Call(*tenant, "WatchInvalidations");
  CHECK(st.error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK_THAT(st.error_message(),
             Catch::Contains("api key \"acme-tool\" lacks scope \"watch_invalidations\""));
  CHECK(Call(*tenant, "Resolve", link.code()).ok());  // resolve stays a tenant's scope
  st = record_one_click(*edge);
  CHECK(st.ok());
  CHECK(Call(*edge, "WatchInvalidations").ok());
  CHECK(Call(*edge, "Resolve", link.code()).ok());
  CHECK(Call(*edge, "BatchResolve", link.code()).ok());
  CHECK(Call(*edge, "Shorten").error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK(record_one_click(*f.stub).ok());
  CHECK(Call(*f.stub, "WatchInvalidations").ok());
}

TEST_CASE("a key limited to domains may shorten only to them",
          "[services/shorten/e2e][auth][e2e]") {
  E2eFixture f;
  v1::CreateApiKeyRequest create;
  create.set_name("example-only");
  create.add_scopes("shorten");
  create.add_allowed_domains("*.example.com");
  create.add_allowed_domains("example.org");
  auto key = f.service->CreateKey(create);
  REQUIRE(key.ok());
  auto stub = f.service->NewStub(*key);
  auto shorten = [&](const std::string& url) {
    v1::ShortenRequest req;
    req.set_long_url(url);
    v1::ShortenResponse resp;
    return stub->Shorten(Ctx().get(), req, &resp);
  };
  CHECK(shorten("https://www.example.com/a").ok());
  CHECK(shorten("https://a.b.EXAMPLE.com/deep").ok());
  CHECK(shorten("http://example.org/x").ok());
  for (const auto& [url, host] : std::vector<std::pair<std::string, std::string>>{
           {"https://example.com/apex-not-covered-by-wildcard", "example.com"},
           {"https://evil.com/phish", "evil.com"},
           {"https://example.com.evil.net/", "example.com.evil.net"},
           {"https://sub.example.org/", "sub.example.org"},
           {"http://93.184.216.34/", "93.184.216.34"}}) {
    INFO(url);
    grpc::Status st = shorten(url);
    CHECK(st.error_code() == grpc::StatusCode::PERMISSION_DENIED);
    CHECK_THAT(st.error_message(),
               Catch::Contains(absl::StrCat("host \"", host, "\" is not among the domains")));
    CHECK_THAT(st.error_message(), Catch::Contains("\"example-only\""));
  }
  // In a batch, only the item outside the list fails.
  v1::BatchShortenRequest batch;
  batch.add_requests()->set_long_url("https://ok.example.com/1");
  batch.add_requests()->set_long_url("https://bad.example.net/2");
  v1::BatchShortenResponse results;
  REQUIRE(stub->BatchShorten(Ctx().get(), batch, &results).ok());
  REQUIRE(results.results_size() == 2);
  CHECK(results.results(0).has_response());
  REQUIRE(results.results(1).has_error());
  CHECK(results.results(1).error().code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK_THAT(results.results(1).error().message(), Catch::Contains("bad.example.net"));
}

TEST_CASE("a rate-limited key gets its burst then RESOURCE_EXHAUSTED with the wait",
          "[services/shorten/e2e][auth][e2e]") {
  E2eFixture f;
  v1::CreateApiKeyRequest create;
  create.set_name("slow");
  create.add_scopes("shorten");
  create.add_scopes("resolve");
  create.set_rate_per_second(0.2);  // a token per 5 s: none comes back during the test
  create.set_burst(5);
  auto key = f.service->CreateKey(create);
  REQUIRE(key.ok());
  auto stub = f.service->NewStub(*key);
  // The bucket is shared across RPCs: 3 Shorten + 2 Resolve use it up.
  for (int i = 0; i < 3; ++i) {
    INFO(i);
    CHECK(Call(*stub, "Shorten").ok());
  }
  CHECK(Call(*stub, "Resolve").error_code() == grpc::StatusCode::NOT_FOUND);  // counted too
  CHECK(Call(*stub, "Resolve").error_code() == grpc::StatusCode::NOT_FOUND);
  // The sixth request: refused, with the wait in the message and metadata.
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ShortenRequest req;
  req.set_long_url("https://example.com/one-too-many");
  v1::ShortenResponse resp;
  grpc::Status st = stub->Shorten(&ctx, req, &resp);
  REQUIRE(st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK_THAT(st.error_message(), Catch::Contains("rate limit of api key \"slow\" exceeded"));
  CHECK_THAT(st.error_message(), Catch::Contains("retry in"));
  auto it = ctx.GetServerTrailingMetadata().find("retry-after-ms");
  REQUIRE(it != ctx.GetServerTrailingMetadata().end());
  const int wait_ms = std::stoi(std::string(it->second.data(), it->second.size()));
  CHECK(wait_ms > 0);
  CHECK(wait_ms <= 5000);
  // Other keys are not affected.
  CHECK(Call(*f.stub, "Shorten").ok());
  // A batch larger than the burst can never pass: it says so.
  create.set_name("small-burst");
  create.set_rate_per_second(100);
  create.set_burst(2);
  auto small = f.service->CreateKey(create);
  REQUIRE(small.ok());
  v1::BatchShortenRequest batch;
  for (int i = 0; i < 3; ++i) batch.add_requests()->set_long_url("https://example.com/b");
  v1::BatchShortenResponse results;
  st = f.service->NewStub(*small)->BatchShorten(Ctx().get(), batch, &results);
  CHECK(st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK_THAT(st.error_message(), Catch::Contains("exceed the burst of 2"));
}

TEST_CASE("links belong to their tenant: another tenant gets NOT_FOUND unless admin",
          "[services/shorten/e2e][auth][e2e]") {
  E2eFixture f;
  const std::string scopes = "shorten,resolve,revoke,stats";
  auto alice = f.service->NewStub(CreateKey(f, "alice-tool", scopes, "alice"));
  auto alice2 = f.service->NewStub(CreateKey(f, "alice-other-tool", scopes, "alice"));
  auto bob = f.service->NewStub(CreateKey(f, "bob-tool", scopes, "bob"));

  v1::ShortenRequest req;
  req.set_long_url("https://example.com/tenant-test");
  v1::ShortenResponse mine;
  REQUIRE(alice->Shorten(Ctx().get(), req, &mine).ok());
  CHECK(mine.created());
  CHECK(mine.link().owner() == "alice");
  // Dedupe is per tenant: alice's other key gets alice's link, bob a new one.
  v1::ShortenResponse again;
  REQUIRE(alice2->Shorten(Ctx().get(), req, &again).ok());
  CHECK_FALSE(again.created());
  CHECK(again.code() == mine.code());
  v1::ShortenResponse bobs;
  REQUIRE(bob->Shorten(Ctx().get(), req, &bobs).ok());
  CHECK(bobs.created());
  CHECK(bobs.code() != mine.code());
  CHECK(bobs.link().owner() == "bob");

  // Bob cannot see or revoke alice's link; the answer is the one for a code
  // that does not exist, word for word.
  grpc::Status st = Call(*bob, "GetLink", mine.code());
  CHECK(st.error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(st.error_message() == absl::StrCat("code \"", mine.code(), "\" does not exist"));
  st = Call(*bob, "Revoke", mine.code());
  CHECK(st.error_code() == grpc::StatusCode::NOT_FOUND);
  st = Call(*bob, "GetClickStats", mine.code());
  CHECK(st.error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(st.error_message() == absl::StrCat("code \"", mine.code(), "\" does not exist"));
  // Its owner's other key gets the statistics.
  CHECK(Call(*alice2, "GetClickStats", mine.code()).ok());
  // ... and it is still active.
  v1::ResolveRequest resolve;
  resolve.set_code(mine.code());
  v1::ResolveResponse resolved;
  REQUIRE(bob->Resolve(Ctx().get(), resolve, &resolved).ok());  // redirects are public
  CHECK(resolved.state() == v1::LINK_STATE_ACTIVE);
  // Same for a custom alias.
  v1::ShortenRequest alias_req;
  alias_req.set_long_url("https://example.com/alias-of-alice");
  alias_req.set_custom_alias("alice-vanity");
  REQUIRE(alice->Shorten(Ctx().get(), alias_req, &again).ok());
  CHECK(Call(*bob, "GetLink", "alice-vanity").error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(Call(*bob, "Revoke", "alice-vanity").error_code() == grpc::StatusCode::NOT_FOUND);

  // Alice's other key and the admin can.
  CHECK(Call(*alice2, "GetLink", mine.code()).ok());
  CHECK(Call(*f.stub, "GetLink", bobs.code()).ok());
  REQUIRE(Call(*alice2, "Revoke", mine.code()).ok());
  REQUIRE(Call(*f.stub, "Revoke", "alice-vanity").ok());
  REQUIRE(bob->Resolve(Ctx().get(), resolve, &resolved).ok());
  CHECK(resolved.state() == v1::LINK_STATE_REVOKED);
}

TEST_CASE("a revoked key stops working on every replica within a second",
          "[services/shorten/e2e][auth][e2e]") {
  E2eFixture f;
  ServiceProcessOptions options;
  options.conninfo = f.cluster->ConnInfo();
  options.secret_file = f.service->secret_file();
  // A long cache TTL: only the NOTIFY path can make this pass.
  options.extra_flags = {"--api_key_cache_ttl=5m"};
  auto replica_b = ServiceProcess::Start(options);
  REQUIRE(replica_b.ok());
  v1::CreateApiKeyRequest create;
  create.set_name("to-revoke");
  create.add_scopes("resolve");
  v1::CreateApiKeyResponse created;
  REQUIRE(f.stub->CreateApiKey(Ctx().get(), create, &created).ok());
  auto on_a = f.service->NewStub(created.key());
  auto on_b = (*replica_b)->NewStub(created.key());
  // Both replicas have the key cached now.
  for (int i = 0; i < 3; ++i) {
    CHECK(Call(*on_a, "Resolve").error_code() == grpc::StatusCode::NOT_FOUND);
    CHECK(Call(*on_b, "Resolve").error_code() == grpc::StatusCode::NOT_FOUND);
  }
  v1::RevokeApiKeyRequest revoke;
  revoke.set_id(created.api_key().id());
  v1::ApiKey revoked;
  const absl::Time start = absl::Now();
  REQUIRE(f.stub->RevokeApiKey(Ctx().get(), revoke, &revoked).ok());
  CHECK(revoked.has_revoke_time());
  for (Stub* stub : {on_a.get(), on_b.get()}) {
    grpc::Status st;
    while (absl::Now() - start < absl::Seconds(3)) {
      st = Call(*stub, "Resolve");
      if (st.error_code() == grpc::StatusCode::UNAUTHENTICATED) break;
      absl::SleepFor(absl::Milliseconds(20));
    }
    CHECK(st.error_code() == grpc::StatusCode::UNAUTHENTICATED);
    CHECK_THAT(st.error_message(), Catch::Contains("api key revoked"));
  }
  const absl::Duration took = absl::Now() - start;
  INFO("both replicas refused the key after " << absl::FormatDuration(took));
  CHECK(took < absl::Seconds(1));
  // Idempotent; unknown ids are NOT_FOUND.
  v1::ApiKey again;
  REQUIRE(f.stub->RevokeApiKey(Ctx().get(), revoke, &again).ok());
  CHECK(again.revoke_time().seconds() == revoked.revoke_time().seconds());
  CHECK(Call(*f.stub, "RevokeApiKey").error_code() == grpc::StatusCode::NOT_FOUND);
}

TEST_CASE("admin RPCs validate what they store and never return a key again",
          "[services/shorten/e2e][auth][e2e]") {
  E2eFixture f;
  struct Bad {
    std::function<void(v1::CreateApiKeyRequest&)> edit;
    std::string message;
  };
  for (const Bad& bad : std::vector<Bad>{
           {[](auto& r) { r.clear_name(); }, "name: is required"},
           {[](auto& r) { r.clear_scopes(); }, "scopes: at least one"},
           {[](auto& r) { r.add_scopes("superuser"); }, "superuser"},
           {[](auto& r) { r.add_allowed_domains("*.com"); }, "allowed domains"},
           {[](auto& r) { r.set_rate_per_second(-1); }, "rate_per_second"},
           {[](auto& r) { r.set_burst(5); }, "burst: needs rate_per_second"},
       }) {
    v1::CreateApiKeyRequest req;
    req.set_name("n");
    req.add_scopes("shorten");
    bad.edit(req);
    v1::CreateApiKeyResponse resp;
    grpc::Status st = f.stub->CreateApiKey(Ctx().get(), req, &resp);
    INFO(bad.message << ": " << st.error_message());
    CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_THAT(st.error_message(), Catch::Contains(bad.message));
  }
  v1::CreateApiKeyRequest req;
  req.set_name("listed");
  req.set_tenant("acme");
  req.add_scopes("stats");
  req.add_scopes("shorten");
  req.add_allowed_domains("Acme.example");
  req.set_rate_per_second(2.5);
  v1::CreateApiKeyResponse created;
  REQUIRE(f.stub->CreateApiKey(Ctx().get(), req, &created).ok());
  CHECK(absl::StartsWith(created.key(), "shk_"));
  CHECK(created.key().size() == 47);
  CHECK(created.api_key().tenant() == "acme");
  CHECK(created.api_key().burst() == 3);  // ceil(2.5)
  v1::ListApiKeysResponse list;
  REQUIRE(f.stub->ListApiKeys(Ctx().get(), v1::ListApiKeysRequest(), &list).ok());
  bool found = false;
  for (const v1::ApiKey& k : list.api_keys()) {
    CHECK_THAT(k.DebugString(), !Catch::Contains(created.key().substr(4)));
    CHECK_THAT(k.DebugString(), !Catch::Contains(f.service->admin_key()));
    if (k.id() == created.api_key().id()) {
      found = true;
      CHECK(k.name() == "listed");
      CHECK(std::vector<std::string>(k.scopes().begin(), k.scopes().end()) ==
            std::vector<std::string>{"shorten", "stats"});
      CHECK(std::vector<std::string>(k.allowed_domains().begin(), k.allowed_domains().end()) ==
            std::vector<std::string>{"acme.example"});
      CHECK(k.rate_per_second() == 2.5);
    }
  }
  CHECK(found);

  // What the database holds: no key, nor the random part of one.
  pqxx::connection conn(f.cluster->ConnInfo());
  pqxx::nontransaction tx(conn);
  pqxx::result rows = tx.exec("SELECT k::text FROM api_keys k");
  REQUIRE(rows.size() >= 2);
  for (const pqxx::row& row : rows) {
    const std::string text = row[0].as<std::string>();
    CHECK_THAT(text, !Catch::Contains(created.key().substr(4, 16)));
    CHECK_THAT(text, !Catch::Contains(f.service->admin_key().substr(4, 16)));
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_CASE("the bootstrap admin key file is created 0600, reused, and checked",
          "[services/shorten/e2e][auth][e2e]") {
  E2eFixture f;
  // Created by the first start, private, one line.
  struct stat st;
  REQUIRE(::stat(f.service->admin_key_file().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  const std::string first = ReadFile(f.service->admin_key_file());
  CHECK(first == f.service->admin_key() + "\n");
  CHECK(Call(*f.stub, "ListApiKeys").ok());
  // A restart reuses the file: same key, still admin, not stored twice.
  f.service->process().Signal(SIGTERM);
  REQUIRE(f.service->process().Wait(absl::Seconds(20)).has_value());
  REQUIRE(f.service->Restart().ok());
  CHECK(ReadFile(f.service->admin_key_file()) == first);
  auto stub = f.service->NewStub();
  v1::ListApiKeysResponse list;
  REQUIRE(stub->ListApiKeys(Ctx().get(), v1::ListApiKeysRequest(), &list).ok());
  int admins = 0;
  for (const v1::ApiKey& k : list.api_keys()) admins += k.name() == "bootstrap-admin";
  CHECK(admins == 1);

  // An operator's own key (any 32+ printable characters) becomes admin.
  const std::string dir = f.service->admin_key_file() + ".d";
  REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
  const std::string own = dir + "/own.key";
  std::ofstream(own) << "my-own-admin-key-of-at-least-32-chars!\n";
  ServiceProcessOptions options;
  options.conninfo = f.cluster->ConnInfo();
  options.secret_file = f.service->secret_file();
  options.admin_key_file = own;
  auto replica = ServiceProcess::Start(options);
  REQUIRE(replica.ok());
  CHECK((*replica)->admin_key() == "my-own-admin-key-of-at-least-32-chars!");
  CHECK(Call(*(*replica)->NewStub(), "ListApiKeys").ok());

  // Refusals at start, naming the flag.
  const std::string short_key = dir + "/short.key";
  std::ofstream(short_key) << "too-short\n";
  options.admin_key_file = short_key;
  options.ready_timeout = absl::Seconds(15);
  auto refused = ServiceProcess::Start(options);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()),
             Catch::Contains("--bootstrap_admin_key_file"));
  CHECK_THAT(std::string(refused.status().message()), Catch::Contains("32"));
  CHECK_THAT(std::string(refused.status().message()), !Catch::Contains("too-short"));
  // A revoked bootstrap key is not silently re-enabled.
  v1::ListApiKeysResponse keys;
  REQUIRE(stub->ListApiKeys(Ctx().get(), v1::ListApiKeysRequest(), &keys).ok());
  int64_t own_id = 0;
  for (const v1::ApiKey& k : keys.api_keys()) {
    if (k.name() == "bootstrap-admin" && k.id() != list.api_keys(0).id()) own_id = k.id();
  }
  REQUIRE(own_id != 0);
  v1::RevokeApiKeyRequest revoke;
  revoke.set_id(own_id);
  v1::ApiKey revoked;
  REQUIRE(stub->RevokeApiKey(Ctx().get(), revoke, &revoked).ok());
  options.admin_key_file = own;
  refused = ServiceProcess::Start(options);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()), Catch::Contains("was revoked"));
}

TEST_CASE("the service stops at a secret file others can write and warns about a readable one",
          "[services/shorten/e2e][auth][e2e]") {
  E2eFixture f;
  const std::string dir = f.service->admin_key_file() + ".modes";
  REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
  const auto copy = [&](const std::string& from, const std::string& name, mode_t mode) {
    const std::string to = dir + "/" + name;
    std::ofstream(to) << ReadFile(from);
    REQUIRE(::chmod(to.c_str(), mode) == 0);
    return to;
  };
  ServiceProcessOptions options;
  options.conninfo = f.cluster->ConnInfo();
  options.ready_timeout = absl::Seconds(15);

  // The codec secret, writable by the group.
  options.secret_file = copy(f.service->secret_file(), "codec.secret", 0660);
  options.admin_key_file = f.service->admin_key_file();
  auto refused = ServiceProcess::Start(options);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()),
             Catch::Contains(
                 absl::StrCat(options.secret_file, " is writable by other users (mode 0660)")));
  // The bootstrap admin key, writable by anyone.
  options.secret_file = f.service->secret_file();
  options.admin_key_file = copy(f.service->admin_key_file(), "admin.key", 0606);
  refused = ServiceProcess::Start(options);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()),
             Catch::Contains(absl::StrCat("--bootstrap_admin_key_file: ", options.admin_key_file,
                                          " is writable by other users (mode 0606)")));
  CHECK_THAT(std::string(refused.status().message()), !Catch::Contains(f.service->admin_key()));
  // Readable by anyone: it starts, and says so.
  REQUIRE(::chmod(options.admin_key_file.c_str(), 0644) == 0);
  auto started = ServiceProcess::Start(options);
  REQUIRE(started.ok());
  CHECK_THAT((*started)->Log(),
             Catch::Contains(absl::StrCat("--bootstrap_admin_key_file: ", options.admin_key_file,
                                          " is readable by other users (mode 0644)")));
  CHECK(Call(*(*started)->NewStub(), "ListApiKeys").ok());
}

}  // namespace
}  // namespace shortener::testing
