// `shortenctl export`: a tenant's links (ListLinks, filtered and ordered as
// `list` does it) as CSV in link_csv.h's columns, which `import` takes
// back unchanged.
//
// - Pages of 1000 (--page_size) one after another, each written as it
//   arrives: one page in memory at a time. ListLinks calls that fail
//   UNAVAILABLE, DEADLINE_EXCEEDED or RESOURCE_EXHAUSTED are retried with
//   backoff (retry.h).
// - To a file (-o FILE): written to FILE.partial and renamed to FILE once
//   the last page is in, so FILE is never half an export. After each page
//   the state file (FILE.export-state, or --state_file) records the next
//   page's token and how long FILE.partial is; a run that finds it (for the
//   same filter, order and tenant) cuts FILE.partial to that length and goes
//   on from that page; --restart ignores it.
// - To stdout (no -o, or -o -): the header, then the rows. A failure says
//   the --page_token to go on from, which writes no header (append the
//   rest with >>).
// A progress line on a terminal; "export: N links written to FILE" on
// stderr at the end. Exit status 0, 1 when a call failed or the file could
// not be written, 2 for a usage error.
// Not thread-safe (one run at a time).
#ifndef SHORTENER_SERVICES_SHORTENCTL_EXPORT_H_
#define SHORTENER_SERVICES_SHORTENCTL_EXPORT_H_

#include <string>
#include <vector>

#include "services/shortenctl/commands.h"

namespace shortener::ctl {

// Runs `export` (no arguments) with the API key already resolved into
// options.api_key. Returns the exit code.
int RunExport(const Options& options, const std::vector<std::string>& args, Console io);

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_EXPORT_H_
