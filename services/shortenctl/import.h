// `shortenctl import FILE`: links from a CSV file (link_csv.h's columns)
// through BatchShorten.
//
// - Batches of at most 1000 rows and 512 KiB; a batch the service finds
//   too large (its size limit, or more items than the key's rate-limit
//   burst) is halved, and the smaller size kept.
// - Every row's request_id is "import-" and 32 hex digits of the SHA-256 of
//   what it asks for (URL, code, labels, expiry, redirect, budget,
//   force_new): running the same rows again, whole or from where a run
//   stopped, in this file or another, creates no link twice (the service
//   answers the first call's link, created = false); a corrected row is a
//   new request.
// - The code becomes the custom alias (--codes=keep). A code that cannot be
//   one (alias syntax here; reserved, the shape of a generated code or
//   taken, as the service answers) rejects the row, or with
//   --codes=keep_or_new gives it a generated code (request_id + "-new");
//   --codes=new ignores codes.
// - UNAVAILABLE, DEADLINE_EXCEEDED and RESOURCE_EXHAUSTED, of the call or
//   of items, are retried with backoff (retry.h), honouring retry-after-ms;
//   any other failure of a call stops the import (exit 1) where it stands.
// - Resumable: after each batch the state file (FILE.import-state, or
//   --state_file) records how far the file is done and how long the
//   --rejects and -o files were; a run that finds it (for the same file)
//   goes on from there, truncating those files to what the state says.
//   It is removed when the import completes; --restart ignores it.
// - Rejected rows go to --rejects=FILE as they were, plus import_line and
//   import_error, or without it (the first 10) to stderr. -o FILE gets a
//   row per imported link: line,old_code,code,short_url,long_url,created.
// - --dry_run checks every row (the service's rules excepted) and calls
//   nothing. A progress line on a terminal (progress.h); a summary on
//   stderr at the end.
// Exit status: 0 when every row was imported (or skipped: revoked or
// expired in an export), 1 when some were rejected or a call failed, 2
// for a usage error (no FILE, a bad header or flag, a state file of
// another file).
// Not thread-safe (one run at a time).
#ifndef SHORTENER_SERVICES_SHORTENCTL_IMPORT_H_
#define SHORTENER_SERVICES_SHORTENCTL_IMPORT_H_

#include <string>
#include <vector>

#include "services/shortenctl/commands.h"

namespace shortener::ctl {

// Runs `import ARGS` (args after the command) with the API key already
// resolved into options.api_key. Returns the exit code.
int RunImport(const Options& options, const std::vector<std::string>& args, Console io);

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_IMPORT_H_
