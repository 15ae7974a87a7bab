// shortenctl commands end to end in process: Run against a fake
// ShortenService on a port of its own (plaintext, or mutual TLS with
// certificates made at test time), checking requests (the API key header
// included), output and exit codes; and usage errors, which never reach a
// server.
#include "services/shortenctl/commands.h"

#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "lib/grpcutil/tls.h"
#include "shortener/v1/shortener.grpc.pb.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_certs.h"

namespace shortener::ctl {
namespace {

// In-memory service: Shorten hands out c1, c2, ...; "ftp:" URLs are refused;
// "slow" as a code sleeps past any test deadline; when `down` every call
// answers UNAVAILABLE. Every call records its authorization header ("" for
// none) and, when `required_key` is set, answers UNAUTHENTICATED unless it
// is "Bearer <required_key>". CreateApiKey hands out keys 1, 2, ...
class FakeShortenService final : public v1::ShortenService::Service {
 public:
  grpc::Status Shorten(grpc::ServerContext* ctx, const v1::ShortenRequest* request,
                       v1::ShortenResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (grpc::Status auth = Authorize(*ctx); !auth.ok()) return auth;
    if (down) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "database is down");
    shorten_requests.push_back(*request);
    return Create(*request, response);
  }

  grpc::Status BatchShorten(grpc::ServerContext* ctx, const v1::BatchShortenRequest* request,
                            v1::BatchShortenResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (grpc::Status auth = Authorize(*ctx); !auth.ok()) return auth;
    batch_sizes.push_back(request->requests_size());
    for (const v1::ShortenRequest& item : request->requests()) {
      batch_items.push_back(item);
      v1::BatchShortenResult* result = response->add_results();
      grpc::Status status = Create(item, result->mutable_response());
      if (!status.ok()) {
        result->mutable_error()->set_code(status.error_code());
        result->mutable_error()->set_message(status.error_message());
      }
    }
    return grpc::Status::OK;
  }

  grpc::Status Resolve(grpc::ServerContext* ctx, const v1::ResolveRequest* request,
                       v1::ResolveResponse* response) override {
    if (request->code() == "slow") std::this_thread::sleep_for(std::chrono::seconds(1));
    std::lock_guard<std::mutex> lock(mu_);
    if (grpc::Status auth = Authorize(*ctx); !auth.ok()) return auth;
    const v1::Link* link = Find(request->code());
    if (link == nullptr) return NotFound(request->code());
    response->set_state(link->state());
    if (link->state() == v1::LINK_STATE_ACTIVE) response->set_long_url(link->long_url());
    response->set_redirect_type(link->redirect_type());
    return grpc::Status::OK;
  }

  grpc::Status GetLink(grpc::ServerContext* ctx, const v1::GetLinkRequest* request,
                       v1::Link* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (grpc::Status auth = Authorize(*ctx); !auth.ok()) return auth;
    const v1::Link* link = Find(request->code());
    if (link == nullptr) return NotFound(request->code());
    *response = *link;
    return grpc::Status::OK;
  }

  grpc::Status Revoke(grpc::ServerContext* ctx, const v1::RevokeRequest* request,
                      v1::Link* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (grpc::Status auth = Authorize(*ctx); !auth.ok()) return auth;
    v1::Link* link = Find(request->code());
    if (link == nullptr) return NotFound(request->code());
    link->set_state(v1::LINK_STATE_REVOKED);
    link->mutable_revoke_time()->set_seconds(1767225600);
    *response = *link;
    return grpc::Status::OK;
  }

  grpc::Status CreateApiKey(grpc::ServerContext* ctx, const v1::CreateApiKeyRequest* request,
                            v1::CreateApiKeyResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (grpc::Status auth = Authorize(*ctx); !auth.ok()) return auth;
    create_key_requests.push_back(*request);
    v1::ApiKey& key = keys_.emplace_back();
    key.set_id(static_cast<int64_t>(keys_.size()));
    key.set_name(request->name());
    key.set_infrastructure(request->infrastructure());
    if (!request->infrastructure()) {
      key.set_tenant(request->tenant().empty() ? request->name() : request->tenant());
    }
    *key.mutable_scopes() = request->scopes();
    *key.mutable_allowed_domains() = request->allowed_domains();
    key.set_rate_per_second(request->rate_per_second());
    key.set_burst(request->burst());
    key.mutable_create_time()->set_seconds(1767225600);
    response->set_key(absl::StrCat(kSecretPrefix, key.id()));
    *response->mutable_api_key() = key;
    return grpc::Status::OK;
  }

  grpc::Status ListApiKeys(grpc::ServerContext* ctx, const v1::ListApiKeysRequest*,
                           v1::ListApiKeysResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (grpc::Status auth = Authorize(*ctx); !auth.ok()) return auth;
    for (const v1::ApiKey& key : keys_) *response->add_api_keys() = key;
    return grpc::Status::OK;
  }

  grpc::Status RevokeApiKey(grpc::ServerContext* ctx, const v1::RevokeApiKeyRequest* request,
                            v1::ApiKey* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (grpc::Status auth = Authorize(*ctx); !auth.ok()) return auth;
    if (request->id() < 1 || request->id() > static_cast<int64_t>(keys_.size())) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          absl::StrCat("api key ", request->id(), " does not exist"));
    }
    v1::ApiKey& key = keys_[request->id() - 1];
    if (!key.has_revoke_time()) key.mutable_revoke_time()->set_seconds(1767229200);
    *response = key;
    return grpc::Status::OK;
  }

  // What the keys CreateApiKey hands out start with (then the id).
  static constexpr char kSecretPrefix[] = "shk_fake_secret_";

  bool down = false;
  std::string required_key;  // empty: every call is let through
  std::vector<v1::ShortenRequest> shorten_requests;
  std::vector<int> batch_sizes;
  std::vector<v1::ShortenRequest> batch_items;  // every item of every BatchShorten
  std::vector<v1::CreateApiKeyRequest> create_key_requests;
  std::vector<std::string> authorizations;  // one per authorized call, in order

 private:
  // Records the call's authorization header and checks it; mu_ held.
  grpc::Status Authorize(const grpc::ServerContext& ctx) {
    auto it = ctx.client_metadata().find("authorization");
    const std::string header =
        it == ctx.client_metadata().end() ? "" : std::string(it->second.data(), it->second.size());
    authorizations.push_back(header);
    if (!required_key.empty() && header != "Bearer " + required_key) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          header.empty() ? "authorization: missing" : "api key unknown");
    }
    return grpc::Status::OK;
  }

  grpc::Status Create(const v1::ShortenRequest& request, v1::ShortenResponse* response) {
    if (absl::StartsWith(request.long_url(), "ftp:")) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "long_url: scheme \"ftp\" is not allowed");
    }
    v1::Link link;
    link.set_code(request.custom_alias().empty() ? absl::StrCat("c", links_.size() + 1)
                                                 : request.custom_alias());
    link.set_short_url("https://sho.rt/" + link.code());
    link.set_long_url(request.long_url());
    link.set_state(v1::LINK_STATE_ACTIVE);
    link.set_redirect_type(request.redirect_type());
    if (request.has_expire_time()) *link.mutable_expire_time() = request.expire_time();
    *link.mutable_labels() = request.labels();
    link.set_owner("anonymous");
    links_.push_back(link);
    response->set_code(link.code());
    response->set_short_url(link.short_url());
    response->set_created(true);
    *response->mutable_link() = link;
    return grpc::Status::OK;
  }

  v1::Link* Find(const std::string& code) {
    for (v1::Link& link : links_) {
      if (link.code() == code) return &link;
    }
    return nullptr;
  }

  static grpc::Status NotFound(const std::string& code) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        absl::StrCat("code \"", code, "\" does not exist"));
  }

  std::mutex mu_;
  std::vector<v1::Link> links_;
  std::vector<v1::ApiKey> keys_;
};

// A fake service on 127.0.0.1:<any port> (with `tls`; default plaintext),
// and shortenctl's Run pointed at it.
class Fixture {
 public:
  explicit Fixture(const grpcutil::ServerTlsOptions& tls = {}) {
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
        grpcutil::MakeServerCredentials(tls);
    REQUIRE(credentials.ok());
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", *credentials, &port);
    builder.RegisterService(&service);
    server_ = builder.BuildAndStart();
    REQUIRE(server_ != nullptr);
    options.service = absl::StrCat("127.0.0.1:", port);
  }
  ~Fixture() {
    server_->Shutdown(absl::ToChronoTime(absl::Now()));
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // Writes `content` to a file `name` in a temp dir of the fixture's own;
  // returns its path.
  std::string WriteFile(const std::string& name, const std::string& content) {
    if (dir_.empty()) {
      char templ[] = "/tmp/ctl_commands_test.XXXXXX";
      REQUIRE(mkdtemp(templ) != nullptr);
      dir_ = templ;
    }
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << content;
    return path;
  }

  int Run(const std::vector<std::string>& args, const std::string& input = "") {
    std::istringstream in(input);
    std::ostringstream out;
    std::ostringstream err;
    const int code = ctl::Run(options, args, {in, out, err});
    stdout_text = out.str();
    stderr_text = err.str();
    return code;
  }

  FakeShortenService service;
  Options options;
  std::string stdout_text;
  std::string stderr_text;

 private:
  std::unique_ptr<grpc::Server> server_;
  std::string dir_;  // for WriteFile; empty until then
};

TEST_CASE("shorten sends the flags and prints the new link", "[services/shortenctl]") {
  Fixture f;
  f.options.shorten.expire = "2027-01-01T00:00:00Z";
  f.options.shorten.redirect = "301";
  f.options.shorten.request_id = "r1";
  REQUIRE(f.Run({"shorten", "https://example.com/"}) == kExitOk);
  CHECK(f.stdout_text ==
        "https://sho.rt/c1\n"
        "  code     c1\n"
        "  long_url https://example.com/\n"
        "  created  yes\n"
        "  expires  2027-01-01T00:00:00Z\n");
  CHECK(f.stderr_text.empty());
  REQUIRE(f.service.shorten_requests.size() == 1);
  const v1::ShortenRequest& sent = f.service.shorten_requests[0];
  CHECK(sent.expire_time().seconds() == 1798761600);
  CHECK(sent.redirect_type() == v1::REDIRECT_TYPE_MOVED_PERMANENTLY);
  CHECK(sent.request_id() == "r1");
}

TEST_CASE("shorten and batch send the --label labels and shorten prints them",
          "[services/shortenctl]") {
  Fixture f;
  f.options.labels = "campaign=spring-sale,channel=sms";
  REQUIRE(f.Run({"shorten", "https://example.com/"}) == kExitOk);
  CHECK(absl::StrContains(f.stdout_text, "  labels   campaign=spring-sale,channel=sms\n"));
  REQUIRE(f.service.shorten_requests.size() == 1);
  const auto& sent = f.service.shorten_requests[0].labels();
  CHECK(sent.size() == 2);
  CHECK(sent.at("campaign") == "spring-sale");
  CHECK(sent.at("channel") == "sms");

  f.options.labels = "campaign=spring-sale";
  REQUIRE(f.Run({"batch", "-"}, "https://example.com/1\nhttps://example.com/2\n") == kExitOk);
  REQUIRE(f.service.batch_items.size() == 2);
  for (const v1::ShortenRequest& item : f.service.batch_items) {
    CHECK(item.labels().size() == 1);
    CHECK(item.labels().at("campaign") == "spring-sale");
  }

  f.options.labels = "campaign";
  CHECK(f.Run({"shorten", "https://example.com/"}) == kExitUsage);
  CHECK(absl::StrContains(f.stderr_text, "--label: expected KEY=VALUE, got \"campaign\""));
  CHECK(f.Run({"resolve", "c1"}) == kExitUsage);
  CHECK(absl::StrContains(
      f.stderr_text,
      "--label applies to shorten, batch, stats, list, update, revoke and delete only"));
  CHECK(f.service.shorten_requests.size() == 1);
}

TEST_CASE("resolve, get and revoke print the link, and with --json one object",
          "[services/shortenctl]") {
  Fixture f;
  f.options.shorten.alias = "sale";
  REQUIRE(f.Run({"shorten", "https://example.com/"}) == kExitOk);
  f.options.shorten = ShortenFlags();

  REQUIRE(f.Run({"resolve", "sale"}) == kExitOk);
  CHECK(absl::StartsWith(f.stdout_text, "sale\n  state    ACTIVE\n"));
  REQUIRE(f.Run({"revoke", "sale"}) == kExitOk);
  CHECK(absl::StrContains(f.stdout_text, "  state    REVOKED\n"));
  CHECK(absl::StrContains(f.stdout_text, "  revoked  2026-01-01T00:00:00Z\n"));
  f.options.json = true;
  REQUIRE(f.Run({"get", "sale"}) == kExitOk);
  CHECK(absl::StartsWith(f.stdout_text, "{\"code\":\"sale\","));
  CHECK(absl::StrContains(f.stdout_text, "\"state\":\"LINK_STATE_REVOKED\""));
  CHECK(f.stdout_text.find('\n') == f.stdout_text.size() - 1);
}

TEST_CASE("a server error prints its code name and message and exits 1", "[services/shortenctl]") {
  Fixture f;
  CHECK(f.Run({"resolve", "abc"}) == kExitServiceError);
  CHECK(f.stdout_text.empty());
  CHECK(f.stderr_text == "shortenctl: NOT_FOUND: code \"abc\" does not exist\n");
  CHECK(f.Run({"shorten", "ftp://example.com/"}) == kExitServiceError);
  CHECK(f.stderr_text == "shortenctl: INVALID_ARGUMENT: long_url: scheme \"ftp\" is not allowed\n");
}

TEST_CASE("UNAVAILABLE from the server comes with the hint", "[services/shortenctl]") {
  Fixture f;
  f.service.down = true;
  CHECK(f.Run({"shorten", "https://example.com/"}) == kExitServiceError);
  CHECK(f.stderr_text ==
        "shortenctl: UNAVAILABLE: database is down\n"
        "shortenctl: is shorten-service running at " +
            f.options.service + "?\n");
}

TEST_CASE("a call slower than --timeout fails with DEADLINE_EXCEEDED", "[services/shortenctl]") {
  Fixture f;
  f.options.timeout = absl::Milliseconds(200);
  const absl::Time start = absl::Now();
  CHECK(f.Run({"resolve", "slow"}) == kExitServiceError);
  CHECK(absl::Now() - start < absl::Seconds(1.5));
  CHECK(absl::StartsWith(f.stderr_text, "shortenctl: DEADLINE_EXCEEDED: "));
}

TEST_CASE("batch sends chunks of 1000 and prints a line per URL in order",
          "[services/shortenctl]") {
  Fixture f;
  std::string input = "# campaign links\n\n";
  for (int i = 0; i < 2500; ++i) {
    absl::StrAppend(&input, i == 1234 ? "ftp://bad/" : absl::StrCat("https://e.com/", i), "\n");
  }
  f.options.shorten.redirect = "307";
  CHECK(f.Run({"batch", "-"}, input) == kExitServiceError);  // one URL failed
  CHECK(f.service.batch_sizes == std::vector<int>{1000, 1000, 500});
  std::vector<std::string> lines = absl::StrSplit(f.stdout_text, '\n', absl::SkipEmpty());
  INFO(lines.front() << "\n" << lines.back());
  REQUIRE(lines.size() == 2500);
  CHECK(lines[0] == "https://sho.rt/c1\thttps://e.com/0");
  CHECK(lines[1234] ==
        "error: INVALID_ARGUMENT: long_url: scheme \"ftp\" is not allowed\tftp://bad/");
  CHECK(lines[2499] == "https://sho.rt/c2499\thttps://e.com/2499");
  CHECK(f.stderr_text == "shortenctl: 1 of 2500 URLs failed\n");
}

TEST_CASE("batch of good URLs exits 0 and with --json prints a result object per URL",
          "[services/shortenctl]") {
  Fixture f;
  f.options.json = true;
  CHECK(f.Run({"batch", "-"}, "https://a.com/\n  https://b.com/  \n") == kExitOk);
  std::vector<std::string> lines = absl::StrSplit(f.stdout_text, '\n', absl::SkipEmpty());
  REQUIRE(lines.size() == 2);
  CHECK(absl::StartsWith(lines[1], "{\"response\":{\"code\":\"c2\""));
  CHECK(absl::StrContains(lines[1], "\"long_url\":\"https://b.com/\""));
}

TEST_CASE("usage errors exit 2 with a usage line and never call the server",
          "[services/shortenctl]") {
  Fixture f;
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"frob"}, "unknown command \"frob\""},
      {{"shorten"}, "shorten needs a URL"},
      {{"shorten", "a", "b"}, "shorten takes one URL"},
      {{"resolve"}, "resolve takes one CODE, got 0 arguments"},
      {{"get", "a", "b"}, "get takes one CODE, got 2 arguments"},
      {{"batch"}, "batch takes one FILE"},
      {{"batch", "/nonexistent/urls.txt"}, "cannot open /nonexistent/urls.txt"},
  };
  for (const Case& c : cases) {
    INFO(absl::StrJoin(c.args, " "));
    CHECK(f.Run(c.args) == kExitUsage);
    CHECK(absl::StartsWith(f.stderr_text, "shortenctl: " + c.message));
    CHECK(absl::StrContains(f.stderr_text, "\nusage: shortenctl"));
  }
  f.options.shorten.expire = "later";
  CHECK(f.Run({"shorten", "https://example.com/"}) == kExitUsage);
  CHECK(absl::StartsWith(f.stderr_text, "shortenctl: --expire: \"later\" is neither"));
  CHECK(f.Run({"batch", "-"}, "https://example.com/\n") == kExitUsage);
  f.options.shorten = ShortenFlags();
  f.options.shorten.alias = "x";
  CHECK(f.Run({"revoke", "abc"}) == kExitUsage);
  CHECK(f.Run({"batch", "-"}) == kExitUsage);
  CHECK(f.service.shorten_requests.empty());
  CHECK(f.service.batch_sizes.empty());
}

TEST_CASE("no command prints the list of commands and exits 2", "[services/shortenctl]") {
  Fixture f;
  CHECK(f.Run({}) == kExitUsage);
  for (const char* command : {"shorten URL", "batch FILE", "resolve CODE", "get CODE",
                              "revoke CODE", "keys create", "keys list", "keys revoke ID"}) {
    CHECK(absl::StrContains(f.stderr_text, command));
  }
}

TEST_CASE("a dead service is a quick UNAVAILABLE with the hint", "[services/shortenctl]") {
  Fixture f;
  f.options.service = absl::StrCat("127.0.0.1:", testing::PickUnusedPort());
  const absl::Time start = absl::Now();
  CHECK(f.Run({"get", "abc"}) == kExitServiceError);
  CHECK(absl::Now() - start < absl::Seconds(2));
  CHECK(absl::StartsWith(f.stderr_text, "shortenctl: UNAVAILABLE: cannot connect to "));
  CHECK(absl::StrContains(f.stderr_text,
                          "shortenctl: is shorten-service running at " + f.options.service + "?"));
}

TEST_CASE("every call carries the API key as a bearer authorization header",
          "[services/shortenctl]") {
  Fixture f;
  f.options.api_key = "shk_from_env";
  f.service.required_key = "shk_from_env";
  REQUIRE(f.Run({"shorten", "https://example.com/"}) == kExitOk);
  REQUIRE(f.Run({"resolve", "c1"}) == kExitOk);
  REQUIRE(f.Run({"keys", "list"}) == kExitOk);
  CHECK(f.service.authorizations == std::vector<std::string>(3, "Bearer shk_from_env"));
}

TEST_CASE("the key comes from --api_key_file, which wins over SHORTENER_API_KEY",
          "[services/shortenctl]") {
  Fixture f;
  f.options.api_key_file = f.WriteFile("key", "shk_from_file\n");
  REQUIRE(f.Run({"resolve", "nope"}) == kExitServiceError);  // NOT_FOUND, but sent
  f.options.api_key = "shk_from_env";
  REQUIRE(f.Run({"resolve", "nope"}) == kExitServiceError);
  f.options.api_key_file.clear();
  REQUIRE(f.Run({"resolve", "nope"}) == kExitServiceError);
  CHECK(f.service.authorizations == std::vector<std::string>{"Bearer shk_from_file",
                                                             "Bearer shk_from_file",
                                                             "Bearer shk_from_env"});
}

TEST_CASE("without a key the call goes out bare and UNAUTHENTICATED comes with the hint",
          "[services/shortenctl]") {
  Fixture f;
  f.service.required_key = "shk_right";
  CHECK(f.Run({"get", "abc"}) == kExitServiceError);
  CHECK(f.service.authorizations == std::vector<std::string>{""});
  CHECK(f.stderr_text ==
        "shortenctl: UNAUTHENTICATED: authorization: missing\n"
        "shortenctl: pass --api_key_file=PATH or set SHORTENER_API_KEY\n");
  f.options.api_key = "shk_wrong";
  CHECK(f.Run({"keys", "list"}) == kExitServiceError);
  CHECK(f.stderr_text ==
        "shortenctl: UNAUTHENTICATED: api key unknown\n"
        "shortenctl: pass --api_key_file=PATH or set SHORTENER_API_KEY\n");
  CHECK_FALSE(absl::StrContains(f.stderr_text, "shk_wrong"));
}

TEST_CASE("a bad key source is a usage error naming it, and nothing is sent",
          "[services/shortenctl]") {
  Fixture f;
  f.options.api_key = "shk_from_env";  // the bad file still wins
  f.options.api_key_file = f.WriteFile("key", "shk_with a space\n");
  CHECK(f.Run({"resolve", "abc"}) == kExitUsage);
  CHECK(absl::StartsWith(f.stderr_text, "shortenctl: --api_key_file: "));
  CHECK(absl::StrContains(f.stderr_text, "\nusage: shortenctl"));
  CHECK_FALSE(absl::StrContains(f.stderr_text, "shk_"));
  f.options.api_key_file = "/nonexistent/shortener.key";
  CHECK(f.Run({"resolve", "abc"}) == kExitUsage);
  CHECK(absl::StartsWith(f.stderr_text,
                         "shortenctl: --api_key_file: cannot read /nonexistent/shortener.key"));
  f.options.api_key_file.clear();
  f.options.api_key = "shk_two\nlines";
  CHECK(f.Run({"resolve", "abc"}) == kExitUsage);
  CHECK(absl::StartsWith(f.stderr_text, "shortenctl: SHORTENER_API_KEY holds characters"));
  CHECK_FALSE(absl::StrContains(f.stderr_text, "shk_"));
  CHECK(f.service.authorizations.empty());
}

TEST_CASE("keys create sends the flags, prints only the key on stdout, the note on stderr",
          "[services/shortenctl]") {
  Fixture f;
  f.options.keys.name = "campaign";
  f.options.keys.scopes = "shorten,stats";
  f.options.keys.domains = "example.com";
  f.options.keys.rate = "5";
  f.options.keys.burst = "20";
  REQUIRE(f.Run({"keys", "create"}) == kExitOk);
  CHECK(f.stdout_text == std::string(FakeShortenService::kSecretPrefix) + "1\n");
  CHECK(f.stderr_text ==
        "api key 1 \"campaign\" created: tenant campaign, scopes shorten,stats, domains "
        "example.com, rate 5/s burst 20; store the key now: it is not shown again\n");
  REQUIRE(f.service.create_key_requests.size() == 1);
  const v1::CreateApiKeyRequest& sent = f.service.create_key_requests[0];
  CHECK(sent.name() == "campaign");
  CHECK(sent.scopes_size() == 2);
  CHECK(sent.allowed_domains_size() == 1);
  CHECK(sent.rate_per_second() == 5);
  CHECK(sent.burst() == 20);

  // The key on stdout alone makes a key file for the next call.
  const std::string service = f.options.service;
  f.options = Options();
  f.options.service = service;
  f.options.api_key_file = f.WriteFile("new.key", f.stdout_text);
  f.service.required_key = std::string(FakeShortenService::kSecretPrefix) + "1";
  CHECK(f.Run({"shorten", "https://example.com/"}) == kExitOk);
}

TEST_CASE("keys create --json prints the key and its record on one line", "[services/shortenctl]") {
  Fixture f;
  f.options.json = true;
  f.options.keys.name = "edge";
  f.options.keys.scopes = "resolve,record_clicks,watch_invalidations";
  f.options.keys.infrastructure = true;
  REQUIRE(f.Run({"keys", "create"}) == kExitOk);
  REQUIRE(f.service.create_key_requests.size() == 1);
  CHECK(f.service.create_key_requests[0].infrastructure());
  CHECK(absl::StartsWith(f.stdout_text,
                         absl::StrCat("{\"key\":\"", FakeShortenService::kSecretPrefix, "1\",")));
  CHECK(absl::StrContains(f.stdout_text, "\"api_key\":{\"id\":\"1\",\"name\":\"edge\""));
  CHECK(f.stdout_text.find('\n') == f.stdout_text.size() - 1);
  CHECK(f.stderr_text.empty());
}

TEST_CASE("keys list shows every key without its secret and keys revoke prints the record",
          "[services/shortenctl]") {
  Fixture f;
  f.options.keys.scopes = "shorten";
  for (const char* name : {"alpha", "beta"}) {
    f.options.keys.name = name;
    REQUIRE(f.Run({"keys", "create"}) == kExitOk);
  }
  f.options.keys = KeyFlags();
  REQUIRE(f.Run({"keys", "revoke", "2"}) == kExitOk);
  CHECK(absl::StartsWith(f.stdout_text, "api key 2 \"beta\"\n"));
  CHECK(absl::StrContains(f.stdout_text, "  revoked  2026-01-01T01:00:00Z\n"));

  REQUIRE(f.Run({"keys", "list"}) == kExitOk);
  std::vector<std::string> lines = absl::StrSplit(f.stdout_text, '\n', absl::SkipEmpty());
  REQUIRE(lines.size() == 3);
  CHECK(absl::StartsWith(lines[0], "ID  NAME   TENANT  SCOPES   DOMAINS  RATE"));
  CHECK(absl::StartsWith(lines[1], "1   alpha  alpha   shorten  any      unlimited"));
  CHECK(absl::EndsWith(lines[1], "  -"));
  CHECK(absl::EndsWith(lines[2], "2026-01-01T01:00:00Z"));
  CHECK_FALSE(absl::StrContains(f.stdout_text, FakeShortenService::kSecretPrefix));

  f.options.json = true;
  REQUIRE(f.Run({"keys", "list"}) == kExitOk);
  CHECK(std::vector<std::string>(absl::StrSplit(f.stdout_text, '\n', absl::SkipEmpty())).size() ==
        2);
  CHECK_FALSE(absl::StrContains(f.stdout_text, FakeShortenService::kSecretPrefix));

  CHECK(f.Run({"keys", "revoke", "9"}) == kExitServiceError);
  CHECK(f.stderr_text == "shortenctl: NOT_FOUND: api key 9 does not exist\n");
}

TEST_CASE("keys usage errors exit 2 with a usage line and never call the server",
          "[services/shortenctl]") {
  Fixture f;
  struct Case {
    std::vector<std::string> args;
    KeyFlags keys;
    std::string message;
    std::string usage;
  };
  const KeyFlags none;
  const KeyFlags named{"n", "", "", "", "", ""};
  const KeyFlags scoped{"n", "", "shorten", "", "", ""};
  KeyFlags infrastructure;
  infrastructure.infrastructure = true;
  // `usage` is what the usage line starts with after "usage: shortenctl ".
  const std::vector<Case> cases = {
      {{"keys"}, none, "keys needs a subcommand", "keys create"},
      {{"keys", "frob"}, none, "unknown keys subcommand \"frob\"", "keys create"},
      {{"keys", "create"}, none, "keys create needs --name", "keys create"},
      {{"keys", "create"}, named, "keys create needs --scopes", "keys create"},
      {{"keys", "create", "edge"}, scoped, "keys create takes flags only", "keys create"},
      {{"keys", "create"}, {"n", "", "shorten", "", "lots", ""}, "--rate", "keys create"},
      {{"keys", "list", "all"}, none, "keys list takes no arguments", "keys list"},
      {{"keys", "list"}, named, "--name, --tenant, --scopes", "keys create"},
      {{"keys", "revoke"}, none, "keys revoke takes one ID, got 0", "keys revoke ID"},
      {{"keys", "revoke", "abc"}, none, "keys revoke: ID must be a positive", "keys revoke ID"},
      {{"keys", "revoke", "0"}, none, "keys revoke: ID must be a positive", "keys revoke ID"},
      {{"shorten", "https://e.com/"}, scoped, "--name, --tenant, --scopes", "shorten URL"},
      {{"resolve", "abc"}, named, "--name, --tenant, --scopes", "resolve CODE"},
      {{"keys", "list"},
       infrastructure,
       "--name, --tenant, --scopes, --domains, --rate, --burst "
       "and --infrastructure apply to keys create only",
       "keys create"},
  };
  for (const Case& c : cases) {
    INFO(absl::StrJoin(c.args, " ") << " --name=" << c.keys.name << " --scopes=" << c.keys.scopes);
    f.options.keys = c.keys;
    CHECK(f.Run(c.args) == kExitUsage);
    CHECK(absl::StartsWith(f.stderr_text, "shortenctl: " + c.message));
    CHECK(absl::StrContains(f.stderr_text, "\nusage: shortenctl " + c.usage));
  }
  f.options.keys = scoped;
  f.options.shorten.alias = "x";
  CHECK(f.Run({"keys", "create"}) == kExitUsage);
  CHECK(
      absl::StartsWith(f.stderr_text,
                       "shortenctl: --alias, --expire, --redirect, --force_new, "
                       "--request_id and --max_clicks apply to shorten, batch and update only\n"));
  CHECK(f.service.authorizations.empty());
  CHECK(f.service.create_key_requests.empty());
}

TEST_CASE("commands reach a mutual TLS service with the client certificate flags",
          "[services/shortenctl][tls]") {
  absl::StatusOr<std::unique_ptr<testing::TestCerts>> certs = testing::TestCerts::Create();
  REQUIRE(certs.ok());
  Fixture f((*certs)->ServerMutualTls());
  f.options.tls = (*certs)->ClientMutualTls();
  REQUIRE(f.Run({"shorten", "https://example.com/"}) == kExitOk);
  CHECK(absl::StartsWith(f.stdout_text, "https://sho.rt/c1\n"));
  CHECK(f.Run({"get", "c1"}) == kExitOk);

  f.options.tls = (*certs)->ClientWithoutCert();
  CHECK(f.Run({"get", "c1"}) == kExitServiceError);
  CHECK(absl::StrContains(f.stderr_text, "TLS handshake failed"));
  f.options.tls = grpcutil::ClientTlsOptions();
  CHECK(f.Run({"get", "c1"}) == kExitServiceError);
  CHECK(absl::StartsWith(f.stderr_text, "shortenctl: UNAVAILABLE: cannot connect to"));
}

TEST_CASE("TLS flags that do not go together are a usage error naming the flag",
          "[services/shortenctl][tls]") {
  Fixture f;
  f.options.tls.key_file = "/k.pem";
  CHECK(f.Run({"get", "c1"}) == kExitUsage);
  CHECK(absl::StartsWith(f.stderr_text, "shortenctl: --service_tls_key needs --service_tls_cert"));
  f.options.tls = grpcutil::ClientTlsOptions();
  f.options.tls.server_name = "shorten.internal";
  CHECK(f.Run({"get", "c1"}) == kExitUsage);
  CHECK(absl::StartsWith(f.stderr_text,
                         "shortenctl: --service_tls_server_name needs --service_tls_ca"));
  // A file that is not there is found when connecting: exit 1, like an
  // unreachable service, naming the flag.
  f.options.tls = grpcutil::ClientTlsOptions();
  f.options.tls.ca_file = "/nonexistent/ca.pem";
  CHECK(f.Run({"get", "c1"}) == kExitServiceError);
  CHECK(f.stderr_text ==
        "shortenctl: NOT_FOUND: --service_tls_ca: no such file /nonexistent/ca.pem\n");
}

}  // namespace
}  // namespace shortener::ctl
