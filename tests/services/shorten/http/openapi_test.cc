// docs/openapi.json is what shorten-openapi generates from the routes now:
// a route or message changed without regenerating it fails here, saying
// how to regenerate.
#include "services/shorten/http/openapi.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "shortener/v1/shortener.pb.h"

namespace shortener::service::http {
namespace {

std::string Generated() {
  absl::StatusOr<RouteTable> routes = LoadShortenServiceRoutes();
  REQUIRE(routes.ok());
  return OpenApiJson(*routes);
}

TEST_CASE("docs/openapi.json is the document the routes generate",
          "[services/shorten/http][openapi]") {
  std::ifstream file(SHORTENER_SOURCE_DIR "/docs/openapi.json", std::ios::binary);
  REQUIRE(file.good());
  std::stringstream checked_in;
  checked_in << file.rdbuf();
  const std::string generated = Generated();
  if (checked_in.str() != generated) {
    const std::vector<std::string> a = absl::StrSplit(checked_in.str(), '\n');
    const std::vector<std::string> b = absl::StrSplit(generated, '\n');
    size_t line = 0;
    while (line < a.size() && line < b.size() && a[line] == b[line]) ++line;
    FAIL("docs/openapi.json is stale from line "
         << line + 1 << ":\n  checked in: " << (line < a.size() ? a[line] : "(end)")
         << "\n  generated:  " << (line < b.size() ? b[line] : "(end)")
         << "\nregenerate it: ninja -C build shorten-openapi && build/bin/shorten-openapi > "
            "docs/openapi.json");
  }
}

TEST_CASE("the document has every route, its parameters and the error body",
          "[services/shorten/http][openapi]") {
  const std::string doc = Generated();
  CHECK(absl::StartsWith(doc, "{\n  \"components\": {"));
  for (const char* piece :
       {"\"/v1/links\": {", "\"/v1/links/{code}:revoke\": {", "\"/v1/links/{link.code}\": {",
        "\"/v1/links/{code}/qr.png\": {", "\"image/png\": {", "\"201\": {",
        "\"name\": \"updateMask\"", "\"name\": \"link.code\"", "\"google.rpc.Status\": {",
        "\"shortener.v1.ShortenRequest\": {", "\"scheme\": \"bearer\""}) {
    INFO(piece);
    CHECK(absl::StrContains(doc, piece));
  }
  CHECK_FALSE(absl::StrContains(doc, "RecordClicks"));
  CHECK(absl::StrContains(doc, "\"operationId\": \"GetQrCode2\""));  // a second binding
}

}  // namespace
}  // namespace shortener::service::http
