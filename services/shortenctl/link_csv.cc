#include "services/shortenctl/link_csv.h"

#include <array>
#include <cstdint>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "lib/common/redirect_status.h"
#include "lib/common/status_macros.h"
#include "lib/common/utf8.h"
#include "lib/grpcutil/status.h"
#include "proto/redirect_type.h"
#include "services/shortenctl/args.h"
#include "services/shortenctl/csv.h"
#include "services/shortenctl/format.h"

namespace shortener::ctl {
namespace {

struct NamedColumn {
  absl::string_view name;
  LinkColumn column;
};

// In export order; the last two only import's rejects file writes.
constexpr std::array<NamedColumn, 12> kColumns = {{
    {"code", LinkColumn::kCode},
    {"long_url", LinkColumn::kLongUrl},
    {"labels", LinkColumn::kLabels},
    {"expire_time", LinkColumn::kExpireTime},
    {"redirect_type", LinkColumn::kRedirectType},
    {"max_clicks", LinkColumn::kMaxClicks},
    {"short_url", LinkColumn::kShortUrl},
    {"state", LinkColumn::kState},
    {"create_time", LinkColumn::kCreateTime},
    {"click_count", LinkColumn::kClickCount},
    {"import_line", LinkColumn::kImportLine},
    {"import_error", LinkColumn::kImportError},
}};
constexpr size_t kExportColumns = 10;
constexpr absl::string_view kIgnore = "-";

std::optional<LinkColumn> ColumnNamed(absl::string_view name) {
  for (const NamedColumn& c : kColumns) {
    if (c.name == name) return c.column;
  }
  return std::nullopt;
}

absl::string_view NameOf(LinkColumn column) {
  for (const NamedColumn& c : kColumns) {
    if (c.column == column) return c.name;
  }
  return "-";
}

std::string HeaderName(absl::string_view text) {
  return absl::AsciiStrToLower(absl::StripAsciiWhitespace(StripFormulaGuard(text)));
}

std::string Quoted(absl::string_view text) {
  return absl::StrCat("\"", absl::CHexEscape(text.substr(0, 80)), "\"");
}

// The cell of `column` in `fields`, as a value: guard stripped, trimmed;
// empty when the file has no such column.
absl::string_view Cell(const HeaderMap& header, const std::vector<std::string>& fields,
                       LinkColumn column) {
  const int i = header.IndexOf(column);
  if (i < 0) return "";
  return absl::StripAsciiWhitespace(StripFormulaGuard(fields[static_cast<size_t>(i)]));
}

absl::Status SetExpireTime(absl::string_view text, v1::ShortenRequest* request) {
  absl::Time t;
  std::string error;
  const std::string value(text);
  if (!absl::ParseTime(absl::RFC3339_full, value, &t, &error) &&
      !absl::ParseTime("%Y-%m-%d", value, &t, &error)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expire_time: ", Quoted(text),
        " is neither an RFC 3339 time (2027-01-01T00:00:00Z) nor a date (2027-01-01)"));
  }
  *request->mutable_expire_time() = grpcutil::ToProtoTimestamp(t);
  return absl::OkStatus();
}

absl::Status SetRedirectType(absl::string_view text, v1::ShortenRequest* request) {
  int status = 0;
  if (!absl::SimpleAtoi(text, &status) || !IsRedirectStatus(status)) {
    return absl::InvalidArgumentError(
        absl::StrCat("redirect_type: must be 301, 302, 307 or 308, got ", Quoted(text)));
  }
  request->set_redirect_type(RedirectTypeOf(status));
  return absl::OkStatus();
}

absl::Status SetMaxClicks(absl::string_view text, v1::ShortenRequest* request) {
  int64_t clicks = 0;
  if (!absl::SimpleAtoi(text, &clicks) || clicks < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_clicks: must be a whole number >= 0 (0: unlimited), got ", Quoted(text)));
  }
  request->set_max_clicks(clicks);
  return absl::OkStatus();
}

// A proto string field must hold UTF-8, or the whole batch fails to parse
// on the service's side: refuse the row here instead.
absl::Status CheckUtf8(const HeaderMap& header, const std::vector<std::string>& fields) {
  for (size_t i = 0; i < fields.size(); ++i) {
    const LinkColumn column = header.columns[i];
    if (column != LinkColumn::kCode && column != LinkColumn::kLongUrl &&
        column != LinkColumn::kLabels) {
      continue;
    }
    const utf8::TextFault fault = utf8::FindTextFault(fields[i]);
    if (fault.kind == utf8::TextFault::Kind::kInvalidUtf8) {
      return absl::InvalidArgumentError(
          absl::StrCat(NameOf(column), ": invalid UTF-8 at byte ", fault.position + 1));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> ExportHeader() {
  std::vector<std::string> header;
  for (size_t i = 0; i < kExportColumns; ++i) header.emplace_back(kColumns[i].name);
  return header;
}

std::vector<std::string> ExportRow(const v1::Link& link) {
  const std::map<std::string, std::string> labels(link.labels().begin(), link.labels().end());
  return {link.code(),
          link.long_url(),
          absl::StrJoin(labels, ",", absl::PairFormatter("=")),
          link.has_expire_time() ? FormatTimestamp(link.expire_time()) : "",
          RedirectName(link.redirect_type()),
          link.max_clicks() > 0 ? absl::StrCat(link.max_clicks()) : "",
          link.short_url(),
          StateName(link.state()),
          link.has_create_time() ? FormatTimestamp(link.create_time()) : "",
          absl::StrCat(link.click_count())};
}

absl::StatusOr<std::map<std::string, std::string>> ParseColumnRenames(absl::string_view flag) {
  std::map<std::string, std::string> renames;
  for (absl::string_view item : absl::StrSplit(flag, ',', absl::SkipWhitespace())) {
    const size_t colon = item.rfind(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("--columns: expected THEIRS:OURS, got ", Quoted(item)));
    }
    const std::string theirs = HeaderName(item.substr(0, colon));
    const std::string ours = HeaderName(item.substr(colon + 1));
    if (ours != kIgnore && !ColumnNamed(ours).has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--columns: ", Quoted(ours), " is not a column (code, long_url, labels, expire_time, ",
          "redirect_type, max_clicks, or - to ignore)"));
    }
    if (!renames.emplace(theirs, ours).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--columns: ", Quoted(theirs), " is mapped twice"));
    }
  }
  return renames;
}

int HeaderMap::IndexOf(LinkColumn column) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == column) return static_cast<int>(i);
  }
  return -1;
}

absl::StatusOr<HeaderMap> MapHeader(const std::vector<std::string>& header,
                                    const std::map<std::string, std::string>& renames,
                                    bool ignore_unknown) {
  HeaderMap map;
  std::vector<std::string> unknown;
  std::map<std::string, bool> renamed;  // which --columns names the header has
  for (size_t i = 0; i < header.size(); ++i) {
    const std::string theirs = HeaderName(header[i]);
    std::string name = theirs;
    if (auto it = renames.find(theirs); it != renames.end()) {
      name = it->second;
      renamed[theirs] = true;
    }
    std::optional<LinkColumn> column = ColumnNamed(name);
    if (name == kIgnore) {
      column = LinkColumn::kIgnored;
    } else if (!column.has_value()) {
      unknown.push_back(theirs);
      column = LinkColumn::kIgnored;
    } else if (const int before = map.IndexOf(*column); before >= 0) {
      return absl::InvalidArgumentError(absl::StrCat("header: columns ", before + 1, " and ", i + 1,
                                                     " are both ", NameOf(*column)));
    }
    map.columns.push_back(*column);
  }
  for (const auto& [theirs, ours] : renames) {
    if (renamed.count(theirs) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--columns: the header has no column ", Quoted(theirs)));
    }
  }
  if (map.IndexOf(LinkColumn::kLongUrl) < 0) {
    std::vector<std::string> names;
    for (const std::string& h : header) names.push_back(Quoted(HeaderName(h)));
    return absl::InvalidArgumentError(absl::StrCat("header: no long_url column (the header has ",
                                                   absl::StrJoin(names, ", "),
                                                   "; name yours with --columns=NAME:long_url)"));
  }
  if (!unknown.empty() && !ignore_unknown) {
    std::vector<std::string> names;
    for (const std::string& u : unknown) names.push_back(Quoted(u));
    return absl::InvalidArgumentError(absl::StrCat(
        "header: unknown columns ", absl::StrJoin(names, ", "),
        " (map them with --columns=NAME:COLUMN, NAME:- to ignore one, or --ignore_columns)"));
  }
  map.ignored = std::move(unknown);
  return map;
}

absl::StatusOr<ImportRow> ParseImportRow(const HeaderMap& header,
                                         const std::vector<std::string>& fields) {
  if (fields.size() != header.columns.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(fields.size(), " fields, but the header has ", header.columns.size()));
  }
  SHORTENER_RETURN_IF_ERROR(CheckUtf8(header, fields));
  ImportRow row;
  v1::ShortenRequest& request = row.request;
  request.set_long_url(std::string(Cell(header, fields, LinkColumn::kLongUrl)));
  if (request.long_url().empty()) return absl::InvalidArgumentError("long_url: empty");
  row.code = std::string(Cell(header, fields, LinkColumn::kCode));
  SHORTENER_ASSIGN_OR_RETURN(auto labels,
                             ParseLabelList("labels", Cell(header, fields, LinkColumn::kLabels)));
  request.mutable_labels()->insert(labels.begin(), labels.end());
  if (absl::string_view t = Cell(header, fields, LinkColumn::kExpireTime); !t.empty()) {
    SHORTENER_RETURN_IF_ERROR(SetExpireTime(t, &request));
  }
  if (absl::string_view t = Cell(header, fields, LinkColumn::kRedirectType); !t.empty()) {
    SHORTENER_RETURN_IF_ERROR(SetRedirectType(t, &request));
  }
  if (absl::string_view t = Cell(header, fields, LinkColumn::kMaxClicks); !t.empty()) {
    SHORTENER_RETURN_IF_ERROR(SetMaxClicks(t, &request));
  }
  const std::string state = absl::AsciiStrToUpper(Cell(header, fields, LinkColumn::kState));
  if (state == "REVOKED" || state == "EXPIRED") {
    row.skip = absl::StrCat("state ", state);
  } else if (!state.empty() && state != "ACTIVE") {
    return absl::InvalidArgumentError(
        absl::StrCat("state: must be ACTIVE, REVOKED or EXPIRED, got ", Quoted(state)));
  }
  return row;
}

}  // namespace shortener::ctl
