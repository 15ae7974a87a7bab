// shorten-openapi: prints docs/openapi.json, the HTTP/JSON API's OpenAPI
// document, from the routes compiled in (openapi.h).
//   build/bin/shorten-openapi > docs/openapi.json
#include <cstdio>

#include "services/shorten/http/http_routes.h"
#include "services/shorten/http/openapi.h"

int main() {
  absl::StatusOr<shortener::service::http::RouteTable> routes =
      shortener::service::http::LoadShortenServiceRoutes();
  if (!routes.ok()) {
    std::fprintf(stderr, "shorten-openapi: %s\n", routes.status().ToString().c_str());
    return 1;
  }
  const std::string json = shortener::service::http::OpenApiJson(*routes);
  return std::fwrite(json.data(), 1, json.size(), stdout) == json.size() ? 0 : 1;
}
