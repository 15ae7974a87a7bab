// Fuzzes the service side of RecordClicks: bytes -> v1::RecordClicksRequest
// -> the service's decoding (services/shorten/proto_mapping.h FromProto) ->
// ClickRecorder over the in-memory link store (a generated code and an
// alias exist) with the in-memory click store (no PostgreSQL) -> the answer
// as ShortenServiceImpl builds it.
//
// Input: the serialised request (bytes that do not parse are what gRPC
// refuses before our code runs; with `bytes` text fields, only broken wire
// format does). The seeds and the dictionary name the links: "Ei8vcb6" is
// the generated code of the first link under this codec secret, the alias
// is "spring-sale".
// Invariants, besides no memory error, leak or UB:
//  - a batch id that is not 1..128 bytes of clean text, or 0 or more than
//    max_events events, fails the call INVALID_ARGUMENT and records nothing;
//  - otherwise accepted + skipped + refused == events; refused indexes are
//    increasing and in range, each with a reason of clean text; an event is
//    refused exactly when ClickEventProblem names a problem or its code is
//    neither a short code nor an alias; the rows recorded are one per
//    accepted event, every text column valid UTF-8 without NUL;
//  - each row is what MakeClickRow makes of its event with Classify of the
//    event's User-Agent (the recorder classifies a batch's agents once:
//    useragent::BatchClassifier) and the event's address anonymised (a
//    CanonicalIp form, or empty); rows follow their events' order;
//  - the same request again is a duplicate: nothing recorded, the same
//    refused list;
//  - the answer serialises and parses back (a reason that is not UTF-8
//    would make the edge's whole call fail).
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "google/protobuf/stubs/logging.h"
#include "lib/clicks/click_text.h"
#include "lib/clicks/clicks.h"
#include "lib/clicks/in_memory_click_store.h"
#include "lib/codec/short_codec.h"
#include "lib/common/thread_pool.h"
#include "lib/common/utf8.h"
#include "lib/idalloc/segment_id_allocator.h"
#include "lib/idalloc/segment_source.h"
#include "lib/store/group_committer.h"
#include "lib/store/in_memory_link_store.h"
#include "lib/store/read_batcher.h"
#include "lib/url/url_policy.h"
#include "lib/useragent/user_agent.h"
#include "services/shorten/click_recorder.h"
#include "services/shorten/proto_mapping.h"
#include "services/shorten/shortener.h"
#include "shortener/v1/shortener.pb.h"
#include "tests/fuzz/fuzz_check.h"

namespace shortener::service {
namespace {

constexpr size_t kMaxEvents = 64;  // small: the fuzzer reaches the bound

// The links, made once: a generated code and an alias.
struct Links {
  Links()
      : ids(&source, idalloc::IdAllocatorOptions{}),
        committer(&store, store::GroupCommitOptions{}),
        reads(&store, store::ReadBatchOptions{}) {
    codec::CodecOptions codec_options;
    codec_options.secret = std::string(32, 'c');
    codec = std::make_unique<codec::ShortCodec>(*codec::ShortCodec::Create(codec_options));
    policy = std::make_unique<url::UrlPolicy>(url::UrlPolicyOptions{});
    source.AddSequence("links", 1);
    ShortenerOptions options;
    options.base_url = "https://sho.rt/";
    shortener = std::make_unique<Shortener>(codec.get(), policy.get(), &ids, &store, &committer,
                                            &reads, &pool, options);
    Shorten("https://example.com/generated", "");
    Shorten("https://example.com/aliased", "spring-sale");
  }
  void Shorten(const std::string& url, const std::string& alias) {
    ShortenInput in;
    in.long_url = url;
    in.custom_alias = alias;
    std::promise<absl::StatusOr<ShortenOutput>> done;
    shortener->Shorten(
        in, absl::Now() + absl::Seconds(5),
        [&done](absl::StatusOr<ShortenOutput> out) { done.set_value(std::move(out)); });
    FUZZ_CHECK(done.get_future().get().ok());
  }

  std::unique_ptr<codec::ShortCodec> codec;
  std::unique_ptr<url::UrlPolicy> policy;
  idalloc::InMemorySegmentSource source;
  idalloc::SegmentIdAllocator ids;
  store::InMemoryLinkStore store;
  store::GroupCommitter committer;
  store::ReadBatcher reads;
  ThreadPool pool{1};
  std::unique_ptr<Shortener> shortener;
};

Links& GetLinks() {
  static Links* links = new Links;
  return *links;
}

bool StorableText(const std::string& s) {
  return utf8::IsValid(s) && s.find('\0') == std::string::npos;
}

bool CodeSyntaxOk(const std::string& code) {
  if (GetLinks().codec->IsGeneratedShape(code)) return true;
  if (code.empty() || code.size() > 64) return false;
  for (char c : code) {
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-')) {
      return false;
    }
  }
  return true;
}

void FuzzOne(const v1::RecordClicksRequest& request) {
  // A click store fresh for each input; with visits, so that it keeps
  // every row it was given.
  clicks::InMemoryClickStore store;
  ClickRecorderOptions options;
  options.max_events = kMaxEvents;
  options.record_visits = true;
  ClickRecorder recorder(GetLinks().shortener.get(), &store, options);
  const RecordClicksInput input = FromProto(request);
  FUZZ_CHECK(input.batch_id == request.batch_id());
  FUZZ_CHECK(input.events.size() == static_cast<size_t>(request.events_size()));
  absl::StatusOr<RecordClicksOutput> out = recorder.Record(input);

  const size_t events = input.events.size();
  const bool bad_batch = input.batch_id.empty() || input.batch_id.size() > 128 ||
                         !clicks::ClickTextProblem("batch_id", input.batch_id).empty() ||
                         events == 0 || events > kMaxEvents;
  if (bad_batch) {
    FUZZ_CHECK(absl::IsInvalidArgument(out.status()));
    FUZZ_CHECK(utf8::IsValid(out.status().message()));
    FUZZ_CHECK(store.BatchCount() == 0);
    return;
  }
  FUZZ_CHECK(out.ok() && !out->duplicate && store.BatchCount() == 1);
  FUZZ_CHECK(out->accepted >= 0 && out->skipped >= 0);
  FUZZ_CHECK(static_cast<size_t>(out->accepted + out->skipped) + out->refused.size() == events);
  const std::vector<clicks::ClickRow> rows = store.Visits();
  FUZZ_CHECK(rows.size() == static_cast<size_t>(out->accepted));
  std::vector<bool> refused(events, false);
  int previous = -1;
  for (const RefusedClick& r : out->refused) {
    FUZZ_CHECK(r.index > previous && static_cast<size_t>(r.index) < events);
    previous = r.index;
    refused[r.index] = true;
    FUZZ_CHECK(!r.reason.empty() && utf8::IsCleanText(r.reason, 1024));
  }
  for (size_t i = 0; i < events; ++i) {
    const ClickInput& e = input.events[i];
    const bool malformed = !ClickEventProblem(e).empty() || !CodeSyntaxOk(e.code);
    FUZZ_CHECK(refused[i] == malformed);
  }
  for (const clicks::ClickRow& row : rows) {
    FUZZ_CHECK(StorableText(row.client_id) && StorableText(row.ip) && StorableText(row.browser) &&
               StorableText(row.os) && StorableText(row.os_version) && StorableText(row.device) &&
               StorableText(row.referrer_host) && StorableText(row.country));
    FUZZ_CHECK(row.time >= kEarliestClickTime && row.time < kLatestClickTime);
  }

  // Rows in event order, each derived from one of the events not refused
  // (the others were skipped: their code names no link).
  size_t next_event = 0;
  for (const clicks::ClickRow& row : rows) {
    bool matched = false;
    for (; next_event < events && !matched; ++next_event) {
      if (refused[next_event]) continue;
      const ClickInput& e = input.events[next_event];
      clicks::ClickEvent click;
      click.link_id = row.link_id;
      click.time = row.time;
      click.client_ip = e.client_ip;
      click.user_agent = e.user_agent;
      click.referer = e.referer;
      const clicks::ClickRow want =
          clicks::MakeClickRow(click, useragent::Classify(e.user_agent), false);
      matched = row.bot == want.bot && row.client_id == want.client_id && row.ip == want.ip &&
                row.browser == want.browser && row.browser_major == want.browser_major &&
                row.os == want.os && row.os_version == want.os_version &&
                row.device == want.device && row.referrer_host == want.referrer_host;
    }
    FUZZ_CHECK(matched);
    FUZZ_CHECK(row.ip.empty() || clicks::CanonicalIp(row.ip) == row.ip);
  }

  // The answer as the handler builds it, through the wire.
  v1::RecordClicksResponse response;
  ToProto(*out, &response);
  std::string wire;
  FUZZ_CHECK(response.SerializeToString(&wire));
  v1::RecordClicksResponse parsed;
  FUZZ_CHECK(parsed.ParseFromString(wire));
  FUZZ_CHECK(parsed.accepted() == out->accepted &&
             parsed.refused_size() == static_cast<int>(out->refused.size()));

  // A retry: nothing recorded again, the same refusals.
  absl::StatusOr<RecordClicksOutput> again = recorder.Record(input);
  FUZZ_CHECK(again.ok() && again->duplicate && again->accepted == 0);
  FUZZ_CHECK(again->refused.size() == out->refused.size());
  for (size_t i = 0; i < out->refused.size(); ++i) {
    FUZZ_CHECK(again->refused[i] == out->refused[i]);
  }
}

}  // namespace
}  // namespace shortener::service

// A batch_id that is not UTF-8 fails the parse, as it should, and protobuf
// logs a line each time: millions of them, slowing the run.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shortener::v1::RecordClicksRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  shortener::service::FuzzOne(request);
  return 0;
}
