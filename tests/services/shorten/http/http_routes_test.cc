// The routes read from shortener.proto's google.api.http options, and
// LoadRoutes' refusals of annotations the router cannot serve (on a small
// service built at run time).
#include "services/shorten/http/http_routes.h"

#include <google/protobuf/descriptor.pb.h>

#include <catch2/catch.hpp>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/api/annotations.pb.h"
#include "services/shorten/http/http_status.h"
#include "shortener/v1/shortener.pb.h"

namespace shortener::service::http {
namespace {

RouteTable Routes() {
  absl::StatusOr<RouteTable> routes = LoadShortenServiceRoutes();
  REQUIRE(routes.ok());
  return *std::move(routes);
}

TEST_CASE("every RPC but the edge's own has the routes shortener.proto gives it",
          "[services/shorten/http][routes]") {
  const RouteTable routes = Routes();
  std::set<std::string> found;
  std::set<std::string> methods;
  for (const HttpRoute& route : routes.routes()) {
    found.insert(absl::StrCat(route.http_method, " ", route.path.text(), " ", route.method->name(),
                              route.body.empty() ? "" : " body=" + route.body,
                              route.response_body.empty() ? "" : " raw=" + route.response_body));
    methods.insert(route.method->name());
  }
  CHECK(found == std::set<std::string>{
                     "POST /v1/links Shorten body=*",
                     "POST /v1/links:batchShorten BatchShorten body=*",
                     "GET /v1/links/{code}:resolve Resolve",
                     "GET /v1/links/{code} GetLink",
                     "GET /v1/links ListLinks",
                     "GET /v1/links/{code}/qrCode GetQrCode",
                     "GET /v1/links/{code}/qr.png GetQrCode raw=content",
                     "GET /v1/links/{code}/qr.svg GetQrCode raw=content",
                     "POST /v1/links/{code}:revoke Revoke body=*",
                     "PATCH /v1/links/{link.code} UpdateLink body=link",
                     "DELETE /v1/links/{code} DeleteLink",
                     "POST /v1/links:revoke RevokeLinks body=*",
                     "POST /v1/links:delete DeleteLinks body=*",
                     "GET /v1/links/{code}/clickStats GetClickStats",
                     "GET /v1/clickStats GetClickStats",
                     "POST /v1/apiKeys CreateApiKey body=*",
                     "GET /v1/apiKeys ListApiKeys",
                     "POST /v1/apiKeys/{id}:revoke RevokeApiKey body=*",
                 });
  for (const char* edge_only : {"RecordClicks", "WatchInvalidations", "BatchResolve"}) {
    CHECK(methods.count(edge_only) == 0);
  }
  for (const HttpRoute& route : routes.routes()) {
    if (absl::EndsWith(route.path.text(), "qr.svg")) {
      CHECK(route.presets ==
            std::vector<std::pair<std::string, std::string>>{{"format", "FORMAT_SVG"}});
    }
  }
}

TEST_CASE("a request finds its route, 405 with Allow, or 404", "[services/shorten/http][routes]") {
  const RouteTable routes = Routes();
  auto method_of = [&routes](absl::string_view verb, absl::string_view path) {
    std::string allow;
    absl::StatusOr<RouteMatch> match = routes.Find(verb, path, &allow);
    REQUIRE(match.ok());
    return std::string(match->route->method->name());
  };
  CHECK(method_of("POST", "/v1/links") == "Shorten");
  CHECK(method_of("GET", "/v1/links") == "ListLinks");
  CHECK(method_of("GET", "/v1/links/abc") == "GetLink");
  CHECK(method_of("GET", "/v1/links/abc:resolve") == "Resolve");
  CHECK(method_of("POST", "/v1/links/abc:revoke") == "Revoke");
  CHECK(method_of("PATCH", "/v1/links/abc") == "UpdateLink");
  CHECK(method_of("DELETE", "/v1/links/abc") == "DeleteLink");
  CHECK(method_of("POST", "/v1/links:revoke") == "RevokeLinks");
  CHECK(method_of("POST", "/v1/links:delete") == "DeleteLinks");
  CHECK(method_of("GET", "/v1/links/abc/qr.png") == "GetQrCode");
  CHECK(method_of("POST", "/v1/apiKeys/12:revoke") == "RevokeApiKey");

  std::string allow;
  absl::StatusOr<RouteMatch> match = routes.Find("PUT", "/v1/links/abc", &allow);
  CHECK(HttpStatusFor(match.status()) == 405);
  CHECK(allow == "DELETE, GET, PATCH");
  CHECK(match.status().message() ==
        "method PUT is not allowed on \"/v1/links/abc\"; allowed: DELETE, GET, PATCH");
  allow.clear();
  // A verb's path is never a GET of a code with a colon in it.
  match = routes.Find("GET", "/v1/links/abc:revoke", &allow);
  CHECK(HttpStatusFor(match.status()) == 405);
  CHECK(allow == "POST");
  allow.clear();
  match = routes.Find("HEAD", "/v1/links", &allow);
  CHECK(HttpStatusFor(match.status()) == 405);
  CHECK(allow == "GET, POST");

  allow.clear();
  match = routes.Find("GET", "/v1/nothing", &allow);
  CHECK(HttpStatusFor(match.status()) == 404);
  CHECK(match.status().code() == absl::StatusCode::kNotFound);
  CHECK(match.status().message() == "no route for path \"/v1/nothing\"");
  CHECK(allow.empty());
  match = routes.Find("GET", "/v1//links", &allow);
  CHECK(HttpStatusFor(match.status()) == 400);
}

// A one-method service built at run time, annotated with `rule`.
class TinyService {
 public:
  explicit TinyService(const google::api::HttpRule& rule, bool streaming = false)
      : pool_(google::protobuf::DescriptorPool::generated_pool()) {
    google::protobuf::FileDescriptorProto file;
    file.set_name("tiny.proto");
    file.set_package("tiny");
    file.set_syntax("proto3");
    file.add_dependency("google/api/annotations.proto");
    google::protobuf::DescriptorProto* inner = file.add_message_type();
    inner->set_name("Inner");
    AddField(inner, "name", 1, google::protobuf::FieldDescriptorProto::TYPE_STRING);
    google::protobuf::DescriptorProto* request = file.add_message_type();
    request->set_name("Req");
    AddField(request, "code", 1, google::protobuf::FieldDescriptorProto::TYPE_STRING);
    AddField(request, "inner", 2, google::protobuf::FieldDescriptorProto::TYPE_MESSAGE)
        ->set_type_name(".tiny.Inner");
    AddField(request, "tags", 3, google::protobuf::FieldDescriptorProto::TYPE_STRING)
        ->set_label(google::protobuf::FieldDescriptorProto::LABEL_REPEATED);
    google::protobuf::DescriptorProto* response = file.add_message_type();
    response->set_name("Resp");
    AddField(response, "content", 1, google::protobuf::FieldDescriptorProto::TYPE_BYTES);
    AddField(response, "text", 2, google::protobuf::FieldDescriptorProto::TYPE_STRING);
    google::protobuf::MethodDescriptorProto* method = file.add_service()->add_method();
    file.mutable_service(0)->set_name("Tiny");
    method->set_name("Do");
    method->set_input_type(".tiny.Req");
    method->set_output_type(".tiny.Resp");
    method->set_server_streaming(streaming);
    *method->mutable_options()->MutableExtension(google::api::http) = rule;
    const google::protobuf::FileDescriptor* built = pool_.BuildFile(file);
    REQUIRE(built != nullptr);
    service_ = built->service(0);
  }
  absl::Status Load() const { return LoadRoutes(service_).status(); }

 private:
  static google::protobuf::FieldDescriptorProto* AddField(
      google::protobuf::DescriptorProto* message, const char* name, int number,
      google::protobuf::FieldDescriptorProto::Type type) {
    google::protobuf::FieldDescriptorProto* field = message->add_field();
    field->set_name(name);
    field->set_json_name(name);
    field->set_number(number);
    field->set_type(type);
    field->set_label(google::protobuf::FieldDescriptorProto::LABEL_OPTIONAL);
    return field;
  }
  google::protobuf::DescriptorPool pool_;
  const google::protobuf::ServiceDescriptor* service_ = nullptr;
};

google::api::HttpRule Get(const std::string& path) {
  google::api::HttpRule rule;
  rule.set_get(path);
  return rule;
}

TEST_CASE("annotations the router cannot serve stop the start naming the method",
          "[services/shorten/http][routes]") {
  CHECK(TinyService(Get("/v1/{code}")).Load().ok());
  struct Case {
    google::api::HttpRule rule;
    bool streaming;
    const char* message;
  };
  google::api::HttpRule get_with_body = Get("/v1/x");
  get_with_body.set_body("*");
  google::api::HttpRule post_scalar_body;
  post_scalar_body.set_post("/v1/x");
  post_scalar_body.set_body("code");
  google::api::HttpRule raw_text = Get("/v1/x");
  raw_text.set_response_body("text");
  google::api::HttpRule duplicate = Get("/v1/x");
  *duplicate.add_additional_bindings() = Get("/v1/x");
  const Case cases[] = {
      {Get("/v1/{nothing}"), false, "\"nothing\": no field \"nothing\" in tiny.Req"},
      {Get("/v1/{inner}"), false, "path variable {inner} is not a scalar field"},
      {Get("/v1/{tags}"), false, "path variable {tags} is not a scalar field"},
      {Get("/v1/{code=**}"), false, "only one-segment variables"},
      {get_with_body, false, "GET takes no body"},
      {post_scalar_body, false, "body \"code\" is not a message field of the request"},
      {raw_text, false, "response_body \"text\" is not a bytes field of the response"},
      {duplicate, false, "GET /v1/x is also Do's"},
      {Get("/v1/x"), true, "streaming methods have no HTTP route"},
  };
  for (const Case& c : cases) {
    INFO(c.message);
    const absl::Status loaded = TinyService(c.rule, c.streaming).Load();
    REQUIRE_FALSE(loaded.ok());
    CHECK(absl::StartsWith(loaded.message(), "google.api.http of tiny.Tiny.Do: "));
    CHECK(absl::StrContains(loaded.message(), c.message));
  }
}

}  // namespace
}  // namespace shortener::service::http
