// What import makes of its rows apart from the service: the --codes
// policy, each row's request_id, whose file a state file is, whether the
// service refused a row for its code, and the counts a state file keeps.
// Pure functions; thread-safe.
#ifndef SHORTENER_SERVICES_SHORTENCTL_IMPORT_ROWS_H_
#define SHORTENER_SERVICES_SHORTENCTL_IMPORT_ROWS_H_

#include <cstdint>
#include <istream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/shortenctl/transfer_state.h"
#include "shortener/v1/shortener.pb.h"

namespace shortener::ctl {

// --codes: keep (the code becomes the alias, or the row is rejected),
// keep_or_new (a generated code where it cannot be kept), new (codes
// ignored).
enum class CodePolicy { kKeep, kKeepOrNew, kNew };

// "" and "keep", "keep_or_new", "new". INVALID_ARGUMENT naming --codes
// otherwise.
absl::StatusOr<CodePolicy> ParseCodePolicy(absl::string_view text);

// The request_id of a row: "import-" and 32 hex digits of the SHA-256 of
// what it asks for (`request`'s URL, labels, expiry, redirect type,
// budget and force_new, and the row's `code`; not the request's own
// request_id or custom_alias). The same row gets the same id in any file,
// on any run; a row changed since gets another, so it is created anew
// instead of being refused as a reused id.
std::string RowRequestId(const v1::ShortenRequest& request, absl::string_view code);

// 24 hex digits of the SHA-256 of the first 64 KiB of `in`, which is left
// at its start: whose state file a state file is.
std::string InputId(std::istream& in);

// Whether an item's error is the service refusing its code as an alias:
// INVALID_ARGUMENT or ALREADY_EXISTS about custom_alias (not alias syntax,
// a reserved path, the shape of a generated code, taken).
bool IsCodeRefusal(const v1::BatchShortenResult& result);

// What the rows done so far came to.
struct ImportCounts {
  int64_t rows = 0;
  int64_t created = 0;
  int64_t existing = 0;  // imported before (the same request_id), or de-duplicated
  int64_t rejected = 0;
  int64_t skipped = 0;       // revoked or expired in an export
  int64_t new_codes = 0;     // --codes=keep_or_new gave them a generated code
  int64_t code_refused = 0;  // of the rejected: for their code

  // As state file entries, and back (INVALID_ARGUMENT for a missing one).
  StateValues Values() const;
  absl::Status Read(const StateValues& values);
};

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_IMPORT_ROWS_H_
