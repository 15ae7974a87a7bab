// The transcoder over shortener.proto's own routes: HTTP requests into
// request messages (body, query, path, presets) with every refusal naming
// its problem, and response messages into HTTP answers.
#include "services/shorten/http/transcoder.h"

#include <google/protobuf/util/message_differencer.h>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "services/shorten/http/http_status.h"
#include "shortener/v1/shortener.pb.h"

namespace shortener::service::http {
namespace {

const RouteTable& Routes() {
  static const absl::StatusOr<RouteTable>& routes =
      *new absl::StatusOr<RouteTable>(LoadShortenServiceRoutes());
  REQUIRE(routes.ok());
  return *routes;
}

// `target` ("/v1/links?x=1") transcoded into `request`.
absl::Status Build(absl::string_view method, absl::string_view target,
                   google::protobuf::Message* request, absl::string_view body = "",
                   absl::string_view content_type = "application/json") {
  const size_t question = target.find('?');
  std::string allow;
  absl::StatusOr<RouteMatch> match = Routes().Find(method, target.substr(0, question), &allow);
  REQUIRE(match.ok());
  REQUIRE(match->route->method->input_type() == request->GetDescriptor());
  const absl::string_view query =
      question == absl::string_view::npos ? "" : target.substr(question + 1);
  return BuildRequest(*match, HttpRequestParts{query, content_type, body}, request);
}

// The message of a refusal, which must be INVALID_ARGUMENT (400).
std::string Refusal(const absl::Status& status) {
  REQUIRE_FALSE(status.ok());
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  return std::string(status.message());
}

TEST_CASE("query strings decode '+', percent escapes and bare names",
          "[services/shorten/http][transcoder]") {
  auto parsed = ParseQuery("a=1&b=x+y%21&&c&d=");
  REQUIRE(parsed.ok());
  CHECK(*parsed == std::vector<std::pair<std::string, std::string>>{
                       {"a", "1"}, {"b", "x y!"}, {"c", ""}, {"d", ""}});
  CHECK(ParseQuery("a=%4").status().message() == "query: '%' not followed by two hex digits");
  CHECK(ParseQuery("=1").status().message() == "query: a parameter without a name");
  std::string many;
  for (size_t i = 0; i <= kMaxQueryParameters; ++i) many += "a=1&";
  CHECK(ParseQuery(many).status().message() == "query: more than 64 parameters");
}

TEST_CASE("POST /v1/links reads the whole request from JSON and refuses the query",
          "[services/shorten/http][transcoder]") {
  v1::ShortenRequest request;
  REQUIRE(Build("POST", "/v1/links", &request,
                R"({"longUrl":"https://example.com/a","custom_alias":"x1",)"
                R"("labels":{"team":"web"},"redirectType":"REDIRECT_TYPE_PERMANENT",)"
                R"("expireTime":"2030-01-02T03:04:05Z","maxClicks":"5"})",
                "application/json; charset=utf-8")
              .ok());
  CHECK(request.long_url() == "https://example.com/a");
  CHECK(request.custom_alias() == "x1");
  CHECK(request.labels().at("team") == "web");
  CHECK(request.redirect_type() == v1::REDIRECT_TYPE_PERMANENT);
  CHECK(request.expire_time().seconds() == 1893553445);
  CHECK(request.max_clicks() == 5);

  v1::ShortenRequest empty;
  CHECK(Build("POST", "/v1/links", &empty, "", "").ok());  // no body, no type: {}

  CHECK(absl::StrContains(Refusal(Build("POST", "/v1/links", &empty, R"({"longUrl":1,"x":2})")),
                          "body: "));
  CHECK(absl::StrContains(Refusal(Build("POST", "/v1/links", &empty, R"({"long_urlx":"a"})")),
                          "long_urlx"));
  CHECK(absl::StartsWith(Refusal(Build("POST", "/v1/links", &empty, "{")), "body: "));
  CHECK(Refusal(Build("POST", "/v1/links?longUrl=x", &empty, "{}")) ==
        "query parameter \"longUrl\": this route takes every field in its JSON body, none in the "
        "query");

  const absl::Status media =
      Build("POST", "/v1/links", &empty, "long_url=x", "application/x-www-form-urlencoded");
  CHECK(HttpStatusFor(media) == 415);
  CHECK(media.message() ==
        "Content-Type must be application/json, got \"application/x-www-form-urlencoded\"");
}

TEST_CASE("GET routes take fields from the path and the query, not a body",
          "[services/shorten/http][transcoder]") {
  v1::GetLinkRequest get;
  REQUIRE(Build("GET", "/v1/links/Ab3x?view=LINK_VIEW_FULL", &get).ok());
  CHECK(get.code() == "Ab3x");
  CHECK(get.view() == v1::LINK_VIEW_FULL);
  v1::GetLinkRequest by_number;
  REQUIRE(Build("GET", "/v1/links/Ab3x?view=2", &by_number).ok());
  CHECK(by_number.view() == v1::LINK_VIEW_FULL);

  v1::GetLinkRequest bad;
  // Found by the fuzzer: percent-decoding made a string that was no UTF-8.
  CHECK(Refusal(Build("GET", "/v1/links/a%FFb", &bad)) ==
        "path: {code} \"a\xff"
        "b\" is not valid UTF-8");
  CHECK(Refusal(Build("GET", "/v1/links/Ab3x?colour=red", &bad)) ==
        "unknown query parameter \"colour\": no field \"colour\" in shortener.v1.GetLinkRequest");
  CHECK(Refusal(Build("GET", "/v1/links/Ab3x?code=zz", &bad)) ==
        "query parameter \"code\": the request path sets this field");
  CHECK(Refusal(Build("GET", "/v1/links/Ab3x?view=1&view=2", &bad)) ==
        "query parameter \"view\": given more than once");
  CHECK(absl::StartsWith(Refusal(Build("GET", "/v1/links/Ab3x?view=LOUD", &bad)), "query: "));
  CHECK(Refusal(Build("GET", "/v1/links/Ab3x", &bad, "{}")) ==
        "GET /v1/links/{code} takes no request body");

  v1::ListLinksRequest list;
  REQUIRE(Build("GET",
                "/v1/links?pageSize=10&page_token=t&filter=labels.team%3D%22web%22&"
                "orderBy=create_time+desc",
                &list)
              .ok());
  CHECK(list.page_size() == 10);
  CHECK(list.page_token() == "t");
  CHECK(list.filter() == "labels.team=\"web\"");
  CHECK(list.order_by() == "create_time desc");
  v1::ListLinksRequest bad_list;
  CHECK(absl::StartsWith(Refusal(Build("GET", "/v1/links?page_size=ten", &bad_list)), "query: "));

  v1::GetClickStatsRequest stats;
  REQUIRE(Build("GET",
                "/v1/links/Ab3x/clickStats?startTime=2026-01-01T00:00:00Z&granularity=GRANULARITY_"
                "HOUR",
                &stats)
              .ok());
  CHECK(stats.code() == "Ab3x");
  CHECK(stats.start_time().seconds() == 1767225600);
  CHECK(stats.granularity() == v1::GRANULARITY_HOUR);
}

TEST_CASE("PATCH /v1/links/{link.code} reads the link from the body and the mask from the query",
          "[services/shorten/http][transcoder]") {
  v1::UpdateLinkRequest update;
  REQUIRE(Build("PATCH", "/v1/links/Ab3x?updateMask=longUrl,maxClicks", &update,
                R"({"longUrl":"https://example.com/b","maxClicks":"7"})")
              .ok());
  CHECK(update.link().code() == "Ab3x");
  CHECK(update.link().long_url() == "https://example.com/b");
  CHECK(update.update_mask().paths_size() == 2);
  CHECK(update.update_mask().paths(0) == "long_url");
  CHECK(update.update_mask().paths(1) == "max_clicks");

  v1::UpdateLinkRequest same_code;
  CHECK(Build("PATCH", "/v1/links/Ab3x", &same_code, R"({"code":"Ab3x"})").ok());
  v1::UpdateLinkRequest bad;
  CHECK(Refusal(Build("PATCH", "/v1/links/Ab3x", &bad, R"({"code":"Other"})")) ==
        "path: {link.code} \"Ab3x\" differs from the body's \"Other\"");
  CHECK(Refusal(Build("PATCH", "/v1/links/Ab3x?link.longUrl=x", &bad, "{}")) ==
        "query parameter \"link.longUrl\": field \"link\" comes in the JSON body");
}

TEST_CASE("the image routes fix the format, and ids in paths must be integers",
          "[services/shorten/http][transcoder]") {
  v1::GetQrCodeRequest svg;
  REQUIRE(Build("GET", "/v1/links/Ab3x/qr.svg?sizePx=512&margin_modules=0", &svg).ok());
  CHECK(svg.format() == v1::GetQrCodeRequest::FORMAT_SVG);
  CHECK(svg.size_px() == 512);
  CHECK(svg.has_margin_modules());
  v1::GetQrCodeRequest png;
  REQUIRE(Build("GET", "/v1/links/Ab3x/qr.png", &png).ok());
  CHECK(png.format() == v1::GetQrCodeRequest::FORMAT_PNG);
  v1::GetQrCodeRequest bad;
  CHECK(Refusal(Build("GET", "/v1/links/Ab3x/qr.png?format=FORMAT_SVG", &bad)) ==
        "query parameter \"format\": the request path sets this field");

  v1::RevokeApiKeyRequest revoke;
  REQUIRE(Build("POST", "/v1/apiKeys/12:revoke", &revoke).ok());
  CHECK(revoke.id() == 12);
  v1::RevokeApiKeyRequest bad_id;
  CHECK(Refusal(Build("POST", "/v1/apiKeys/twelve:revoke", &bad_id)) ==
        "path: {id} \"twelve\" is not an integer");

  v1::CreateApiKeyRequest create;
  REQUIRE(Build("POST", "/v1/apiKeys", &create,
                R"({"name":"ci","scopes":["shorten","stats"],"ratePerSecond":2.5})")
              .ok());
  CHECK(create.scopes_size() == 2);
  CHECK(create.rate_per_second() == 2.5);
}

TEST_CASE("query parameters reach into messages only through their fields",
          "[services/shorten/http][transcoder]") {
  v1::GetClickStatsRequest stats;
  REQUIRE(Build("GET", "/v1/clickStats?startTime.seconds=5", &stats).ok());
  CHECK(stats.start_time().seconds() == 5);
  v1::ListLinksRequest list;
  CHECK(Refusal(Build("GET", "/v1/links?filter.x=1", &list)) ==
        "unknown query parameter \"filter.x\": filter is not a message with fields");
}

TEST_CASE("answers are proto3 JSON, raw bytes, or 201 with Location for a new link",
          "[services/shorten/http][transcoder]") {
  std::string allow;
  const RouteMatch shorten = *Routes().Find("POST", "/v1/links", &allow);
  v1::ShortenResponse created;
  created.set_code("Ab3x");
  created.set_short_url("https://sho.rt/Ab3x");
  created.set_created(true);
  absl::StatusOr<HttpAnswer> answer = EncodeResponse(*shorten.route, "/v1/links", created);
  REQUIRE(answer.ok());
  CHECK(answer->status == 201);
  CHECK(answer->location == "/v1/links/Ab3x");
  CHECK(answer->content_type == "application/json");
  CHECK(answer->body == R"({"code":"Ab3x","shortUrl":"https://sho.rt/Ab3x","created":true})");
  created.set_created(false);
  answer = EncodeResponse(*shorten.route, "/v1/links", created);
  REQUIRE(answer.ok());
  CHECK(answer->status == 200);
  CHECK(answer->location.empty());
  // Zeros and false are printed: a client need not know proto3's defaults.
  CHECK(absl::StrContains(answer->body, R"("created":false)"));

  const RouteMatch png = *Routes().Find("GET", "/v1/links/Ab3x/qr.png", &allow);
  v1::QrCode qr;
  qr.set_content(std::string("\x89PNG\r\n\x1a\n\0", 9));
  qr.set_content_type("image/png");
  answer = EncodeResponse(*png.route, "/v1/links/Ab3x/qr.png", qr);
  REQUIRE(answer.ok());
  CHECK(answer->status == 200);
  CHECK(answer->content_type == "image/png");
  CHECK(answer->body == qr.content());
}

}  // namespace
}  // namespace shortener::service::http
