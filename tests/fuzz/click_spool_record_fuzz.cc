// Fuzzes the click spool's record reader (edge/clicks/click_spool.h): the
// input is the bytes of a segment file, as a crash, a full disk or a bit
// flip can leave it, or as an older edge wrote it.
//
// Invariants, besides no memory error, leak or UB:
//  - ScanSpoolSegment's records are increasing, non-overlapping and inside
//    the bytes, each one a record ParseSpoolRecord accepts with that
//    length; none are damaged exactly when the records cover the bytes end
//    to end; the torn tail starts after the last record;
//  - a record that decodes (DecodeClickBatch) is a batch with an id and
//    events whose every text field follows the click-text rule
//    (lib/clicks/click_text.h: what the service accepts), and which encodes
//    to bytes that decode to the same batch (times to the microsecond, as
//    they travel), encode to the same bytes again, and hold exactly its
//    events (CountEncodedEvents);
//  - the in-memory spool, given the same payload, either returns that batch
//    or drops the record as unreadable and counts it: never the same
//    record twice, never left behind.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "edge/clicks/click_event.h"
#include "edge/clicks/click_spool.h"
#include "google/protobuf/stubs/logging.h"
#include "lib/clicks/click_text.h"
#include "tests/fuzz/fuzz_check.h"

namespace shortener::edge {
namespace {

bool Clean(const ClickEvent& e) {
  return clicks::ClickTextProblem("code", e.code).empty() &&
         clicks::ClickTextProblem("client_ip", e.client_ip).empty() &&
         clicks::ClickTextProblem("user_agent", e.user_agent).empty() &&
         clicks::ClickTextProblem("referer", e.referer).empty();
}

bool Same(const ClickBatch& a, const ClickBatch& b) {
  if (a.id != b.id || a.events.size() != b.events.size()) return false;
  for (size_t i = 0; i < a.events.size(); ++i) {
    const ClickEvent& x = a.events[i];
    const ClickEvent& y = b.events[i];
    // Times travel in whole microseconds (grpcutil::ToProtoTimestamp).
    if (x.code != y.code || absl::ToUnixMicros(x.time) != absl::ToUnixMicros(y.time) ||
        x.client_ip != y.client_ip || x.user_agent != y.user_agent || x.referer != y.referer ||
        x.http_status != y.http_status) {
      return false;
    }
  }
  return true;
}

void CheckPayload(absl::string_view payload) {
  absl::StatusOr<ClickBatch> batch = DecodeClickBatch(payload);
  InMemoryClickSpool spool(uint64_t{1} << 30);
  spool.AppendRawForTest(std::string(payload));
  absl::StatusOr<std::optional<ClickBatch>> front = spool.Front();
  if (!batch.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(batch.status()));
    FUZZ_CHECK(absl::IsDataLoss(front.status()));
    FUZZ_CHECK(spool.Stats().unreadable_records == 1);
    FUZZ_CHECK(spool.Stats().unreadable_events == CountEncodedEvents(payload));
    FUZZ_CHECK(spool.empty() && spool.Stats().bytes == 0);
    return;
  }
  FUZZ_CHECK(!batch->id.empty() && !batch->events.empty());
  for (const ClickEvent& e : batch->events) FUZZ_CHECK(Clean(e));
  FUZZ_CHECK(CountEncodedEvents(payload) <= batch->events.size());
  const std::string again = EncodeClickBatch(*batch);
  FUZZ_CHECK(CountEncodedEvents(again) == batch->events.size());
  absl::StatusOr<ClickBatch> decoded = DecodeClickBatch(again);
  FUZZ_CHECK(decoded.ok() && Same(*batch, *decoded));
  FUZZ_CHECK(EncodeClickBatch(*decoded) == again);  // a fixed point after one round
  FUZZ_CHECK(front.ok() && front->has_value() && Same(**front, *batch));
  FUZZ_CHECK(spool.PopFront().ok() && spool.empty());
}

void FuzzSegment(absl::string_view bytes) {
  const SpoolSegmentScan scan = ScanSpoolSegment(bytes);
  uint64_t end = 0;
  bool contiguous = true;
  for (const SpoolRecordSpan& record : scan.records) {
    FUZZ_CHECK(record.offset >= end);
    FUZZ_CHECK(record.length > 0);
    FUZZ_CHECK(record.offset + kSpoolRecordHeaderBytes + record.length <= bytes.size());
    contiguous = contiguous && record.offset == end;
    absl::StatusOr<absl::string_view> payload = ParseSpoolRecord(bytes.substr(record.offset));
    FUZZ_CHECK(payload.ok() && payload->size() == record.length);
    FUZZ_CHECK(payload->data() == bytes.data() + record.offset + kSpoolRecordHeaderBytes);
    end = record.offset + kSpoolRecordHeaderBytes + record.length;
    CheckPayload(*payload);
  }
  FUZZ_CHECK(scan.torn_tail_at >= end && scan.torn_tail_at <= bytes.size());
  FUZZ_CHECK((scan.damaged_records == 0) == (contiguous && end == bytes.size()));
  if (scan.damaged_records == 0) FUZZ_CHECK(scan.damaged_events == 0);
  // The whole input as one payload too: what DecodeClickBatch makes of
  // arbitrary bytes.
  CheckPayload(bytes);
}

}  // namespace
}  // namespace shortener::edge

// A batch_id that is not UTF-8 fails the parse, as it should, and protobuf
// logs a line each time: millions of them, slowing the run.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shortener::edge::FuzzSegment(absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
