#include "edge/clicks/click_transport.h"

#include "grpcpp/client_context.h"
#include "lib/grpcutil/status.h"

namespace shortener::edge {

absl::Status GrpcClickTransport::Send(const ClickBatch& batch, absl::Duration timeout) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  google::protobuf::Arena arena;
  const v1::RecordClicksRequest* request = ToRecordClicksRequest(batch, &arena);
  v1::RecordClicksResponse response;
  return grpcutil::FromGrpcStatus(stub_->RecordClicks(&context, *request, &response));
}

}  // namespace shortener::edge
