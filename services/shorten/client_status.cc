#include "services/shorten/client_status.h"

#include "absl/strings/string_view.h"
#include "lib/common/log.h"
#include "lib/grpcutil/status.h"

namespace shortener::service {

grpc::Status ClientStatus(const absl::Status& status) {
  absl::string_view public_message;
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
      public_message =
          "service temporarily unavailable (database unreachable); retry later, "
          "with the same request_id for Shorten";
      break;
    case absl::StatusCode::kDeadlineExceeded:
      public_message = "deadline exceeded waiting for the database";
      break;
    case absl::StatusCode::kAborted:
      public_message = "conflicting concurrent writes; retry";
      break;
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kDataLoss:
      public_message = "internal error";
      break;
    default:
      return grpcutil::ToGrpcStatus(status);
  }
  LogWarning("rpc failed: %s", status.ToString());
  return grpcutil::ToGrpcStatus(absl::Status(status.code(), public_message));
}

}  // namespace shortener::service
