// The CSV form of links, shared by import and export: the columns, the
// header of a file to import (with --columns renames), one row to a
// ShortenRequest, and one Link to a row.
//
// Columns (a header names them in any order and case):
//   code           the link's code; import keeps it as the custom alias
//   long_url       the target (the only column import requires)
//   labels         k=v,k2=v2 in key order (as FieldChange shows them)
//   expire_time    RFC 3339 (2027-01-01T00:00:00Z) or a date; empty: never
//   redirect_type  301, 302, 307 or 308; empty: 302
//   max_clicks     the click budget; empty or 0: unlimited
//   short_url, state, create_time, click_count
//                  written by export for people; import skips a row whose
//                  state is REVOKED or EXPIRED and ignores the others
//   import_line, import_error
//                  what import adds to its rejects file; ignored on import,
//                  so that a corrected rejects file imports as it is
// Cells are read through StripFormulaGuard and trimmed of blanks.
//
// Pure functions; thread-safe.
#ifndef SHORTENER_SERVICES_SHORTENCTL_LINK_CSV_H_
#define SHORTENER_SERVICES_SHORTENCTL_LINK_CSV_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "shortener/v1/shortener.pb.h"

namespace shortener::ctl {

enum class LinkColumn {
  kCode,
  kLongUrl,
  kLabels,
  kExpireTime,
  kRedirectType,
  kMaxClicks,
  kShortUrl,
  kState,
  kCreateTime,
  kClickCount,
  kImportLine,
  kImportError,
  kIgnored,  // an unknown column import was told to ignore
};

// The header export writes: code, long_url, labels, expire_time,
// redirect_type, max_clicks, short_url, state, create_time, click_count.
std::vector<std::string> ExportHeader();

// A Link as the cells of ExportHeader (unquoted).
std::vector<std::string> ExportRow(const v1::Link& link);

// --columns=THEIRS:OURS,...: header name (lower case, trimmed) -> one of
// our column names, or "-" to ignore that column. INVALID_ARGUMENT naming
// --columns for an item without ":", an unknown column of ours, or a
// header name given twice.
absl::StatusOr<std::map<std::string, std::string>> ParseColumnRenames(absl::string_view flag);

// Which column each field of a file's rows is.
struct HeaderMap {
  std::vector<LinkColumn> columns;   // one per header field
  std::vector<std::string> ignored;  // the unknown header names ignored, in order

  // The field index of `column`, or -1 when the file has none.
  int IndexOf(LinkColumn column) const;
};

// The header of a file to import, its names renamed by `renames` (from
// ParseColumnRenames), compared without case and surrounding blanks.
// INVALID_ARGUMENT: no long_url column (listing the names found), a column
// twice, a --columns name not in the header, and unknown names (listing
// them) unless `ignore_unknown`.
absl::StatusOr<HeaderMap> MapHeader(const std::vector<std::string>& header,
                                    const std::map<std::string, std::string>& renames,
                                    bool ignore_unknown);

// One row to import.
struct ImportRow {
  // long_url, labels, expire_time, redirect_type, max_clicks of the row.
  v1::ShortenRequest request;
  std::string code;  // the row's code, trimmed; empty for none
  std::string skip;  // non-empty: the row is not to be imported, and why
};

// The row `fields` (as many as the header has) under `header`.
// INVALID_ARGUMENT for a row that cannot be a request, the message naming
// the column: "3 fields, but the header has 4", "long_url: empty",
// "labels: expected KEY=VALUE, got \"x\"", "expire_time: ...",
// "redirect_type: ...", "max_clicks: ...", "code: invalid UTF-8 at byte 2".
// Whether the values follow the service's rules is the service's to judge.
absl::StatusOr<ImportRow> ParseImportRow(const HeaderMap& header,
                                         const std::vector<std::string>& fields);

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_LINK_CSV_H_
