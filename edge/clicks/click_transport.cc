#include "edge/clicks/click_transport.h"

#include <utility>

#include "grpcpp/client_context.h"
#include "lib/grpcutil/status.h"

namespace shortener::edge {

GrpcClickTransport::GrpcClickTransport(std::shared_ptr<grpc::Channel> channel)
    : stub_(v1::ShortenService::NewStub(std::move(channel))) {}

absl::StatusOr<ClickSendResult> GrpcClickTransport::Send(const ClickBatch& batch,
                                                         absl::Duration timeout) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  google::protobuf::Arena arena;
  const v1::RecordClicksRequest* request = ToRecordClicksRequest(batch, &arena);
  v1::RecordClicksResponse response;
  const absl::Status status =
      grpcutil::FromGrpcStatus(stub_->RecordClicks(&context, *request, &response));
  if (!status.ok()) return status;
  ClickSendResult result;
  result.accepted = response.accepted();
  result.refused.reserve(static_cast<size_t>(response.refused_size()));
  for (const v1::RefusedClickEvent& refused : response.refused()) {
    result.refused.push_back({refused.index(), refused.reason()});
  }
  return result;
}

}  // namespace shortener::edge
