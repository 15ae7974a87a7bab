#include "services/shorten/http/http_routes.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/api/annotations.pb.h"
#include "lib/common/status_macros.h"
#include "services/shorten/http/http_status.h"
#include "shortener/v1/shortener.pb.h"

namespace shortener::service::http {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::MethodDescriptor;

// Request fields a route's path fixes: an image file's name says its format.
struct PathPreset {
  absl::string_view path_suffix;
  absl::string_view field;
  absl::string_view value;
};
constexpr PathPreset kPathPresets[] = {
    {"/qr.png", "format", "FORMAT_PNG"},
    {"/qr.svg", "format", "FORMAT_SVG"},
};

// The method and template of one rule, or nothing for "custom" (unused).
std::pair<std::string, std::string> Pattern(const google::api::HttpRule& rule) {
  switch (rule.pattern_case()) {
    case google::api::HttpRule::kGet:
      return {"GET", rule.get()};
    case google::api::HttpRule::kPost:
      return {"POST", rule.post()};
    case google::api::HttpRule::kPatch:
      return {"PATCH", rule.patch()};
    case google::api::HttpRule::kPut:
      return {"PUT", rule.put()};
    case google::api::HttpRule::kDelete:
      return {"DELETE", rule.delete_()};
    default:
      return {"", ""};
  }
}

bool IsScalar(const FieldDescriptor* field) {
  return !field->is_repeated() && field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE;
}

absl::Status CheckRoute(const HttpRoute& route) {
  const Descriptor* input = route.method->input_type();
  for (const std::string& variable : route.path.Variables()) {
    SHORTENER_ASSIGN_OR_RETURN(auto fields, ResolveFieldPath(input, variable));
    if (!IsScalar(fields.back())) {
      return absl::InvalidArgumentError(
          absl::StrCat("path variable {", variable, "} is not a scalar field"));
    }
  }
  if (!route.body.empty() && route.body != "*") {
    const FieldDescriptor* field = input->FindFieldByName(route.body);
    if (field == nullptr || field->is_repeated() ||
        field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      return absl::InvalidArgumentError(
          absl::StrCat("body \"", route.body, "\" is not a message field of the request"));
    }
  }
  if (!route.body.empty() && (route.http_method == "GET" || route.http_method == "DELETE")) {
    return absl::InvalidArgumentError(absl::StrCat(route.http_method, " takes no body"));
  }
  if (!route.response_body.empty()) {
    const FieldDescriptor* field =
        route.method->output_type()->FindFieldByName(route.response_body);
    if (field == nullptr || field->type() != FieldDescriptor::TYPE_BYTES || field->is_repeated()) {
      return absl::InvalidArgumentError(absl::StrCat("response_body \"", route.response_body,
                                                     "\" is not a bytes field of the response"));
    }
  }
  for (const auto& [field, value] : route.presets) {
    SHORTENER_RETURN_IF_ERROR(ResolveFieldPath(input, field).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<HttpRoute> MakeRoute(const MethodDescriptor* method,
                                    const google::api::HttpRule& rule) {
  auto [http_method, text] = Pattern(rule);
  if (http_method.empty()) {
    return absl::InvalidArgumentError("only get, post, patch, put and delete rules are served");
  }
  SHORTENER_ASSIGN_OR_RETURN(PathTemplate path, PathTemplate::Parse(text));
  HttpRoute route{http_method, std::move(path), method, rule.body(), rule.response_body(), {}};
  for (const PathPreset& preset : kPathPresets) {
    const absl::string_view t = route.path.text();
    if (t.size() >= preset.path_suffix.size() &&
        t.substr(t.size() - preset.path_suffix.size()) == preset.path_suffix) {
      route.presets.emplace_back(preset.field, preset.value);
    }
  }
  SHORTENER_RETURN_IF_ERROR(CheckRoute(route));
  return route;
}

absl::Status AddMethod(const MethodDescriptor* method, std::vector<HttpRoute>& routes) {
  if (!method->options().HasExtension(google::api::http)) return absl::OkStatus();
  if (method->client_streaming() || method->server_streaming()) {
    return absl::InvalidArgumentError("streaming methods have no HTTP route");
  }
  const google::api::HttpRule& rule = method->options().GetExtension(google::api::http);
  std::vector<const google::api::HttpRule*> rules = {&rule};
  for (const google::api::HttpRule& extra : rule.additional_bindings()) rules.push_back(&extra);
  for (const google::api::HttpRule* r : rules) {
    SHORTENER_ASSIGN_OR_RETURN(HttpRoute route, MakeRoute(method, *r));
    for (const HttpRoute& other : routes) {
      if (other.http_method == route.http_method && other.path.text() == route.path.text()) {
        return absl::InvalidArgumentError(absl::StrCat(route.http_method, " ", route.path.text(),
                                                       " is also ", other.method->name(), "'s"));
      }
    }
    routes.push_back(std::move(route));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<const FieldDescriptor*>> ResolveFieldPath(const Descriptor* message,
                                                                     absl::string_view path) {
  std::vector<const FieldDescriptor*> fields;
  const Descriptor* current = message;
  for (absl::string_view part : absl::StrSplit(path, '.')) {
    if (current == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", path, "\": ", fields.back()->name(), " is not a message with fields"));
    }
    const std::string name(part);
    const FieldDescriptor* field = current->FindFieldByName(name);
    if (field == nullptr) field = current->FindFieldByCamelcaseName(name);
    if (field == nullptr || (field->json_name() != name && field->name() != name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", path, "\": no field \"", part, "\" in ", current->full_name()));
    }
    fields.push_back(field);
    const bool nested = field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE &&
                        !field->is_repeated() && !field->is_map();
    current = nested ? field->message_type() : nullptr;
  }
  return fields;
}

absl::StatusOr<RouteTable> LoadRoutes(const google::protobuf::ServiceDescriptor* service) {
  RouteTable table;
  for (int i = 0; i < service->method_count(); ++i) {
    const MethodDescriptor* method = service->method(i);
    const absl::Status added = AddMethod(method, table.routes_);
    if (!added.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("google.api.http of ", method->full_name(), ": ", added.message()));
    }
  }
  std::stable_sort(table.routes_.begin(), table.routes_.end(),
                   [](const HttpRoute& a, const HttpRoute& b) {
                     return a.path.Specificity() > b.path.Specificity();
                   });
  return table;
}

absl::StatusOr<RouteTable> LoadShortenServiceRoutes() {
  // Through a generated type: it keeps shortener.pb.o linked, whose
  // descriptors the generated pool builds on first use.
  return LoadRoutes(
      shortener::v1::ShortenRequest::descriptor()->file()->FindServiceByName("ShortenService"));
}

absl::StatusOr<RouteMatch> RouteTable::Find(absl::string_view http_method, absl::string_view path,
                                            std::string* allow) const {
  SHORTENER_ASSIGN_OR_RETURN(const std::vector<std::string> segments, SplitPath(path));
  std::vector<std::string> methods;
  // "/v1/links/x:revoke" is Revoke's path, never a GET of code "x:revoke":
  // once a template with a verb matched, those without one are not tried.
  bool verb_matched = false;
  for (const HttpRoute& route : routes_) {
    if (verb_matched && route.path.verb().empty()) break;
    std::optional<PathBindings> bindings = route.path.Match(segments);
    if (!bindings.has_value()) continue;
    verb_matched = verb_matched || !route.path.verb().empty();
    if (route.http_method == http_method) return RouteMatch{&route, *std::move(bindings)};
    if (std::find(methods.begin(), methods.end(), route.http_method) == methods.end()) {
      methods.push_back(route.http_method);
    }
  }
  if (methods.empty()) {
    return WithHttpStatus(absl::NotFoundError(absl::StrCat("no route for path \"", path, "\"")),
                          404);
  }
  std::sort(methods.begin(), methods.end());
  *allow = absl::StrJoin(methods, ", ");
  return WithHttpStatus(
      absl::UnimplementedError(absl::StrCat("method ", http_method, " is not allowed on \"", path,
                                            "\"; allowed: ", *allow)),
      405);
}

}  // namespace shortener::service::http
