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
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/arena.h"
#include "shortener/v1/shortener.pb.h"

namespace shortener::edge {

// User-Agent and Referer are cut to this many bytes: enough for any real
// browser's, and a bound on what one request can make the edge hold.
inline constexpr size_t kMaxClickHeaderBytes = 512;

struct ClickEvent {
  std::string code;
  absl::Time time;
  std::string client_ip;   // textual, per the trusted-proxy rule
  std::string user_agent;  // at most kMaxClickHeaderBytes
  std::string referer;     // at most kMaxClickHeaderBytes
  int http_status = 0;     // the redirect sent: 301, 302, 307 or 308

  // What the event costs in memory, for the queue's byte bound.
  size_t ApproximateBytes() const {
    return sizeof(ClickEvent) + code.size() + client_ip.size() + user_agent.size() + referer.size();
  }
};

// Builds an event, truncating the header values.
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

// Whether `status` is a redirect (the only responses that are clicks).
inline bool IsRedirectStatus(int status) {
  return status == 301 || status == 302 || status == 307 || status == 308;
}

struct ClickBatch {
  std::string id;  // unique per batch; kept across retries and replays
  std::vector<ClickEvent> events;
};

// The batch as the RPC's request, built on `arena` (a batch is thousands of
// small messages and strings: one arena instead of an allocation each), and
// serialized.
v1::RecordClicksRequest* ToRecordClicksRequest(const ClickBatch& batch,
                                               google::protobuf::Arena* arena);
std::string EncodeClickBatch(const ClickBatch& batch);
// Parses EncodeClickBatch's output; INVALID_ARGUMENT if it does not parse.
absl::StatusOr<ClickBatch> DecodeClickBatch(absl::string_view bytes);

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_CLICKS_CLICK_EVENT_H_
