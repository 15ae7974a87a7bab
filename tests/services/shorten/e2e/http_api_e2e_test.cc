// The HTTP/JSON API of the real shorten-service (--http_listen) on a private
// PostgreSQL cluster, driven with the curl binary as its users would:
// every route, every error class, and the listener's bounds.
#include <google/protobuf/util/json_util.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/rpc/status.pb.h"
#include "shortener/v1/shortener.pb.h"
#include "tests/services/shorten/e2e/e2e_fixture.h"
#include "tests/support/curl.h"
#include "tests/support/http_client.h"
#include "tests/support/orphan_reaper.h"
#include "tests/support/qr_decode.h"

namespace shortener::testing {
namespace {

// The service with its HTTP API on a free port, and curl pointed at it.
struct HttpFixture : E2eFixture {
  explicit HttpFixture(std::vector<std::string> extra = {})
      : E2eFixture(WithHttp(std::move(extra))) {
    const std::string kLine = "HTTP/JSON API on 127.0.0.1:";
    const std::string log = service->Log();
    const size_t at = log.rfind(kLine);
    INFO(log);
    REQUIRE(at != std::string::npos);
    const size_t end = log.find(' ', at + kLine.size());
    REQUIRE(absl::SimpleAtoi(log.substr(at + kLine.size(), end - at - kLine.size()), &port));
    admin_key = service->admin_key();
  }

  static std::vector<std::string> WithHttp(std::vector<std::string> extra) {
    extra.insert(extra.begin(), "--http_listen=127.0.0.1:0");
    return extra;
  }

  std::string Url(const std::string& target) const {
    return absl::StrCat("http://127.0.0.1:", port, target);
  }

  // curl -X METHOD [-H Authorization] [--data-binary BODY -H Content-Type]
  // URL, with `key` ("" for none).
  CurlResponse Call(const std::string& method, const std::string& target,
                    const std::string& body = "", const std::string& key = "-",
                    std::vector<std::string> extra = {}) const {
    std::vector<std::string> args = {"-X", method};
    const std::string& bearer = key == "-" ? admin_key : key;
    if (!bearer.empty()) args.insert(args.end(), {"-H", "Authorization: Bearer " + bearer});
    if (!body.empty()) {
      args.insert(args.end(), {"-H", "Content-Type: application/json", "--data-binary", body});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(Url(target));
    absl::StatusOr<CurlResponse> response = Curl(args);
    INFO(method << " " << target);
    REQUIRE(response.ok());
    return *std::move(response);
  }

  int port = 0;
  std::string admin_key;
};

template <typename Message>
Message Parse(const CurlResponse& response) {
  Message message;
  INFO(response.body);
  REQUIRE(google::protobuf::util::JsonStringToMessage(response.body, &message).ok());
  return message;
}

// An error answer: its HTTP status, google.rpc.Status JSON with the gRPC
// code, and a message containing `words`.
void CheckError(const CurlResponse& response, int http_status, absl::StatusCode code,
                const std::string& words) {
  INFO(response.body);
  CHECK(response.status == http_status);
  CHECK(response.Header("content-type") == "application/json");
  const google::rpc::Status status = Parse<google::rpc::Status>(response);
  CHECK(status.code() == static_cast<int>(code));
  CHECK_THAT(status.message(), Catch::Contains(words));
  CHECK(absl::StrContains(response.body, "\"details\":[]"));
}

TEST_CASE(
    "http: links by curl: created 201 with Location, de-duplicated 200, read, listed, "
    "changed, revoked, resolved",
    "[services/shorten/e2e][http][pg][e2e]") {
  HttpFixture f;
  CurlResponse created = f.Call("POST", "/v1/links", R"({"longUrl":"https://example.com/a"})");
  REQUIRE(created.status == 201);
  const v1::ShortenResponse link = Parse<v1::ShortenResponse>(created);
  CHECK(link.created());
  CHECK(created.Header("location") == "/v1/links/" + link.code());
  CHECK(link.short_url() == "https://sho.rt/" + link.code());
  CHECK(created.Header("content-type") == "application/json");

  CurlResponse again = f.Call("POST", "/v1/links", R"({"long_url":"https://example.com/a"})");
  CHECK(again.status == 200);
  CHECK(Parse<v1::ShortenResponse>(again).code() == link.code());
  CHECK(again.Header("location").empty());

  CurlResponse got = f.Call("GET", "/v1/links/" + link.code() + "?view=LINK_VIEW_FULL");
  REQUIRE(got.status == 200);
  CHECK(Parse<v1::Link>(got).long_url() == "https://example.com/a");

  for (int i = 0; i < 3; ++i) {
    REQUIRE(f.Call("POST", "/v1/links",
                   absl::StrCat(R"({"longUrl":"https://example.com/w)", i,
                                R"(","labels":{"team":"web"}})"))
                .status == 201);
  }
  CurlResponse page = f.Call("GET", "/v1/links?filter=labels.team%3D%22web%22&pageSize=2");
  REQUIRE(page.status == 200);
  const v1::ListLinksResponse first = Parse<v1::ListLinksResponse>(page);
  CHECK(first.links_size() == 2);
  REQUIRE_FALSE(first.next_page_token().empty());
  page = f.Call("GET", "/v1/links?filter=labels.team%3D%22web%22&pageSize=2&pageToken=" +
                           first.next_page_token());
  REQUIRE(page.status == 200);
  const v1::ListLinksResponse second = Parse<v1::ListLinksResponse>(page);
  CHECK(second.links_size() == 1);
  CHECK(second.links(0).long_url() == "https://example.com/w0");

  CurlResponse updated = f.Call("PATCH", "/v1/links/" + link.code() + "?updateMask=longUrl",
                                R"({"longUrl":"https://example.com/b"})");
  REQUIRE(updated.status == 200);
  CHECK(Parse<v1::Link>(updated).long_url() == "https://example.com/b");

  CurlResponse revoked = f.Call("POST", "/v1/links/" + link.code() + ":revoke");
  REQUIRE(revoked.status == 200);
  CHECK(Parse<v1::Link>(revoked).state() == v1::LINK_STATE_REVOKED);
  CurlResponse resolved = f.Call("GET", "/v1/links/" + link.code() + ":resolve");
  REQUIRE(resolved.status == 200);
  CHECK(Parse<v1::ResolveResponse>(resolved).state() == v1::LINK_STATE_REVOKED);

  CurlResponse batch =
      f.Call("POST", "/v1/links:batchShorten",
             R"({"requests":[{"longUrl":"https://example.com/x"},{"longUrl":"ftp://bad"}]})");
  REQUIRE(batch.status == 200);
  CHECK(Parse<v1::BatchShortenResponse>(batch).results_size() == 2);
}

TEST_CASE("http: links deleted one by one and in bulk by curl; campaigns revoked in pages",
          "[services/shorten/e2e][http][pg][e2e]") {
  HttpFixture f;
  CurlResponse created = f.Call("POST", "/v1/links", R"({"longUrl":"https://example.com/del"})");
  REQUIRE(created.status == 201);
  const std::string code = Parse<v1::ShortenResponse>(created).code();
  CurlResponse deleted = f.Call("DELETE", "/v1/links/" + code);
  INFO(deleted.body);
  CHECK(deleted.status == 200);
  CHECK(deleted.body == "{}");
  CheckError(f.Call("GET", "/v1/links/" + code), 404, absl::StatusCode::kNotFound,
             "does not exist");
  CheckError(f.Call("DELETE", "/v1/links/" + code), 404, absl::StatusCode::kNotFound,
             "does not exist");

  std::vector<std::string> campaign;
  for (int i = 0; i < 5; ++i) {
    CurlResponse made = f.Call("POST", "/v1/links",
                               absl::StrCat(R"({"longUrl":"https://example.com/camp)", i,
                                            R"(","labels":{"campaign":"http"}})"));
    REQUIRE(made.status == 201);
    campaign.push_back(Parse<v1::ShortenResponse>(made).code());
  }
  // Revoked two per call, following nextPageToken.
  std::vector<std::string> revoked;
  std::string token;
  for (int call = 0; call < 10; ++call) {
    CurlResponse page = f.Call("POST", "/v1/links:revoke",
                               absl::StrCat(R"({"filter":"labels.campaign = \"http\"",)",
                                            R"("pageSize":2,"pageToken":")", token, R"("})"));
    REQUIRE(page.status == 200);
    const v1::RevokeLinksResponse answer = Parse<v1::RevokeLinksResponse>(page);
    revoked.insert(revoked.end(), answer.codes().begin(), answer.codes().end());
    token = answer.next_page_token();
    if (token.empty()) break;
  }
  CHECK(token.empty());
  CHECK(std::set<std::string>(revoked.begin(), revoked.end()) ==
        std::set<std::string>(campaign.begin(), campaign.end()));
  CurlResponse all = f.Call("POST", "/v1/links:delete",
                            R"({"filter":"labels.campaign = \"http\" AND state = REVOKED"})");
  REQUIRE(all.status == 200);
  CHECK(Parse<v1::DeleteLinksResponse>(all).codes_size() == 5);
  CheckError(f.Call("GET", "/v1/links/" + campaign[0] + ":resolve"), 404,
             absl::StatusCode::kNotFound, "does not exist");
  CheckError(f.Call("POST", "/v1/links:delete", "{}"), 400, absl::StatusCode::kInvalidArgument,
             "filter: required");
}

TEST_CASE("http: QR images, click statistics and API keys by curl",
          "[services/shorten/e2e][http][pg][e2e]") {
  HttpFixture f;
  const v1::ShortenResponse link = Parse<v1::ShortenResponse>(
      f.Call("POST", "/v1/links", R"({"longUrl":"https://example.com/qr"})"));

  CurlResponse png = f.Call("GET", "/v1/links/" + link.code() + "/qr.png?sizePx=256");
  REQUIRE(png.status == 200);
  CHECK(png.Header("content-type") == "image/png");
  CHECK(png.body.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
  absl::StatusOr<std::vector<std::string>> decoded = DecodeQrPng(png.body);
  REQUIRE(decoded.ok());
  CHECK(*decoded == std::vector<std::string>{link.short_url()});
  CurlResponse svg = f.Call("GET", "/v1/links/" + link.code() + "/qr.svg");
  REQUIRE(svg.status == 200);
  CHECK(svg.Header("content-type") == "image/svg+xml");
  CHECK(absl::StrContains(svg.body, "<svg"));
  CurlResponse json = f.Call("GET", "/v1/links/" + link.code() + "/qrCode?format=FORMAT_SVG");
  REQUIRE(json.status == 200);
  CHECK(Parse<v1::QrCode>(json).content_type() == "image/svg+xml");

  CurlResponse stats = f.Call("GET", "/v1/links/" + link.code() + "/clickStats?granularity=HOUR");
  CheckError(stats, 400, absl::StatusCode::kInvalidArgument, "");  // enum names are whole
  stats = f.Call("GET", "/v1/links/" + link.code() + "/clickStats?granularity=GRANULARITY_HOUR");
  REQUIRE(stats.status == 200);
  CHECK(Parse<v1::GetClickStatsResponse>(stats).buckets_size() >= 24);
  stats = f.Call("GET", "/v1/clickStats?filter=labels.campaign%20%3D%20%22spring%22");
  CHECK(stats.status == 200);

  CurlResponse key = f.Call("POST", "/v1/apiKeys",
                            R"({"name":"ci","tenant":"acme","scopes":["shorten","stats"]})");
  REQUIRE(key.status == 200);
  const v1::CreateApiKeyResponse made = Parse<v1::CreateApiKeyResponse>(key);
  REQUIRE_FALSE(made.key().empty());
  CurlResponse mine =
      f.Call("POST", "/v1/links", R"({"longUrl":"https://example.com/acme"})", made.key());
  CHECK(mine.status == 201);
  CurlResponse keys = f.Call("GET", "/v1/apiKeys");
  REQUIRE(keys.status == 200);
  CHECK(Parse<v1::ListApiKeysResponse>(keys).api_keys_size() >= 2);
  CurlResponse revoked =
      f.Call("POST", absl::StrCat("/v1/apiKeys/", made.api_key().id(), ":revoke"));
  REQUIRE(revoked.status == 200);
  CHECK(Parse<v1::ApiKey>(revoked).has_revoke_time());
}

TEST_CASE("http: every error is google.rpc.Status JSON with its HTTP status",
          "[services/shorten/e2e][http][pg][e2e]") {
  HttpFixture f;
  const std::string body = R"({"longUrl":"https://example.com/e"})";
  CheckError(f.Call("POST", "/v1/links", body, ""), 401, absl::StatusCode::kUnauthenticated,
             "authorization: missing");
  CheckError(f.Call("POST", "/v1/links", body, "not-a-key-at-all-but-long-enough-32"), 401,
             absl::StatusCode::kUnauthenticated, "");
  absl::StatusOr<std::string> shorten_only = f.service->CreateKey("s", "shorten", "t");
  REQUIRE(shorten_only.ok());
  CheckError(f.Call("GET", "/v1/apiKeys", "", *shorten_only), 403,
             absl::StatusCode::kPermissionDenied, "lacks scope \"admin\"");
  CheckError(f.Call("GET", "/v1/links/no-such-link"), 404, absl::StatusCode::kNotFound, "");
  CheckError(f.Call("GET", "/v1/nothing"), 404, absl::StatusCode::kNotFound,
             "no route for path \"/v1/nothing\"");
  CheckError(f.Call("POST", "/v1/links", R"({"longUrl":)"), 400, absl::StatusCode::kInvalidArgument,
             "body: ");
  CheckError(f.Call("POST", "/v1/links", R"({"longUrl":"https://example.com","colour":1})"), 400,
             absl::StatusCode::kInvalidArgument, "colour");
  CheckError(f.Call("POST", "/v1/links", R"({"longUrl":"ftp://example.com"})"), 400,
             absl::StatusCode::kInvalidArgument, "long_url");
  CheckError(f.Call("GET", "/v1/links?colour=red"), 400, absl::StatusCode::kInvalidArgument,
             "unknown query parameter \"colour\"");
  CurlResponse wrong_method = f.Call("DELETE", "/v1/links");
  CheckError(wrong_method, 405, absl::StatusCode::kUnimplemented, "allowed: GET, POST");
  CHECK(wrong_method.Header("allow") == "GET, POST");
  CheckError(f.Call("POST", "/v1/links", "", "-",
                    {"-H", "Content-Type: text/plain", "--data-binary", body}),
             415, absl::StatusCode::kInvalidArgument, "Content-Type must be application/json");
  // Over the default 1 MiB (from a file: too long for an argument).
  absl::StatusOr<std::string> dir = MakeOwnedTempDir("shortener-http-");
  REQUIRE(dir.ok());
  const std::string big_file = *dir + "/big.json";
  std::FILE* big = std::fopen(big_file.c_str(), "w");
  REQUIRE(big != nullptr);
  const std::string big_body =
      R"({"longUrl":"https://example.com/)" + std::string(2 << 20, 'a') + "\"}";
  REQUIRE(std::fwrite(big_body.data(), 1, big_body.size(), big) == big_body.size());
  std::fclose(big);
  CheckError(f.Call("POST", "/v1/links", "", "-",
                    {"-H", "Content-Type: application/json", "--data-binary", "@" + big_file}),
             413, absl::StatusCode::kInvalidArgument, "request body larger than 1048576 bytes");
  std::remove(big_file.c_str());
  CHECK(std::system(absl::StrCat("rm -rf '", *dir, "'").c_str()) == 0);

  v1::CreateApiKeyRequest slow;
  slow.set_name("slow");
  slow.set_tenant("t");
  slow.add_scopes("shorten");
  slow.set_rate_per_second(0.01);
  slow.set_burst(1);
  absl::StatusOr<std::string> slow_key = f.service->CreateKey(slow);
  REQUIRE(slow_key.ok());
  CHECK(f.Call("POST", "/v1/links", body, *slow_key).status == 201);
  CurlResponse limited = f.Call("POST", "/v1/links", body, *slow_key);
  CheckError(limited, 429, absl::StatusCode::kResourceExhausted, "");
  int retry_after = 0;
  CHECK(absl::SimpleAtoi(limited.Header("retry-after"), &retry_after));
  CHECK(retry_after >= 1);
  CHECK(retry_after <= 100);
}

TEST_CASE(
    "http: --http_max_connections and --http_max_body_bytes bound the listener, and HTTP "
    "calls count in the gRPC metrics",
    "[services/shorten/e2e][http][pg][e2e]") {
  HttpFixture f({"--http_max_connections=4", "--http_max_body_bytes=2048"});
  absl::StatusOr<std::vector<HttpConnection>> opened =
      OpenAnsweredConnections(f.port, 4, "/v1/nothing");
  REQUIRE(opened.ok());
  std::vector<HttpConnection> held = *std::move(opened);
  absl::StatusOr<HttpConnection> extra = HttpConnection::Connect(f.port);
  REQUIRE(extra.ok());
  CHECK(extra->WaitClosed(absl::Seconds(5)));
  held.pop_back();
  bool answered = false;
  for (int attempt = 0; attempt < 50 && !answered; ++attempt) {
    answered = f.Call("GET", "/v1/links").status == 200;
    if (!answered) absl::SleepFor(absl::Milliseconds(50));
  }
  CHECK(answered);
  held.clear();

  CheckError(f.Call("POST", "/v1/links", std::string(2049, ' ')), 413,
             absl::StatusCode::kInvalidArgument, "request body larger than 2048 bytes");
  CHECK(f.Call("POST", "/v1/links",
               R"({"longUrl":"https://example.com/)" + std::string(1500, 'a') + "\"}")
            .status == 201);
  // The head's bounds, refused by the HTTP layer in the API's JSON.
  absl::StatusOr<HttpResponse> line = HttpGet(f.port, "/v1/links?x=" + std::string(9000, 'a'));
  REQUIRE(line.ok());
  CHECK(line->status == 414);
  CHECK(line->body == R"({"code":3,"message":"request line longer than 8192 bytes","details":[]})");
  absl::StatusOr<HttpResponse> head =
      HttpGet(f.port, "/v1/links", "GET", "X-Big: " + std::string(17000, 'a') + "\r\n");
  REQUIRE(head.ok());
  CHECK(head->status == 431);
  CHECK(head->Header("content-type") == "application/json");
  CHECK(head->Header("connection") == "close");

  const std::map<std::string, double> samples = ScrapeMetrics(f.service->admin_port());
  const auto shorten_ok = samples.find("shorten_rpcs_total{code=\"OK\",method=\"Shorten\"}");
  REQUIRE(shorten_ok != samples.end());
  CHECK(shorten_ok->second == 1);
  const auto list_ok = samples.find("shorten_rpcs_total{code=\"OK\",method=\"ListLinks\"}");
  REQUIRE(list_ok != samples.end());
  CHECK(list_ok->second >= 1);
  // The listener's own figures.
  CHECK(samples.at("shorten_http_max_connections") == 4);
  CHECK(samples.at("shorten_http_connections_refused_total") >= 1);
  CHECK(samples.at("shorten_http_refused_requests_total{reason=\"body_too_large\"}") == 1);
  CHECK(samples.at("shorten_http_requests_total") >= 6);
}

TEST_CASE("http: SIGTERM closes the HTTP/JSON API's idle connections and exits 0",
          "[services/shorten/e2e][http][pg][e2e]") {
  HttpFixture f;
  absl::StatusOr<std::vector<HttpConnection>> idle =
      OpenAnsweredConnections(f.port, 2, "/v1/nothing");
  REQUIRE(idle.ok());
  REQUIRE(f.Call("POST", "/v1/links", R"({"longUrl":"https://example.com/term"})").status == 201);
  REQUIRE(f.service->process().Signal(SIGTERM));
  for (HttpConnection& c : *idle) CHECK(c.WaitClosed(absl::Seconds(10)));
  const std::optional<int> code = f.service->process().Wait(absl::Seconds(20));
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  CHECK_THAT(f.service->Log(), Catch::Contains("shorten-service stopped"));
}

}  // namespace
}  // namespace shortener::testing
