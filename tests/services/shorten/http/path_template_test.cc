// PathTemplate and SplitPath: the subset of google.api.http templates the
// API uses, and request paths split, decoded and matched against them.
#include "services/shorten/http/path_template.h"

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace shortener::service::http {
namespace {

std::vector<std::string> Split(absl::string_view path) {
  absl::StatusOr<std::vector<std::string>> segments = SplitPath(path);
  REQUIRE(segments.ok());
  return *segments;
}

PathTemplate Parsed(absl::string_view text) {
  absl::StatusOr<PathTemplate> parsed = PathTemplate::Parse(text);
  REQUIRE(parsed.ok());
  return *parsed;
}

TEST_CASE("request paths are split at '/' before they are percent-decoded",
          "[services/shorten/http][path_template]") {
  CHECK(Split("/v1/links") == std::vector<std::string>{"v1", "links"});
  CHECK(Split("/v1/links/a%20b") == std::vector<std::string>{"v1", "links", "a b"});
  CHECK(Split("/v1/links/a%2Fb") == std::vector<std::string>{"v1", "links", "a/b"});
  for (const char* bad : {"", "v1/links", "/v1//links", "/v1/links/", "/v1/%2", "/v1/%zz"}) {
    INFO(bad);
    const absl::StatusOr<std::vector<std::string>> segments = SplitPath(bad);
    REQUIRE_FALSE(segments.ok());
    CHECK(segments.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StartsWith(segments.status().message(), "path: "));
  }
  std::string deep;
  for (size_t i = 0; i <= kMaxPathSegments; ++i) deep += "/a";
  CHECK(SplitPath(deep).status().message() == "path: more than 32 segments");
}

TEST_CASE("a template binds one-segment variables and its verb ends the last segment",
          "[services/shorten/http][path_template]") {
  const PathTemplate get = Parsed("/v1/links/{code}");
  const PathTemplate update = Parsed("/v1/links/{link.code}");
  const PathTemplate revoke = Parsed("/v1/apiKeys/{id=*}:revoke");
  const PathTemplate png = Parsed("/v1/links/{code}/qr.png");
  CHECK(get.Variables() == std::vector<std::string>{"code"});
  CHECK(update.Variables() == std::vector<std::string>{"link.code"});
  CHECK(revoke.verb() == "revoke");

  CHECK(get.Match(Split("/v1/links/Ab3x")) == PathBindings{{"code", "Ab3x"}});
  CHECK(update.Match(Split("/v1/links/my%20alias")) == PathBindings{{"link.code", "my alias"}});
  CHECK(revoke.Match(Split("/v1/apiKeys/17:revoke")) == PathBindings{{"id", "17"}});
  CHECK(png.Match(Split("/v1/links/Ab3x/qr.png")) == PathBindings{{"code", "Ab3x"}});

  CHECK_FALSE(get.Match(Split("/v1/links")).has_value());
  CHECK_FALSE(get.Match(Split("/v1/links/a/b")).has_value());
  CHECK_FALSE(get.Match(Split("/v2/links/a")).has_value());
  CHECK_FALSE(revoke.Match(Split("/v1/apiKeys/17")).has_value());
  CHECK_FALSE(revoke.Match(Split("/v1/apiKeys/17:undo")).has_value());
  CHECK_FALSE(revoke.Match(Split("/v1/apiKeys/:revoke")).has_value());
  CHECK_FALSE(png.Match(Split("/v1/links/Ab3x/qr.svg")).has_value());
}

TEST_CASE("templates outside the supported subset are refused naming themselves",
          "[services/shorten/http][path_template]") {
  for (const char* bad : {"", "v1/links", "/v1/*", "/v1/**", "/v1/{name=links/*}", "/v1/{}",
                          "/v1/{1code}", "/v1/x{code}", "/v1/links:", "/v1/a b"}) {
    INFO(bad);
    const absl::StatusOr<PathTemplate> parsed = PathTemplate::Parse(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(absl::StrContains(parsed.status().message(), absl::StrCat("\"", bad, "\"")));
  }
}

TEST_CASE("templates with a verb, then with more literals, are the more specific",
          "[services/shorten/http][path_template]") {
  CHECK(Parsed("/v1/links/{code}:revoke").Specificity() > Parsed("/v1/links/{code}").Specificity());
  CHECK(Parsed("/v1/links/{code}/qr.png").Specificity() > Parsed("/v1/links/{code}").Specificity());
}

}  // namespace
}  // namespace shortener::service::http
