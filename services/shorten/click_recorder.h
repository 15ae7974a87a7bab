// ClickRecorder: the domain logic of RecordClicks, free of gRPC, proto and
// Postgres types. It checks a batch of click events from an edge, event by
// event, resolves their codes to link ids, classifies each User-Agent,
// derives the visit fields (lib/clicks) and hands the well-formed events of
// known links to the click store (clicks::ClickStore: PgClickStore in
// production, InMemoryClickStore in unit tests).
//
// What happens to an event:
//  - refused: it is malformed (ClickEventProblem, or a code that is neither
//    a short code nor an alias). It is never recorded and the answer names
//    it with the reason; no retry can change that.
//  - skipped: well-formed, but its code names no link (a link may be gone,
//    an edge may be older): counted, not an error, as before.
//  - accepted: recorded, once per batch id.
// Every check depends on the event alone (not on the clock, not on the
// database), so a retried batch gets the same refused list as the first
// attempt, whose rows it does not record again. Only faults of the batch as
// a whole (its id, its event count) refuse it all.
//
// Thread-safe (the click store is). Record blocks (alias look-ups, the
// store): call it on the blocking pool, never on a gRPC reactor thread.
#ifndef SHORTENER_SERVICES_SHORTEN_CLICK_RECORDER_H_
#define SHORTENER_SERVICES_SHORTEN_CLICK_RECORDER_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/clicks/click_batch_limits.h"
#include "lib/clicks/click_store.h"
#include "lib/common/histogram_counts.h"
#include "lib/geoip/geo_db.h"
#include "services/shorten/shortener.h"

namespace shortener::service {

// One click event as an edge reports it.
struct ClickInput {
  std::string code;
  // When the redirect was served; an error (missing, or not a valid
  // timestamp) refuses the event with its message.
  absl::StatusOr<absl::Time> time = absl::InvalidArgumentError("time: missing");
  std::string client_ip;
  std::string user_agent;
  std::string referer;
  int http_status = 0;  // the redirect sent: 301, 302, 307 or 308
};

struct RecordClicksInput {
  std::string batch_id;  // 1..128 bytes of clean text (lib/clicks/click_text.h)
  std::vector<ClickInput> events;
};

// An event that was not recorded because it is malformed.
struct RefusedClick {
  int index = 0;       // in RecordClicksInput::events
  std::string reason;  // naming the field: "user_agent: invalid UTF-8 at byte 3 (0xFF)"

  friend bool operator==(const RefusedClick& a, const RefusedClick& b) {
    return a.index == b.index && a.reason == b.reason;
  }
};

struct RecordClicksOutput {
  // Events counted by this call; 0 for a batch recorded before.
  int64_t accepted = 0;
  // Well-formed events whose code names no link.
  int64_t skipped = 0;
  // Malformed events, in index order; the same for a batch recorded before.
  std::vector<RefusedClick> refused;
  bool duplicate = false;
};

// Click times outside [kEarliestClickTime, kLatestClickTime) are refused:
// fixed bounds rather than "now +- something", so that the answer to a
// batch never depends on when it arrives (an edge may replay a spool days
// later), while an edge with a broken clock cannot create visit partitions
// for any month of any century.
inline const absl::Time kEarliestClickTime = absl::FromUnixSeconds(1577836800);  // 2020-01-01
inline const absl::Time kLatestClickTime = absl::FromUnixSeconds(4102444800);    // 2100-01-01

// Empty if `event` is well-formed apart from its code's syntax (which needs
// the codec: Record checks it); otherwise the first reason it is not, naming
// the field: a text field that is not clean text of at most 512 bytes
// (lib/clicks/click_text.h), a missing or invalid time, a time outside the
// bounds above, an http_status that is not a redirect.
std::string ClickEventProblem(const ClickInput& event);

struct ClickRecorderOptions {
  // Store a visit row per click (besides the hourly counts). Default true.
  bool record_visits = true;
  // Store full client IPs instead of anonymised ones. Default false.
  bool keep_full_ips = false;
  // Most events in one batch. Default 10000, the RecordClicks bound both
  // ends share (lib/clicks/click_batch_limits.h).
  size_t max_events = clicks::kMaxClickBatchEvents;
  // Where clicks get their country, region, city and network (from the
  // full client IP, before anonymisation); null: none of them. Outlives
  // the recorder.
  const geoip::GeoLocator* geo = nullptr;
};

class ClickRecorder {
 public:
  // `shortener` and `store` outlive the recorder.
  ClickRecorder(Shortener* shortener, clicks::ClickStore* store, ClickRecorderOptions options);

  // Records the accepted events of `input` once per batch id (a retried
  // batch is accepted = 0, duplicate, with the same refused list); a batch
  // whose events are all refused or skipped still records its id.
  // INVALID_ARGUMENT (nothing recorded) for a batch id that is not 1..128
  // bytes of clean text or an event count outside 1..max_events; the
  // store's errors otherwise (UNAVAILABLE: retry with the same batch id),
  // and alias look-up errors other than NOT_FOUND.
  absl::StatusOr<RecordClicksOutput> Record(const RecordClicksInput& input);

  // What Record did, since start (metrics). Counted once per batch, under
  // a lock of its own (not per event).
  struct Stats {
    int64_t batches = 0;     // batches recorded (first time)
    int64_t duplicates = 0;  // batches recognised as retries: nothing recorded again
    int64_t failed = 0;      // batches answered an error (refused whole, or the store's)
    int64_t accepted = 0;    // events recorded
    int64_t skipped = 0;     // events whose code names no link
    int64_t refused = 0;     // events refused as malformed
    HistogramCounts batch_events{BatchSizeBounds()};  // events per batch answered OK
  };
  Stats GetStats() const;

 private:
  absl::StatusOr<RecordClicksOutput> RecordBatch(const RecordClicksInput& input);
  void Count(const RecordClicksInput& input, const absl::StatusOr<RecordClicksOutput>& result);

  Shortener* shortener_;
  clicks::ClickStore* store_;
  ClickRecorderOptions options_;
  mutable std::mutex mu_;
  Stats stats_;  // guarded by mu_
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_CLICK_RECORDER_H_
