// shortenctl output: human tables and JSON lines of the response protos,
// API keys included (whose secret only `keys create` may print).
#include "services/shortenctl/format.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
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

TEST_CASE("shorten prints the short URL and a compact table", "[services/shortenctl]") {
  CHECK(FormatShortenResponse(SampleShorten(), /*json=*/false) ==
        "https://sho.rt/aB3dE9x\n"
        "  code     aB3dE9x\n"
        "  long_url https://example.com/\n"
        "  created  yes\n"
        "  expires  never\n");
}

TEST_CASE("shorten shows an existing link and its expiry", "[services/shortenctl]") {
  v1::ShortenResponse response = SampleShorten();
  response.set_created(false);
  *response.mutable_link()->mutable_expire_time() = Ts(2027, 1, 1);
  const std::string out = FormatShortenResponse(response, false);
  CHECK(absl::StrContains(out, "  created  no\n"));
  CHECK(absl::StrContains(out, "  expires  2027-01-01T00:00:00Z\n"));
}

TEST_CASE("shorten --json is one line with proto field names and defaults",
          "[services/shortenctl]") {
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

TEST_CASE("resolve prints state, target, redirect and expiry", "[services/shortenctl]") {
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

TEST_CASE("resolve of a revoked link has no target and the default redirect",
          "[services/shortenctl]") {
  v1::ResolveResponse response;
  response.set_state(v1::LINK_STATE_REVOKED);
  CHECK(FormatResolveResponse("spring-sale", response, false) ==
        "spring-sale\n"
        "  state    REVOKED\n"
        "  redirect 302\n"
        "  expires  never\n");
}

TEST_CASE("resolve --json round-trips", "[services/shortenctl]") {
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

TEST_CASE("get and revoke print every field of the link", "[services/shortenctl]") {
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

TEST_CASE("a link with a click budget shows it", "[services/shortenctl]") {
  v1::Link link = SampleLink();
  link.set_state(v1::LINK_STATE_EXPIRED);
  link.set_click_count(1003);
  link.set_max_clicks(1000);
  const std::string out = FormatLink(link, false);
  CHECK(absl::StrContains(out, "  state    EXPIRED\n"));
  CHECK(absl::StrContains(out, "  clicks   1003\n  budget   1000 clicks\n"));
  CHECK(absl::StrContains(FormatLink(link, true), "\"max_clicks\":\"1000\""));
}

TEST_CASE("times are RFC 3339 UTC to the second in tables, exact in JSON",
          "[services/shortenctl]") {
  google::protobuf::Timestamp ts = Ts(2026, 12, 31, 23, 59, 59);
  CHECK(FormatTimestamp(ts) == "2026-12-31T23:59:59Z");
  ts.set_nanos(999999000);
  CHECK(FormatTimestamp(ts) == "2026-12-31T23:59:59Z");
  v1::ResolveResponse response;
  *response.mutable_expire_time() = ts;
  CHECK(absl::StrContains(FormatResolveResponse("x", response, true),
                          "\"expire_time\":\"2026-12-31T23:59:59.999999Z\""));
}

TEST_CASE("names of states and redirect types", "[services/shortenctl]") {
  CHECK(StateName(v1::LINK_STATE_ACTIVE) == "ACTIVE");
  CHECK(StateName(v1::LINK_STATE_EXPIRED) == "EXPIRED");
  CHECK(StateName(v1::LINK_STATE_UNSPECIFIED) == "UNSPECIFIED");
  CHECK(RedirectName(v1::REDIRECT_TYPE_UNSPECIFIED) == "302");
  CHECK(RedirectName(v1::REDIRECT_TYPE_TEMPORARY) == "307");
}

TEST_CASE("batch prints one line per URL: short URL or error, then the URL",
          "[services/shortenctl]") {
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

// A key as the service would return it; the secret goes in
// CreateApiKeyResponse.key only.
constexpr char kSecret[] = "shk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG";

v1::ApiKey SampleKey() {
  v1::ApiKey key;
  key.set_id(3);
  key.set_name("edge");
  key.set_infrastructure(true);
  key.add_scopes("record_clicks");
  key.add_scopes("resolve");
  key.add_scopes("watch_invalidations");
  *key.mutable_create_time() = Ts(2026, 1, 2, 3, 4, 5);
  return key;
}

v1::ApiKey LimitedKey() {
  v1::ApiKey key;
  key.set_id(12);
  key.set_name("campaign tool");
  key.set_tenant("marketing");
  key.add_scopes("shorten");
  key.add_allowed_domains("example.com");
  key.add_allowed_domains("*.example.org");
  key.set_rate_per_second(2.5);
  key.set_burst(10);
  *key.mutable_create_time() = Ts(2026, 2, 1);
  *key.mutable_revoke_time() = Ts(2026, 3, 1, 12, 0, 0);
  return key;
}

TEST_CASE("keys create prints the key alone, and the note about it apart",
          "[services/shortenctl]") {
  v1::CreateApiKeyResponse response;
  response.set_key(kSecret);
  *response.mutable_api_key() = SampleKey();
  CHECK(FormatCreatedApiKey(response, false) == std::string(kSecret) + "\n");
  const std::string note = DescribeCreatedApiKey(response.api_key());
  CHECK(note ==
        "api key 3 \"edge\" created: infrastructure, no tenant, scopes "
        "record_clicks,resolve,watch_invalidations, domains any, rate unlimited; store the key "
        "now: it is not shown again\n");
  CHECK_FALSE(absl::StrContains(note, kSecret));
  CHECK(absl::StrContains(DescribeCreatedApiKey(LimitedKey()),
                          "domains example.com,*.example.org, rate 2.5/s burst 10;"));
}

TEST_CASE("keys create --json is one line with the key and the record", "[services/shortenctl]") {
  v1::CreateApiKeyResponse response;
  response.set_key(kSecret);
  *response.mutable_api_key() = LimitedKey();
  const std::string out = FormatCreatedApiKey(response, true);
  CHECK(out.find('\n') == out.size() - 1);
  CHECK(absl::StartsWith(out, absl::StrCat("{\"key\":\"", kSecret, "\",\"api_key\":{")));
  CHECK(absl::StrContains(out, "\"allowed_domains\":[\"example.com\",\"*.example.org\"]"));
  CHECK(FromJson<v1::CreateApiKeyResponse>(out).SerializeAsString() ==
        response.SerializeAsString());
}

TEST_CASE("keys list is a table with a header and a row per key", "[services/shortenctl]") {
  v1::ListApiKeysResponse response;
  *response.add_api_keys() = SampleKey();
  *response.add_api_keys() = LimitedKey();
  CHECK(FormatApiKeyList(response, false) ==
        "ID  NAME           TENANT            SCOPES                                     "
        "DOMAINS                    RATE            CREATED               REVOKED\n"
        "3   edge           (infrastructure)  record_clicks,resolve,watch_invalidations  "
        "any                        unlimited       2026-01-02T03:04:05Z  -\n"
        "12  campaign tool  marketing         shorten                                    "
        "example.com,*.example.org  2.5/s burst 10  2026-02-01T00:00:00Z  2026-03-01T12:00:00Z\n");
  CHECK(FormatApiKeyList(v1::ListApiKeysResponse(), false) ==
        "ID  NAME  TENANT  SCOPES  DOMAINS  RATE  CREATED  REVOKED\n");
}

TEST_CASE("keys list --json is one ApiKey object per line", "[services/shortenctl]") {
  v1::ListApiKeysResponse response;
  *response.add_api_keys() = SampleKey();
  *response.add_api_keys() = LimitedKey();
  const std::string out = FormatApiKeyList(response, true);
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  REQUIRE(lines.size() == 2);
  CHECK(FromJson<v1::ApiKey>(lines[0]).SerializeAsString() == SampleKey().SerializeAsString());
  CHECK(FromJson<v1::ApiKey>(lines[1]).SerializeAsString() == LimitedKey().SerializeAsString());
  CHECK(absl::StrContains(lines[0], "\"rate_per_second\":0"));
  CHECK(absl::StrContains(lines[0], "\"infrastructure\":true"));
  CHECK(FormatApiKeyList(v1::ListApiKeysResponse(), true).empty());
}

TEST_CASE("keys list and keys revoke never print a secret", "[services/shortenctl]") {
  // The record has no field for the secret; this guards against a
  // formatter that is handed the create response instead of the record.
  v1::ListApiKeysResponse list;
  *list.add_api_keys() = SampleKey();
  for (bool json : {false, true}) {
    CHECK_FALSE(absl::StrContains(FormatApiKeyList(list, json), "shk_"));
    CHECK_FALSE(absl::StrContains(FormatApiKey(SampleKey(), json), "shk_"));
  }
}

TEST_CASE("keys revoke prints the record of the key", "[services/shortenctl]") {
  CHECK(FormatApiKey(LimitedKey(), false) ==
        "api key 12 \"campaign tool\"\n"
        "  tenant   marketing\n"
        "  scopes   shorten\n"
        "  domains  example.com,*.example.org\n"
        "  rate     2.5/s burst 10\n"
        "  created  2026-02-01T00:00:00Z\n"
        "  revoked  2026-03-01T12:00:00Z\n");
  CHECK(absl::StartsWith(FormatApiKey(SampleKey(), false),
                         "api key 3 \"edge\"\n"
                         "  tenant   (infrastructure)\n"
                         "  scopes   record_clicks,resolve,watch_invalidations\n"));
  const std::string json = FormatApiKey(LimitedKey(), true);
  CHECK(absl::StartsWith(json, "{\"id\":\"12\",\"name\":\"campaign tool\""));
  CHECK(FromJson<v1::ApiKey>(json).SerializeAsString() == LimitedKey().SerializeAsString());
}

TEST_CASE("stats prints each non-empty top list, regions, cities and networks included",
          "[services/shortenctl]") {
  v1::GetClickStatsRequest request;
  request.set_granularity(v1::GRANULARITY_DAY);
  v1::GetClickStatsResponse response;
  v1::ClickBucket* bucket = response.add_buckets();
  *bucket->mutable_start_time() = Ts(2030, 1, 1);
  bucket->set_human_clicks(4);
  response.set_total_human_clicks(4);
  auto add = [](google::protobuf::RepeatedPtrField<v1::CountedValue>* list, const char* value,
                int64_t clicks) {
    v1::CountedValue* v = list->Add();
    v->set_value(value);
    v->set_clicks(clicks);
  };
  add(response.mutable_top_countries(), "US", 4);
  add(response.mutable_top_regions(), "US-IL", 3);
  add(response.mutable_top_regions(), "US-MO", 1);
  add(response.mutable_top_cities(), "Springfield (US-IL)", 3);
  add(response.mutable_top_cities(), "Springfield (US-MO)", 1);
  add(response.mutable_top_networks(), "AS64500 Example Net B.V.", 4);
  const std::string out = FormatClickStats("aB3dE9x", request, response, /*json=*/false);
  CHECK(absl::StrContains(out,
                          "top countries US 4\n"
                          "top regions   US-IL 3, US-MO 1\n"
                          "top cities    Springfield (US-IL) 3, Springfield (US-MO) 1\n"
                          "top networks  AS64500 Example Net B.V. 4\n"));
  CHECK_FALSE(absl::StrContains(out, "top browsers"));  // empty: left out
  const auto parsed =
      FromJson<v1::GetClickStatsResponse>(FormatClickStats("aB3dE9x", request, response, true));
  REQUIRE(parsed.top_cities_size() == 2);
  CHECK(parsed.top_cities(1).value() == "Springfield (US-MO)");
  CHECK(parsed.top_networks(0).clicks() == 4);
}

}  // namespace
}  // namespace shortener::ctl
