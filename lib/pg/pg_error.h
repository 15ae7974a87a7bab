// Translation of libpqxx exceptions into absl::Status: the one place where
// the Postgres error system meets ours. SQL text and connection strings never
// reach the returned message.
#ifndef SHORTENER_LIB_PG_PG_ERROR_H_
#define SHORTENER_LIB_PG_PG_ERROR_H_

#include <exception>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace shortener::pg {

// Maps the exception currently being handled to a status whose message starts
// with `what` (e.g. "create links"). broken_connection and connection-class
// SQLSTATEs (08xxx, 57P01 admin shutdown, 53xxx resources) -> UNAVAILABLE;
// unique_violation -> ALREADY_EXISTS; serialization / deadlock -> ABORTED;
// statement timeout / query_canceled -> DEADLINE_EXCEEDED; anything else ->
// INTERNAL. Call only inside a catch block.
absl::Status StatusFromCurrentException(absl::string_view what);

// Runs `fn`, converting any exception it throws with
// StatusFromCurrentException. `fn` returns absl::Status.
template <typename Fn>
absl::Status CatchPqxx(absl::string_view what, Fn&& fn) {
  try {
    return fn();
  } catch (...) {
    return StatusFromCurrentException(what);
  }
}

}  // namespace shortener::pg

#endif  // SHORTENER_LIB_PG_PG_ERROR_H_
