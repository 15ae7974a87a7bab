// `shortenctl stats --csv`: click statistics as CSV for spreadsheets.
//
// Two tables, RFC 4180 with CRLF line ends and a header row each:
//   buckets  start_time,human_clicks,bot_clicks,unique_visitors
//            one row per bucket, oldest first; start_time RFC 3339 UTC
//            ("2030-01-01T00:00:00Z")
//   top      list,rank,value,clicks
//            one row per entry of every top list of GetClickStatsResponse
//            (each repeated CountedValue field named top_*, found by
//            reflection, so lists added to the proto appear without a
//            change here), in the proto's field order; list is the field
//            name without "top_" ("browsers", "cities"), rank from 1
// Cells are csv.h's CsvCell: quoted when they need to be, and guarded
// against formula injection (referrer hosts and city names come from
// outsiders).
//
// The formatting functions are pure and thread-safe; WriteClickStatsCsv
// writes to the console and to the --csv_top file.
#ifndef SHORTENER_SERVICES_SHORTENCTL_STATS_CSV_H_
#define SHORTENER_SERVICES_SHORTENCTL_STATS_CSV_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "services/shortenctl/args.h"
#include "services/shortenctl/commands.h"
#include "services/shortenctl/csv.h"  // CsvCell
#include "shortener/v1/shortener.pb.h"

namespace shortener::ctl {

// The buckets table, header included.
std::string FormatBucketsCsv(const v1::GetClickStatsResponse& response);

// The top-lists table, header included (and nothing else when every list
// is empty).
std::string FormatTopListsCsv(const v1::GetClickStatsResponse& response);

// The usage checks of --csv and --csv_top, before any call: --json does not
// go with them, and a --csv_top FILE must be writable (it is opened for
// appending, which creates it but leaves an old export whole until the
// call has succeeded). INVALID_ARGUMENT naming the flag otherwise.
absl::Status CheckCsvFlags(const StatsFlags& flags, bool json);

// Writes the buckets table to io.out and, with --csv_top, the top-lists
// table to its FILE, or for "-" to io.out after one empty line. Returns the
// exit code: kExitServiceError, with "shortenctl: cannot write FILE: why"
// on io.err, when the file cannot be written.
int WriteClickStatsCsv(const StatsFlags& flags, const v1::GetClickStatsResponse& response,
                       Console io);

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_STATS_CSV_H_
