// ClientStatus: what a ShortenService client may see of an error, decided in
// this one place for a whole call's status and for the per-item errors of
// BatchShorten and BatchResolve alike. Our own messages (invalid input, not
// found, already exists, refusals) go out as they are; database and
// internal failures carry libpq/server text (socket paths, role and
// constraint names), so their detail goes to the log and the client gets
// the code with a plain message.
//
// Thread-safe.
#ifndef SHORTENER_SERVICES_SHORTEN_CLIENT_STATUS_H_
#define SHORTENER_SERVICES_SHORTEN_CLIENT_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace shortener::service {

// `status` as the client sees it: UNAVAILABLE, DEADLINE_EXCEEDED, ABORTED,
// INTERNAL, UNKNOWN and DATA_LOSS get a plain message of their code (the
// original is logged as a warning); every other code keeps its message.
grpc::Status ClientStatus(const absl::Status& status);

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_CLIENT_STATUS_H_
