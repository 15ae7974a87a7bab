// absl::Status <-> grpc::Status, and absl::Time <-> google.protobuf.Timestamp.
// The one place where status codes cross between our code and gRPC.
// Stateless; thread-safe.
#ifndef SHORTENER_LIB_GRPCUTIL_STATUS_H_
#define SHORTENER_LIB_GRPCUTIL_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "google/protobuf/timestamp.pb.h"

namespace shortener::grpcutil {

// Same canonical code and message. The codes are numerically identical in
// both systems; this is the single conversion point so that it stays so.
grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

google::protobuf::Timestamp ToProtoTimestamp(absl::Time t);
absl::Time FromProtoTimestamp(const google::protobuf::Timestamp& ts);

}  // namespace shortener::grpcutil

#endif  // SHORTENER_LIB_GRPCUTIL_STATUS_H_
