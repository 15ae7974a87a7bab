// The HTTP/JSON API's routes, read from the google.api.http options of a
// gRPC service's methods (shortener.proto is their one source), and the
// look-up of a request's route.
//
// Every annotated unary method gets its rule and each additional binding as
// a route; methods without the option (RecordClicks, WatchInvalidations,
// BatchResolve) get none, and an RPC annotated later gets its routes with
// no change here. LoadRoutes checks each rule against the messages (a body
// or response_body naming no field, a path variable naming no scalar field,
// a body on GET or DELETE, a streaming method) and refuses to start with a
// message naming the method.
//
// Two conventions of this service beyond google.api.http, both tied to a
// field of the messages rather than to a method:
//   - a response_body naming a bytes field is sent raw, with the
//     Content-Type of the response's `content_type` string field when it
//     has one (GetQrCode's /qr.png and /qr.svg);
//   - a route whose path ends in qr.png or qr.svg fixes the request's
//     `format` to FORMAT_PNG or FORMAT_SVG (kPathPresets in the .cc: a
//     file name says what it holds).
//
// Thread safety: a RouteTable is immutable after LoadRoutes; Find is safe
// from any thread.
#ifndef SHORTENER_SERVICES_SHORTEN_HTTP_HTTP_ROUTES_H_
#define SHORTENER_SERVICES_SHORTEN_HTTP_HTTP_ROUTES_H_

#include <google/protobuf/descriptor.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/shorten/http/path_template.h"

namespace shortener::service::http {

struct HttpRoute {
  std::string http_method;  // "GET", "POST", "PATCH", "PUT" or "DELETE"
  PathTemplate path;
  const google::protobuf::MethodDescriptor* method = nullptr;
  // "": no body; "*": every field not bound by the path; else a top-level
  // message field of the request.
  std::string body;
  // "": the whole response as JSON; else a top-level bytes field sent raw.
  std::string response_body;
  // Request fields the route fixes (field path, value as a query parameter
  // would give it).
  std::vector<std::pair<std::string, std::string>> presets;
};

// What a request path and method found.
struct RouteMatch {
  const HttpRoute* route = nullptr;
  PathBindings bindings;
};

class RouteTable {
 public:
  // The route of `http_method` and `path` (the request target without its
  // query). NOT_FOUND (HTTP 404) when no route has the path;
  // METHOD_NOT_ALLOWED as HTTP 405 (code UNIMPLEMENTED) when some have it
  // with other methods, `allow` then set to them ("GET, POST");
  // INVALID_ARGUMENT for a malformed path (SplitPath). HEAD is not served.
  absl::StatusOr<RouteMatch> Find(absl::string_view http_method, absl::string_view path,
                                  std::string* allow) const;

  const std::vector<HttpRoute>& routes() const { return routes_; }

 private:
  friend absl::StatusOr<RouteTable> LoadRoutes(const google::protobuf::ServiceDescriptor* service);
  std::vector<HttpRoute> routes_;  // most specific first (PathTemplate::Specificity)
};

// The routes of every annotated method of `service`, or INVALID_ARGUMENT
// naming the method and the problem (see the header comment).
absl::StatusOr<RouteTable> LoadRoutes(const google::protobuf::ServiceDescriptor* service);

// LoadRoutes of shortener.v1.ShortenService (shortener.proto).
absl::StatusOr<RouteTable> LoadShortenServiceRoutes();

// The field of `message` at the dotted `path` (each part the field's proto
// name or its JSON name; every part but the last a singular message field),
// or INVALID_ARGUMENT naming `path` ("unknown field" / "not a message").
absl::StatusOr<std::vector<const google::protobuf::FieldDescriptor*>> ResolveFieldPath(
    const google::protobuf::Descriptor* message, absl::string_view path);

}  // namespace shortener::service::http

#endif  // SHORTENER_SERVICES_SHORTEN_HTTP_HTTP_ROUTES_H_
