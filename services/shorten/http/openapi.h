// The OpenAPI 3 document of the HTTP/JSON API, generated from the routes
// (http_routes.h: shortener.proto's google.api.http options) and the
// messages' descriptors, so it cannot drift from what the service serves.
// docs/openapi.json is its output, checked in; tests/services/shorten/http/
// openapi_test.cc regenerates it and fails when the two differ.
//
// What it says: every route (path templates as written, custom verbs
// included), its path and query parameters (scalar fields by their JSON
// names, nested fields dotted), its JSON request body, its answers (the
// response message; raw images; 201 for POST /v1/links) and the
// google.rpc.Status error body; every message as a schema in proto3 JSON's
// terms (int64 as strings, enums by name, Timestamps as date-time, ...);
// bearer authentication. Descriptions point to docs/api.md: generated
// descriptors carry no comments.
//
// Thread safety: pure.
#ifndef SHORTENER_SERVICES_SHORTEN_HTTP_OPENAPI_H_
#define SHORTENER_SERVICES_SHORTEN_HTTP_OPENAPI_H_

#include <string>

#include "services/shorten/http/http_routes.h"

namespace shortener::service::http {

// The document as JSON text (2-space indentation, keys sorted, a final
// newline): the same routes always give the same bytes.
std::string OpenApiJson(const RouteTable& routes);

}  // namespace shortener::service::http

#endif  // SHORTENER_SERVICES_SHORTEN_HTTP_OPENAPI_H_
