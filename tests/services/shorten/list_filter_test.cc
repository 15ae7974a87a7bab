// ListLinks' filter, order_by and page tokens, as pure functions
// (list_filter.h, page_token.h).
#include "services/shorten/list_filter.h"

#include <catch2/catch.hpp>
#include <string>

#include "services/shorten/page_token.h"
#include "tests/support/status_matchers.h"

namespace shortener::service {
namespace {

using shortener::testing::HasCodeAndMessage;
using shortener::testing::IsOk;

absl::Time At(const char* text) {
  absl::Time t;
  std::string error;
  REQUIRE(absl::ParseTime(absl::RFC3339_full, text, &t, &error));
  return t;
}

TEST_CASE("list filter: every field, combined with AND", "[services/shorten][list]") {
  auto parsed = ParseListFilter(
      "labels.campaign = \"spring\" AND state != EXPIRED AND labels.channel='sms'"
      " AND create_time >= \"2026-11-01T00:00:00Z\" AND create_time < '2026-12-01T00:00:00+01:00'"
      " AND long_url_host = \"B\xC3\xBC"
      "cher.Example\"");
  REQUIRE_THAT(parsed, IsOk());
  REQUIRE(parsed->labels.size() == 2);
  CHECK(parsed->labels[0].key == "campaign");
  CHECK(parsed->labels[0].value == "spring");
  CHECK(parsed->labels[1].key == "channel");
  CHECK(parsed->status == store::LinkStatus::kExpired);
  CHECK(parsed->status_negated);
  CHECK(parsed->created_from == At("2026-11-01T00:00:00Z"));
  CHECK(parsed->created_before == At("2026-11-30T23:00:00Z"));
  CHECK(parsed->host == "xn--bcher-kva.example");

  auto empty = ParseListFilter("  ");
  REQUIRE_THAT(empty, IsOk());
  CHECK(empty->labels.empty());
  CHECK_FALSE(empty->status.has_value());
  CHECK_FALSE(empty->created_from.has_value());
  CHECK_FALSE(empty->host.has_value());
}

TEST_CASE("list filter: create time bounds land on whole microseconds and narrow each other",
          "[services/shorten][list]") {
  const absl::Time floor = At("2026-11-01T00:00:00Z");
  const absl::Time next = floor + absl::Microseconds(1);
  // Half a microsecond past a whole one.
  CHECK(ParseListFilter("create_time > \"2026-11-01T00:00:00.0000005Z\"")->created_from == next);
  CHECK(ParseListFilter("create_time >= \"2026-11-01T00:00:00.0000005Z\"")->created_from == next);
  CHECK(ParseListFilter("create_time < \"2026-11-01T00:00:00.0000005Z\"")->created_before == next);
  CHECK(ParseListFilter("create_time <= \"2026-11-01T00:00:00.0000005Z\"")->created_before == next);
  CHECK(ParseListFilter("create_time > \"2026-11-01T00:00:00Z\"")->created_from == next);
  CHECK(ParseListFilter("create_time >= \"2026-11-01T00:00:00Z\"")->created_from == floor);
  CHECK(ParseListFilter("create_time <= \"2026-11-01T00:00:00Z\"")->created_before == next);
  auto narrowed = ParseListFilter(
      "create_time > \"2026-01-01T00:00:00Z\" AND create_time > \"2026-06-01T00:00:00Z\""
      " AND create_time < \"2026-12-01T00:00:00Z\" AND create_time < \"2026-09-01T00:00:00Z\"");
  REQUIRE_THAT(narrowed, IsOk());
  CHECK(narrowed->created_from == At("2026-06-01T00:00:00Z") + absl::Microseconds(1));
  CHECK(narrowed->created_before == At("2026-09-01T00:00:00Z"));
}

TEST_CASE("list filter: refusals name the term", "[services/shorten][list]") {
  const auto refused = [](const char* filter, const char* message) {
    INFO(filter);
    CHECK_THAT(ParseListFilter(filter),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument, message));
  };
  refused("owner = \"x\"", "filter: unknown field \"owner\" (supported: labels.KEY, state,");
  refused("state = ACTIVE AND state = REVOKED", "filter: state may be given once");
  refused("state < ACTIVE", "filter: state supports only \"=\" and \"!=\", got \"<\"");
  refused("state = active", "filter: state must be ACTIVE, REVOKED or EXPIRED, got \"active\"");
  refused("create_time = \"2026-11-01T00:00:00Z\"",
          "filter: create_time supports <, <=, > and >=, got \"=\"");
  refused("create_time > \"2026-11-01\"", "filter: create_time wants an RFC 3339 time");
  refused("create_time > \"infinite-future\"", "filter: create_time must be between");
  refused("create_time < \"10000-01-01T00:00:00Z\"", "filter: create_time");
  refused("long_url_host != \"example.com\"", "filter: long_url_host supports only \"=\"");
  refused("long_url_host = \"https://example.com/\"",
          "filter: long_url_host must be a host name or an address");
  refused("long_url_host = \"a.com\" AND long_url_host = \"b.com\"",
          "filter: long_url_host may be given once");
  refused("labels.campaign = \"a\" AND labels.campaign = \"b\"",
          "filter: labels.campaign is given two values");
  refused("labels.campaign != \"a\"", "filter: labels support only \"=\"");
  refused("labels.campaign = \"A B\"", "filter: labels: value of \"campaign\" must match");
  refused("state = ACTIVE OR state = REVOKED", "filter: ");
  // The same label twice is one condition.
  auto twice = ParseListFilter("labels.campaign = \"a\" AND labels.campaign = 'a'");
  REQUIRE_THAT(twice, IsOk());
  CHECK(twice->labels.size() == 1);
}

TEST_CASE("list order_by", "[services/shorten][list]") {
  CHECK(*ParseListOrder("") == store::LinkOrder::kNewestFirst);
  CHECK(*ParseListOrder("create_time desc") == store::LinkOrder::kNewestFirst);
  CHECK(*ParseListOrder("create_time") == store::LinkOrder::kOldestFirst);
  CHECK(*ParseListOrder("\tcreate_time  asc ") == store::LinkOrder::kOldestFirst);
  CHECK(*ParseListOrder("click_count desc") == store::LinkOrder::kMostClicked);
  for (const char* bad : {"click_count", "click_count asc", "create_time DESC", "name",
                          "create_time desc, click_count desc", "create_time desc x"}) {
    INFO(bad);
    CHECK_THAT(ParseListOrder(bad),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "order_by: must be"));
  }
}

TEST_CASE("page tokens round-trip their cursor and belong to one listing",
          "[services/shorten][list]") {
  store::ListCursor cursor;
  cursor.unclicked = true;
  cursor.clicks = -5;  // whatever a forged token says, it decodes to a cursor
  cursor.create_time = absl::FromUnixMicros(-123456789);
  cursor.id = 9223372036854775807;
  const uint64_t fingerprint =
      ListingFingerprint("acme", "state = ACTIVE", store::LinkOrder::kMostClicked);
  const std::string token = EncodePageToken(cursor, fingerprint);
  CHECK(token.size() == 46);
  CHECK(
      token.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
      std::string::npos);
  auto decoded = DecodePageToken(token, fingerprint);
  REQUIRE_THAT(decoded, IsOk());
  CHECK(*decoded == cursor);

  // Tenant, filter and order each change the fingerprint, and "ab"+"c" is
  // not "a"+"bc".
  const uint64_t others[] = {
      ListingFingerprint("acme2", "state = ACTIVE", store::LinkOrder::kMostClicked),
      ListingFingerprint("acme", "state = REVOKED", store::LinkOrder::kMostClicked),
      ListingFingerprint("acme", "state = ACTIVE", store::LinkOrder::kNewestFirst),
      ListingFingerprint("acmes", "tate = ACTIVE", store::LinkOrder::kMostClicked)};
  for (uint64_t other : others) {
    CHECK(other != fingerprint);
    CHECK_THAT(DecodePageToken(token, other),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                 "page_token: it belongs to another filter, order_by or tenant"));
  }
  for (const std::string& bad :
       {std::string("x"), token.substr(1), token + "A", std::string(200, 'A'), std::string("!!!!"),
        std::string(token).replace(0, 2, "Ag")}) {
    INFO(bad);
    CHECK_THAT(DecodePageToken(bad, fingerprint),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                 "page_token: not a token this service issued"));
  }
}

}  // namespace
}  // namespace shortener::service
