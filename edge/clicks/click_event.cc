#include "edge/clicks/click_event.h"

#include <utility>

#include "absl/strings/match.h"
#include "lib/grpcutil/status.h"

namespace shortener::edge {
namespace {

absl::string_view Truncated(absl::string_view value) {
  return value.substr(0, kMaxClickHeaderBytes);
}

// abseil 20220623 has no StrContainsIgnoreCase.
bool ContainsPrefetch(absl::string_view value) {
  constexpr absl::string_view kWord = "prefetch";
  for (size_t i = 0; i + kWord.size() <= value.size(); ++i) {
    if (absl::EqualsIgnoreCase(value.substr(i, kWord.size()), kWord)) return true;
  }
  return false;
}

}  // namespace

ClickEvent MakeClickEvent(absl::string_view code, absl::Time time, absl::string_view client_ip,
                          absl::string_view user_agent, absl::string_view referer,
                          int http_status) {
  ClickEvent event;
  event.code = std::string(code);
  event.time = time;
  event.client_ip = std::string(client_ip);
  event.user_agent = std::string(Truncated(user_agent));
  event.referer = std::string(Truncated(referer));
  event.http_status = http_status;
  return event;
}

bool CountsAsClick(bool head, absl::string_view purpose, absl::string_view sec_purpose) {
  if (head) return false;
  return !ContainsPrefetch(purpose) && !ContainsPrefetch(sec_purpose);
}

v1::RecordClicksRequest* ToRecordClicksRequest(const ClickBatch& batch,
                                               google::protobuf::Arena* arena) {
  auto* request = google::protobuf::Arena::CreateMessage<v1::RecordClicksRequest>(arena);
  request->set_batch_id(batch.id);
  request->mutable_events()->Reserve(static_cast<int>(batch.events.size()));
  for (const ClickEvent& e : batch.events) {
    v1::ClickEvent* out = request->add_events();
    out->set_code(e.code);
    const google::protobuf::Timestamp time = grpcutil::ToProtoTimestamp(e.time);
    out->mutable_time()->set_seconds(time.seconds());
    out->mutable_time()->set_nanos(time.nanos());
    out->set_client_ip(e.client_ip);
    out->set_user_agent(e.user_agent);
    out->set_referer(e.referer);
    out->set_http_status(e.http_status);
  }
  return request;
}

std::string EncodeClickBatch(const ClickBatch& batch) {
  google::protobuf::Arena arena;
  return ToRecordClicksRequest(batch, &arena)->SerializeAsString();
}

absl::StatusOr<ClickBatch> DecodeClickBatch(absl::string_view bytes) {
  v1::RecordClicksRequest request;
  if (!request.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError("click batch: not a RecordClicksRequest");
  }
  ClickBatch batch;
  batch.id = request.batch_id();
  batch.events.reserve(request.events_size());
  for (const v1::ClickEvent& e : request.events()) {
    batch.events.push_back(MakeClickEvent(e.code(), grpcutil::FromProtoTimestamp(e.time()),
                                          e.client_ip(), e.user_agent(), e.referer(),
                                          e.http_status()));
  }
  return batch;
}

}  // namespace shortener::edge
