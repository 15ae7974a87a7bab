// A click event as the edge records it, a batch of them, which requests
// produce one, and the batch's wire form (the RecordClicksRequest proto, used
// both on the wire and as the spool's record payload, so a replayed batch is
// byte-for-byte what would have been sent).
//
// Thread safety: plain values and pure functions.
#ifndef SHORTENER_EDGE_CLICKS_CLICK_EVENT_H_
#define SHORTENER_EDGE_CLICKS_CLICK_EVENT_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/arena.h"
#include "lib/clicks/click_text.h"
#include "lib/common/redirect_status.h"  // only redirects are clicks
#include "shortener/v1/shortener.pb.h"

namespace shortener::edge {

// Every text field of an event is clean text of at most this many bytes
// (lib/clicks/click_text.h, the rule the service checks): enough for any
// real browser's User-Agent, and a bound on what one request can make the
// edge hold.
inline constexpr size_t kMaxClickHeaderBytes = clicks::kMaxClickTextBytes;

// Built only by MakeClickEvent (or DecodeClickBatch, which calls it), so
// every text field follows the click-text rule.
struct ClickEvent {
  std::string code;
  absl::Time time;
  std::string client_ip;   // textual, per the trusted-proxy rule
  std::string user_agent;  // clean text, at most kMaxClickHeaderBytes
  std::string referer;     // clean text, at most kMaxClickHeaderBytes
  int http_status = 0;     // the redirect sent: 301, 302, 307 or 308

  // What the event costs in memory, for the queue's byte bound.
  size_t ApproximateBytes() const {
    return sizeof(ClickEvent) + code.size() + client_ip.size() + user_agent.size() + referer.size();
  }
};

// Builds an event from values copied from a request: each text value is
// made clean text of at most kMaxClickHeaderBytes (invalid UTF-8 and control
// characters replaced by U+FFFD, cut at a character boundary), so that no
// header a client sends can make the service refuse the event. Values that
// already follow the rule (nearly all) are copied as they are.
ClickEvent MakeClickEvent(absl::string_view code, absl::Time time, absl::string_view client_ip,
                          absl::string_view user_agent, absl::string_view referer, int http_status);

// Whether a redirect answered to this request is a click. HEAD requests
// (link checkers, unfurlers) and browser prefetches ("Purpose: prefetch" or
// "Sec-Purpose: prefetch", matched case-insensitively anywhere in the value,
// e.g. "prefetch;prerender") are redirected but never produce an event: no
// human followed the link. Telling bots from humans by User-Agent is the
// service's job (it keeps them apart); the edge only drops what is certainly
// not a visit.
bool CountsAsClick(bool head, absl::string_view purpose, absl::string_view sec_purpose);

struct ClickBatch {
  std::string id;  // unique per batch; kept across retries and replays
  std::vector<ClickEvent> events;
};

// Most bytes a batch id may have (the service refuses longer ones).
inline constexpr size_t kMaxBatchIdBytes = 128;

// An upper bound of the bytes `event` adds to an encoded batch (its fields,
// tags and length prefixes), for capping a batch's size without encoding it.
size_t EncodedSizeBound(const ClickEvent& event);

// The id of half `half` (0 or 1) of the batch `id`: "<id>.0", "<id>.1";
// when that would pass kMaxBatchIdBytes, "h" and 32 hex digits of its
// SHA-256 instead. Deterministic, so the halves of a batch split again after
// a restart get the same ids (and the service's dedup holds); distinct from
// every id the sender makes (those have no '.' and are shorter).
std::string HalfBatchId(absl::string_view id, int half);

// `batch` cut in two (the first half gets size / 2 events) with HalfBatchId
// ids. `batch` must have at least two events.
std::pair<ClickBatch, ClickBatch> SplitBatch(const ClickBatch& batch);

// The batch as the RPC's request, built on `arena` (a batch is thousands of
// small messages and strings: one arena instead of an allocation each), and
// serialized.
v1::RecordClicksRequest* ToRecordClicksRequest(const ClickBatch& batch,
                                               google::protobuf::Arena* arena);
std::string EncodeClickBatch(const ClickBatch& batch);
// Parses EncodeClickBatch's output (or what an older edge wrote, whose text
// fields may hold anything: they are cleaned through MakeClickEvent).
// INVALID_ARGUMENT if it does not parse, or has no id or no events (an
// encoded batch never lacks them: such bytes are damage).
absl::StatusOr<ClickBatch> DecodeClickBatch(absl::string_view bytes);

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_CLICKS_CLICK_EVENT_H_
