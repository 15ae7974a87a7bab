// The CSV form of links (link_csv.h): header mapping with --columns, a row
// to a ShortenRequest with errors naming the column, and a Link to the row
// export writes, which maps back to the same request.
#include "services/shortenctl/link_csv.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"

namespace shortener::ctl {
namespace {

using Strings = std::vector<std::string>;

HeaderMap Map(const Strings& header, const std::string& columns = "", bool ignore = false) {
  absl::StatusOr<std::map<std::string, std::string>> renames = ParseColumnRenames(columns);
  REQUIRE(renames.ok());
  absl::StatusOr<HeaderMap> map = MapHeader(header, *renames, ignore);
  INFO(map.status());
  REQUIRE(map.ok());
  return *map;
}

std::string MapError(const Strings& header, const std::string& columns = "") {
  absl::StatusOr<std::map<std::string, std::string>> renames = ParseColumnRenames(columns);
  if (!renames.ok()) return std::string(renames.status().message());
  absl::StatusOr<HeaderMap> map = MapHeader(header, *renames, false);
  return map.ok() ? "" : std::string(map.status().message());
}

TEST_CASE("link csv maps a header in any order and case, and export's columns",
          "[services/shortenctl][linkcsv]") {
  const HeaderMap map = Map({" Long_URL ", "CODE", "labels"});
  CHECK(map.IndexOf(LinkColumn::kLongUrl) == 0);
  CHECK(map.IndexOf(LinkColumn::kCode) == 1);
  CHECK(map.IndexOf(LinkColumn::kExpireTime) == -1);
  const HeaderMap exported = Map(ExportHeader());
  CHECK(exported.IndexOf(LinkColumn::kClickCount) == 9);
  CHECK(Map({"long_url", "import_line", "import_error"}).IndexOf(LinkColumn::kImportError) == 2);
}

TEST_CASE("link csv --columns renames theirs to ours and ignores with -",
          "[services/shortenctl][linkcsv]") {
  const HeaderMap map =
      Map({"Destination", "Slug", "Title"}, "destination:long_url, slug:code,title:-");
  CHECK(map.IndexOf(LinkColumn::kLongUrl) == 0);
  CHECK(map.IndexOf(LinkColumn::kCode) == 1);
  CHECK(map.columns[2] == LinkColumn::kIgnored);
  const HeaderMap ignoring = Map({"long_url", "title", "tags"}, "", /*ignore=*/true);
  CHECK(ignoring.ignored == Strings{"title", "tags"});
}

TEST_CASE("link csv refuses a header it cannot use, saying what to do",
          "[services/shortenctl][linkcsv]") {
  CHECK(MapError({"url", "slug"}) ==
        "header: no long_url column (the header has \"url\", \"slug\"; name yours with "
        "--columns=NAME:long_url)");
  CHECK(MapError({"long_url", "title", "tags"}) ==
        "header: unknown columns \"title\", \"tags\" (map them with --columns=NAME:COLUMN, "
        "NAME:- to ignore one, or --ignore_columns)");
  CHECK(MapError({"long_url", "url"}, "url:long_url") ==
        "header: columns 1 and 2 are both long_url");
  CHECK(MapError({"long_url"}, "slug:code") == "--columns: the header has no column \"slug\"");
  CHECK(MapError({"long_url"}, "slug") == "--columns: expected THEIRS:OURS, got \"slug\"");
  CHECK(absl::StartsWith(MapError({"long_url"}, "slug:alias"),
                         "--columns: \"alias\" is not a column"));
  CHECK(MapError({"long_url"}, "a:code,A:labels") == "--columns: \"a\" is mapped twice");
}

TEST_CASE("link csv reads a row into a request", "[services/shortenctl][linkcsv]") {
  const HeaderMap map = Map({"code", "long_url", "labels", "expire_time", "redirect_type",
                             "max_clicks", "state", "short_url"});
  absl::StatusOr<ImportRow> row =
      ParseImportRow(map, {" sale ", " https://example.com/a ", "campaign=spring, channel=sms",
                           "2030-01-01T00:00:00Z", "301", "100", "active", "https://x/sale"});
  INFO(row.status());
  REQUIRE(row.ok());
  CHECK(row->code == "sale");
  CHECK(row->skip.empty());
  const v1::ShortenRequest& r = row->request;
  CHECK(r.long_url() == "https://example.com/a");
  CHECK(r.custom_alias().empty());  // import's choice, not the row's
  CHECK(r.labels().size() == 2);
  CHECK(r.labels().at("channel") == "sms");
  CHECK(r.expire_time().seconds() == 1893456000);
  CHECK(r.redirect_type() == v1::REDIRECT_TYPE_MOVED_PERMANENTLY);
  CHECK(r.max_clicks() == 100);

  absl::StatusOr<ImportRow> dated =
      ParseImportRow(map, {"", "https://example.com/b", "", "2030-01-01", "", "", "REVOKED", ""});
  REQUIRE(dated.ok());
  CHECK(dated->request.expire_time().seconds() == 1893456000);
  CHECK(dated->request.redirect_type() == v1::REDIRECT_TYPE_UNSPECIFIED);
  CHECK(dated->skip == "state REVOKED");
}

TEST_CASE("link csv refuses a bad row naming the column", "[services/shortenctl][linkcsv]") {
  const HeaderMap map =
      Map({"code", "long_url", "labels", "expire_time", "redirect_type", "max_clicks", "state"});
  const Strings good = {"c", "https://e.com/", "", "", "", "", ""};
  struct Case {
    size_t column;
    std::string value;
    std::string message;
  };
  const std::vector<Case> cases = {
      {1, "  ", "long_url: empty"},
      {1, "https://e.com/\xff", "long_url: invalid UTF-8 at byte 15"},
      {0, "a\xc3", "code: invalid UTF-8 at byte 2"},
      {2, "campaign", "labels: expected KEY=VALUE, got \"campaign\""},
      {2, "a=1,a=2", "labels: key \"a\" given twice"},
      {3, "tomorrow",
       "expire_time: \"tomorrow\" is neither an RFC 3339 time (2027-01-01T00:00:00Z) nor a date "
       "(2027-01-01)"},
      {4, "303", "redirect_type: must be 301, 302, 307 or 308, got \"303\""},
      {5, "-1", "max_clicks: must be a whole number >= 0 (0: unlimited), got \"-1\""},
      {6, "gone", "state: must be ACTIVE, REVOKED or EXPIRED, got \"GONE\""},
  };
  for (const Case& c : cases) {
    Strings fields = good;
    fields[c.column] = c.value;
    absl::StatusOr<ImportRow> row = ParseImportRow(map, fields);
    INFO(c.value);
    REQUIRE_FALSE(row.ok());
    CHECK(row.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(row.status().message() == c.message);
  }
  absl::StatusOr<ImportRow> short_row = ParseImportRow(map, {"c", "https://e.com/"});
  CHECK(short_row.status().message() == "2 fields, but the header has 7");
}

TEST_CASE("link csv exports a link as a row that imports as the same request",
          "[services/shortenctl][linkcsv]") {
  v1::Link link;
  link.set_code("-sale");
  link.set_short_url("https://sho.rt/-sale");
  link.set_long_url("https://example.com/a,b");
  link.set_state(v1::LINK_STATE_ACTIVE);
  link.set_redirect_type(v1::REDIRECT_TYPE_PERMANENT);
  link.mutable_expire_time()->set_seconds(1893456000);
  link.mutable_create_time()->set_seconds(1767225600);
  link.set_max_clicks(5);
  link.set_click_count(42);
  (*link.mutable_labels())["channel"] = "sms";
  (*link.mutable_labels())["campaign"] = "spring";
  const Strings row = ExportRow(link);
  CHECK(row == Strings{"-sale", "https://example.com/a,b", "campaign=spring,channel=sms",
                       "2030-01-01T00:00:00Z", "308", "5", "https://sho.rt/-sale", "ACTIVE",
                       "2026-01-01T00:00:00Z", "42"});
  // Through CSV and back, the formula guard of "-sale" included.
  Strings cells;
  for (const std::string& cell : row) cells.push_back(cell == "-sale" ? "'-sale" : cell);
  absl::StatusOr<ImportRow> back = ParseImportRow(Map(ExportHeader()), cells);
  REQUIRE(back.ok());
  CHECK(back->code == "-sale");
  CHECK(back->request.long_url() == link.long_url());
  CHECK(back->request.redirect_type() == link.redirect_type());
  CHECK(back->request.expire_time().seconds() == 1893456000);
  CHECK(back->request.max_clicks() == 5);
  CHECK(back->request.labels().size() == 2);

  v1::Link plain;
  plain.set_code("k3Xq9aZ");
  CHECK(ExportRow(plain)[3].empty());  // never expires
  CHECK(ExportRow(plain)[4] == "302");
  CHECK(ExportRow(plain)[5].empty());  // no budget
}

}  // namespace
}  // namespace shortener::ctl
