#include "edge/clicks/click_event.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/common/sha256.h"
#include "lib/grpcutil/status.h"

namespace shortener::edge {
namespace {

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) v >>= 7, ++n;
  return n;
}

// Tag, length prefix and bytes of a length-delimited field.
size_t FieldSize(size_t bytes) { return 1 + VarintSize(bytes) + bytes; }

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
  // The code and the address are the edge's own text (a checked request
  // target, a formatted address) and pass unchanged; they go through the
  // same rule so that nothing added later can slip past it.
  event.code = clicks::CleanClickText(code);
  event.time = time;
  event.client_ip = clicks::CleanClickText(client_ip);
  event.user_agent = clicks::CleanClickText(user_agent);
  event.referer = clicks::CleanClickText(referer);
  event.http_status = http_status;
  return event;
}

size_t EncodedSizeBound(const ClickEvent& e) {
  // Timestamp: two tagged varints (seconds up to 10 bytes, nanos up to 5),
  // in a length-delimited field; http_status: a tagged int32 varint, 10
  // bytes when negative.
  constexpr size_t kTime = 1 + 1 + (1 + 10) + (1 + 5);
  constexpr size_t kStatus = 1 + 10;
  const size_t inner = FieldSize(e.code.size()) + kTime + FieldSize(e.client_ip.size()) +
                       FieldSize(e.user_agent.size()) + FieldSize(e.referer.size()) + kStatus;
  return FieldSize(inner);
}

std::string HalfBatchId(absl::string_view id, int half) {
  std::string out = absl::StrCat(id, half == 0 ? ".0" : ".1");
  if (out.size() <= kMaxBatchIdBytes) return out;
  const Sha256Bytes digest = Sha256(out);
  return absl::StrCat("h", absl::BytesToHexString(absl::string_view(
                               reinterpret_cast<const char*>(digest.data()), 16)));
}

std::pair<ClickBatch, ClickBatch> SplitBatch(const ClickBatch& batch) {
  const size_t mid = batch.events.size() / 2;
  std::pair<ClickBatch, ClickBatch> halves;
  halves.first.id = HalfBatchId(batch.id, 0);
  halves.first.events.assign(batch.events.begin(), batch.events.begin() + mid);
  halves.second.id = HalfBatchId(batch.id, 1);
  halves.second.events.assign(batch.events.begin() + mid, batch.events.end());
  return halves;
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
  if (request.batch_id().empty() || request.events_size() == 0) {
    return absl::InvalidArgumentError("click batch: no batch id or no events");
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
