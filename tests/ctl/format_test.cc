// shortenctl output: human tables and JSON lines of the response protos.
#include "services/shortenctl/format.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "google/protobuf/util/json_util.h"
#include "lib/grpcutil/status.h"

namespace shortener::ctl {
namespace {

google::protobuf::Timestamp Ts(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  return grpcutil::ToProtoTimestamp(
      absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s), absl::UTCTimeZone()));
}

v1::Link SampleLink() {
  v1::Link link;
  link.set_code("aB3dE9x");
  link.set_short_url("https://sho.rt/aB3dE9x");
  link.set_long_url("https://example.com/");
  link.set_state(v1::LINK_STATE_ACTIVE);
  link.set_redirect_type(v1::REDIRECT_TYPE_FOUND);
  *link.mutable_create_time() = Ts(2026, 1, 2, 3, 4, 5);
  link.set_owner("anonymous");
  return link;
}

v1::ShortenResponse SampleShorten() {
  v1::ShortenResponse response;
  response.set_code("aB3dE9x");
  response.set_short_url("https://sho.rt/aB3dE9x");
  response.set_created(true);
  *response.mutable_link() = SampleLink();
  return response;
}

// Parses a JSON line back, so tests compare messages, not key order.
template <typename Message>
Message FromJson(const std::string& line) {
  Message message;
  REQUIRE(google::protobuf::util::JsonStringToMessage(line, &message).ok());
  return message;
}

TEST_CASE("shorten prints the short URL and a compact table", "[ctl]") {
  CHECK(FormatShortenResponse(SampleShorten(), /*json=*/false) ==
        "https://sho.rt/aB3dE9x\n"
        "  code     aB3dE9x\n"
        "  long_url https://example.com/\n"
        "  created  yes\n"
        "  expires  never\n");
}

TEST_CASE("shorten shows an existing link and its expiry", "[ctl]") {
  v1::ShortenResponse response = SampleShorten();
  response.set_created(false);
  *response.mutable_link()->mutable_expire_time() = Ts(2027, 1, 1);
  const std::string out = FormatShortenResponse(response, false);
  CHECK(absl::StrContains(out, "  created  no\n"));
  CHECK(absl::StrContains(out, "  expires  2027-01-01T00:00:00Z\n"));
}

TEST_CASE("shorten --json is one line with proto field names and defaults", "[ctl]") {
  v1::ShortenResponse response = SampleShorten();
  response.set_created(false);
  const std::string out = FormatShortenResponse(response, /*json=*/true);
  CHECK(absl::EndsWith(out, "}\n"));
  CHECK(out.find('\n') == out.size() - 1);
  CHECK(absl::StrContains(out, "\"short_url\":\"https://sho.rt/aB3dE9x\""));
  CHECK(absl::StrContains(out, "\"long_url\":\"https://example.com/\""));
  CHECK(absl::StrContains(out, "\"created\":false"));
  CHECK(absl::StrContains(out, "\"create_time\":\"2026-01-02T03:04:05Z\""));
  CHECK(absl::StrContains(out, "\"state\":\"LINK_STATE_ACTIVE\""));
  CHECK_FALSE(absl::StrContains(out, "shortUrl"));
  CHECK(FromJson<v1::ShortenResponse>(out).SerializeAsString() == response.SerializeAsString());
}

TEST_CASE("resolve prints state, target, redirect and expiry", "[ctl]") {
  v1::ResolveResponse response;
  response.set_long_url("https://example.com/");
  response.set_state(v1::LINK_STATE_ACTIVE);
  response.set_redirect_type(v1::REDIRECT_TYPE_MOVED_PERMANENTLY);
  *response.mutable_expire_time() = Ts(2027, 1, 1, 12, 30, 0);
  CHECK(FormatResolveResponse("aB3dE9x", response, false) ==
        "aB3dE9x\n"
        "  state    ACTIVE\n"
        "  long_url https://example.com/\n"
        "  redirect 301\n"
        "  expires  2027-01-01T12:30:00Z\n");
}

TEST_CASE("resolve of a revoked link has no target and the default redirect", "[ctl]") {
  v1::ResolveResponse response;
  response.set_state(v1::LINK_STATE_REVOKED);
  CHECK(FormatResolveResponse("spring-sale", response, false) ==
        "spring-sale\n"
        "  state    REVOKED\n"
        "  redirect 302\n"
        "  expires  never\n");
}

TEST_CASE("resolve --json round-trips", "[ctl]") {
  v1::ResolveResponse response;
  response.set_long_url("https://example.com/a?b=c&d");
  response.set_state(v1::LINK_STATE_EXPIRED);
  response.set_redirect_type(v1::REDIRECT_TYPE_TEMPORARY);
  *response.mutable_expire_time() = Ts(2026, 6, 1);
  const std::string out = FormatResolveResponse("x", response, true);
  CHECK(absl::StrContains(out, "\"redirect_type\":\"REDIRECT_TYPE_TEMPORARY\""));
  CHECK(absl::StrContains(out, "\"expire_time\":\"2026-06-01T00:00:00Z\""));
  CHECK(FromJson<v1::ResolveResponse>(out).SerializeAsString() == response.SerializeAsString());
}

TEST_CASE("get and revoke print every field of the link", "[ctl]") {
  v1::Link link = SampleLink();
  link.set_state(v1::LINK_STATE_REVOKED);
  link.set_redirect_type(v1::REDIRECT_TYPE_PERMANENT);
  *link.mutable_revoke_time() = Ts(2026, 2, 3);
  link.set_click_count(42);
  CHECK(FormatLink(link, false) ==
        "https://sho.rt/aB3dE9x\n"
        "  code     aB3dE9x\n"
        "  long_url https://example.com/\n"
        "  state    REVOKED\n"
        "  redirect 308\n"
        "  created  2026-01-02T03:04:05Z\n"
        "  expires  never\n"
        "  revoked  2026-02-03T00:00:00Z\n"
        "  owner    anonymous\n"
        "  clicks   42\n");
  CHECK(FromJson<v1::Link>(FormatLink(link, true)).SerializeAsString() == link.SerializeAsString());
}

TEST_CASE("times are RFC 3339 UTC to the second in tables, exact in JSON", "[ctl]") {
  google::protobuf::Timestamp ts = Ts(2026, 12, 31, 23, 59, 59);
  CHECK(FormatTimestamp(ts) == "2026-12-31T23:59:59Z");
  ts.set_nanos(999999000);
  CHECK(FormatTimestamp(ts) == "2026-12-31T23:59:59Z");
  v1::ResolveResponse response;
  *response.mutable_expire_time() = ts;
  CHECK(absl::StrContains(FormatResolveResponse("x", response, true),
                          "\"expire_time\":\"2026-12-31T23:59:59.999999Z\""));
}

TEST_CASE("names of states and redirect types", "[ctl]") {
  CHECK(StateName(v1::LINK_STATE_ACTIVE) == "ACTIVE");
  CHECK(StateName(v1::LINK_STATE_EXPIRED) == "EXPIRED");
  CHECK(StateName(v1::LINK_STATE_UNSPECIFIED) == "UNSPECIFIED");
  CHECK(RedirectName(v1::REDIRECT_TYPE_UNSPECIFIED) == "302");
  CHECK(RedirectName(v1::REDIRECT_TYPE_TEMPORARY) == "307");
}

TEST_CASE("batch prints one line per URL: short URL or error, then the URL", "[ctl]") {
  v1::BatchShortenResult ok;
  *ok.mutable_response() = SampleShorten();
  CHECK(FormatBatchResult("https://example.com/", ok, false) ==
        "https://sho.rt/aB3dE9x\thttps://example.com/\n");

  v1::BatchShortenResult failed;
  failed.mutable_error()->set_code(3);
  failed.mutable_error()->set_message("long_url: scheme \"ftp\" is not allowed");
  CHECK(FormatBatchResult("ftp://x/", failed, false) ==
        "error: INVALID_ARGUMENT: long_url: scheme \"ftp\" is not allowed\tftp://x/\n");
  CHECK(absl::StartsWith(FormatBatchResult("ftp://x/", failed, true), "{\"error\":{\"code\":3,"));
  CHECK(absl::StartsWith(FormatBatchResult("u", v1::BatchShortenResult(), false),
                         "error: UNKNOWN: "));
}

}  // namespace
}  // namespace shortener::ctl
