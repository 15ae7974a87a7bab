#include "lib/grpcutil/status.h"

#include <string>

namespace shortener::grpcutil {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

google::protobuf::Timestamp ToProtoTimestamp(absl::Time t) {
  google::protobuf::Timestamp ts;
  const int64_t micros = absl::ToUnixMicros(t);
  // Floor division so times before 1970 keep nanos in [0, 1e9).
  int64_t seconds = micros / 1000000;
  int64_t rem = micros % 1000000;
  if (rem < 0) {
    rem += 1000000;
    --seconds;
  }
  ts.set_seconds(seconds);
  ts.set_nanos(static_cast<int32_t>(rem * 1000));
  return ts;
}

absl::Time FromProtoTimestamp(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

}  // namespace shortener::grpcutil
