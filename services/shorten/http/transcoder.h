// HTTP request -> request message, and response message -> HTTP answer, for
// one route (http_routes.h): google.api.http's rules with protobuf's own
// JSON mapping (proto3 JSON: lowerCamelCase names, proto names accepted,
// enums by name or number, int64 as strings, Timestamps as RFC 3339).
//
// A request message is filled from, in this order:
//   1. the body (routes with a body): JSON of the whole request ("*") or of
//      the one field the rule names; Content-Type application/json (with or
//      without parameters) or none, else 415; an empty body is {}; unknown
//      fields are refused naming them;
//   2. the query parameters (every field neither in the body nor bound by
//      the path): dotted field paths ("link.long_url" or "link.longUrl"),
//      a repeated field by repeating the parameter, an enum by name or
//      number, a Timestamp or FieldMask in its JSON string form; an unknown
//      parameter, one given twice for a singular field, one for a field the
//      path or body sets, or one naming a message or map is refused naming
//      it; at most kMaxQueryParameters;
//   3. the route's presets and its path variables (a body that set a path
//      field to another value is refused).
// Every refusal is INVALID_ARGUMENT (HTTP 400) naming the parameter, field
// or problem, except the media type (HTTP 415, http_status.h).
//
// Pure (no I/O), so it is unit-tested and fuzzed (tests/fuzz/
// http_api_request_fuzz.cc) directly. Thread safety: pure functions.
#ifndef SHORTENER_SERVICES_SHORTEN_HTTP_TRANSCODER_H_
#define SHORTENER_SERVICES_SHORTEN_HTTP_TRANSCODER_H_

#include <google/protobuf/message.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/shorten/http/http_routes.h"

namespace shortener::service::http {

inline constexpr size_t kMaxQueryParameters = 64;

// The decoded name=value pairs of a query string ("a=1&b=x+y&c" ->
// {a,1},{b,"x y"},{c,""}), in order. INVALID_ARGUMENT for a '%' not
// followed by two hex digits or more than kMaxQueryParameters pairs.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseQuery(
    absl::string_view query);

struct HttpRequestParts {
  absl::string_view query;  // after '?', not decoded; empty if none
  absl::string_view content_type;
  absl::string_view body;
};

// Fills `request` (a fresh message of match.route->method's input type).
absl::Status BuildRequest(const RouteMatch& match, const HttpRequestParts& parts,
                          google::protobuf::Message* request);

struct HttpAnswer {
  int status = 200;
  std::string content_type;  // "application/json", or the raw body's
  std::string body;
  std::string location;  // set with 201
};

// The answer for `response` (the method's output) to a request for
// `path`: JSON of the whole message (every scalar and list printed, zeros
// and empty ones too; unset messages and optional fields left out), or the
// raw bytes of response_body with the message's content_type. A response with a true `created`
// field and a `code` is 201 Created with Location: `path`/code (POST /v1/links); with a false one
// it stays 200. INTERNAL if the message cannot be written as JSON (not valid UTF-8).
absl::StatusOr<HttpAnswer> EncodeResponse(const HttpRoute& route, absl::string_view path,
                                          const google::protobuf::Message& response);

}  // namespace shortener::service::http

#endif  // SHORTENER_SERVICES_SHORTEN_HTTP_TRANSCODER_H_
