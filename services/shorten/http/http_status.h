// The HTTP/JSON API's one table from a status to an HTTP status, and the
// google.rpc.Status JSON body every error is sent as.
//
// A status from the service (a gRPC code and message, as absl::Status)
// takes its HTTP status from the table (the google.rpc.Code mapping:
// INVALID_ARGUMENT 400, UNAUTHENTICATED 401, ...; HttpStatusForCode). The
// refusals only HTTP has (404 no route, 405 wrong method, 413, 415) are
// absl::Status too, with the HTTP status attached (WithHttpStatus), so
// every error travels as one currency and is written by one function.
//
// Thread safety: pure functions.
#ifndef SHORTENER_SERVICES_SHORTEN_HTTP_HTTP_STATUS_H_
#define SHORTENER_SERVICES_SHORTEN_HTTP_HTTP_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace shortener::service::http {

// The HTTP status for a gRPC/absl code (google.rpc.Code's mapping):
//   OK 200; INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE 400;
//   UNAUTHENTICATED 401; PERMISSION_DENIED 403; NOT_FOUND 404;
//   ALREADY_EXISTS, ABORTED 409; RESOURCE_EXHAUSTED 429; CANCELLED 499;
//   UNIMPLEMENTED 501; UNAVAILABLE 503; DEADLINE_EXCEEDED 504;
//   UNKNOWN, INTERNAL, DATA_LOSS and anything else 500.
int HttpStatusForCode(absl::StatusCode code);

// `status` with an HTTP status of its own that overrides the table (e.g.
// 415 for INVALID_ARGUMENT). `status` must not be OK.
absl::Status WithHttpStatus(absl::Status status, int http_status);

// The HTTP status `status` is answered with: the attached one if any, else
// the table's.
int HttpStatusFor(const absl::Status& status);

// The reason phrase of the statuses this API sends ("Not Found"); "Error"
// for others.
absl::string_view ReasonPhrase(int http_status);

// `status` as google.rpc.Status JSON:
//   {"code":5,"message":"code \"x\" not found","details":[]}
// (proto3 JSON of the vendored google/rpc/status.proto; details is always
// an empty list).
std::string StatusJson(const absl::Status& status);

}  // namespace shortener::service::http

#endif  // SHORTENER_SERVICES_SHORTEN_HTTP_HTTP_STATUS_H_
