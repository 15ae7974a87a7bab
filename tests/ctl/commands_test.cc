// shortenctl commands end to end in process: Run against a fake
// ShortenService on a port of its own (plaintext, or mutual TLS with
// certificates made at test time), checking requests, output and exit codes;
// and usage errors, which never reach a server.
#include "services/shortenctl/commands.h"

#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>
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
// answers UNAVAILABLE.
class FakeShortenService final : public v1::ShortenService::Service {
 public:
  grpc::Status Shorten(grpc::ServerContext*, const v1::ShortenRequest* request,
                       v1::ShortenResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (down) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "database is down");
    shorten_requests.push_back(*request);
    return Create(*request, response);
  }

  grpc::Status BatchShorten(grpc::ServerContext*, const v1::BatchShortenRequest* request,
                            v1::BatchShortenResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    batch_sizes.push_back(request->requests_size());
    for (const v1::ShortenRequest& item : request->requests()) {
      v1::BatchShortenResult* result = response->add_results();
      grpc::Status status = Create(item, result->mutable_response());
      if (!status.ok()) {
        result->mutable_error()->set_code(status.error_code());
        result->mutable_error()->set_message(status.error_message());
      }
    }
    return grpc::Status::OK;
  }

  grpc::Status Resolve(grpc::ServerContext*, const v1::ResolveRequest* request,
                       v1::ResolveResponse* response) override {
    if (request->code() == "slow") std::this_thread::sleep_for(std::chrono::seconds(1));
    std::lock_guard<std::mutex> lock(mu_);
    const v1::Link* link = Find(request->code());
    if (link == nullptr) return NotFound(request->code());
    response->set_state(link->state());
    if (link->state() == v1::LINK_STATE_ACTIVE) response->set_long_url(link->long_url());
    response->set_redirect_type(link->redirect_type());
    return grpc::Status::OK;
  }

  grpc::Status GetLink(grpc::ServerContext*, const v1::GetLinkRequest* request,
                       v1::Link* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    const v1::Link* link = Find(request->code());
    if (link == nullptr) return NotFound(request->code());
    *response = *link;
    return grpc::Status::OK;
  }

  grpc::Status Revoke(grpc::ServerContext*, const v1::RevokeRequest* request,
                      v1::Link* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    v1::Link* link = Find(request->code());
    if (link == nullptr) return NotFound(request->code());
    link->set_state(v1::LINK_STATE_REVOKED);
    link->mutable_revoke_time()->set_seconds(1767225600);
    *response = *link;
    return grpc::Status::OK;
  }

  bool down = false;
  std::vector<v1::ShortenRequest> shorten_requests;
  std::vector<int> batch_sizes;

 private:
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
  ~Fixture() { server_->Shutdown(absl::ToChronoTime(absl::Now())); }

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
};

TEST_CASE("shorten sends the flags and prints the new link", "[ctl]") {
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

TEST_CASE("resolve, get and revoke print the link; --json prints one object", "[ctl]") {
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

TEST_CASE("a server error prints its code name and message and exits 1", "[ctl]") {
  Fixture f;
  CHECK(f.Run({"resolve", "abc"}) == kExitServiceError);
  CHECK(f.stdout_text.empty());
  CHECK(f.stderr_text == "shortenctl: NOT_FOUND: code \"abc\" does not exist\n");
  CHECK(f.Run({"shorten", "ftp://example.com/"}) == kExitServiceError);
  CHECK(f.stderr_text == "shortenctl: INVALID_ARGUMENT: long_url: scheme \"ftp\" is not allowed\n");
}

TEST_CASE("UNAVAILABLE from the server comes with the hint", "[ctl]") {
  Fixture f;
  f.service.down = true;
  CHECK(f.Run({"shorten", "https://example.com/"}) == kExitServiceError);
  CHECK(f.stderr_text ==
        "shortenctl: UNAVAILABLE: database is down\n"
        "shortenctl: is shorten-service running at " +
            f.options.service + "?\n");
}

TEST_CASE("a call slower than --timeout fails with DEADLINE_EXCEEDED", "[ctl]") {
  Fixture f;
  f.options.timeout = absl::Milliseconds(200);
  const absl::Time start = absl::Now();
  CHECK(f.Run({"resolve", "slow"}) == kExitServiceError);
  CHECK(absl::Now() - start < absl::Seconds(1.5));
  CHECK(absl::StartsWith(f.stderr_text, "shortenctl: DEADLINE_EXCEEDED: "));
}

TEST_CASE("batch sends chunks of 1000 and prints a line per URL in order", "[ctl]") {
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

TEST_CASE("batch of good URLs exits 0; --json prints a result object per URL", "[ctl]") {
  Fixture f;
  f.options.json = true;
  CHECK(f.Run({"batch", "-"}, "https://a.com/\n  https://b.com/  \n") == kExitOk);
  std::vector<std::string> lines = absl::StrSplit(f.stdout_text, '\n', absl::SkipEmpty());
  REQUIRE(lines.size() == 2);
  CHECK(absl::StartsWith(lines[1], "{\"response\":{\"code\":\"c2\""));
  CHECK(absl::StrContains(lines[1], "\"long_url\":\"https://b.com/\""));
}

TEST_CASE("usage errors exit 2 with a usage line and never call the server", "[ctl]") {
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

TEST_CASE("no command prints the list of commands and exits 2", "[ctl]") {
  Fixture f;
  CHECK(f.Run({}) == kExitUsage);
  for (const char* command :
       {"shorten URL", "batch FILE", "resolve CODE", "get CODE", "revoke CODE"}) {
    CHECK(absl::StrContains(f.stderr_text, command));
  }
}

TEST_CASE("a dead service is a quick UNAVAILABLE with the hint", "[ctl]") {
  Fixture f;
  f.options.service = absl::StrCat("127.0.0.1:", testing::PickUnusedPort());
  const absl::Time start = absl::Now();
  CHECK(f.Run({"get", "abc"}) == kExitServiceError);
  CHECK(absl::Now() - start < absl::Seconds(2));
  CHECK(absl::StartsWith(f.stderr_text, "shortenctl: UNAVAILABLE: cannot connect to "));
  CHECK(absl::StrContains(f.stderr_text,
                          "shortenctl: is shorten-service running at " + f.options.service + "?"));
}

TEST_CASE("commands reach a mutual TLS service with the client certificate flags", "[ctl][tls]") {
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

TEST_CASE("TLS flags that do not go together are a usage error naming the flag", "[ctl][tls]") {
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
