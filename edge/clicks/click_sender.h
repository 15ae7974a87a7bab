// The click sender: one background thread that takes events from the
// ClickQueue in batches (--click_batch events, or whatever arrived within
// --click_flush_interval, and never more than max_batch_bytes encoded), names
// each batch (edge instance id + sequence) and records it through the
// ClickTransport.
//
// A batch whose call fails is put in the ClickSpool with its id; while the
// spool holds anything (or the sender is backing off), new batches go to the
// spool behind it, so batches are delivered in order and failures never pile
// up in memory. The spool is replayed oldest-first, one call at a time,
// with exponential backoff and jitter between failed attempts; a replayed
// batch keeps its id, so the service counts it once even when an earlier
// attempt did reach it.
//
// What the service refuses is dropped and counted, never retried, and never
// in the way of other clicks:
//  - events it lists as refused in its answer (malformed: they can never be
//    recorded) are counted in dropped_refused;
//  - a batch it refuses as a whole with INVALID_ARGUMENT (it recorded none
//    of it, and the same bytes can never succeed) is split in two halves
//    with ids of their own (HalfBatchId), each sent (and split) again: what
//    the service accepts is kept, and only single events it refuses are
//    dropped. Halves that then fail otherwise are spooled like any batch;
//  - a spool record that cannot be read is dropped by the spool (counted in
//    its Stats) and the next one is sent at once.
// Each distinct cause is logged at most once a minute, with a count.
// Refusals that are configuration problems (PERMISSION_DENIED,
// UNAUTHENTICATED, UNIMPLEMENTED, FAILED_PRECONDITION, NOT_FOUND,
// OUT_OF_RANGE) are logged as errors and the batch is kept and retried at
// the longest backoff: a fixed key or an upgraded service must not have lost
// clicks. Events are otherwise lost only when the spool is full (or cannot
// be written): counted and logged at most once a minute.
//
// Thread safety: Start and Stop from one thread; Stats from any.
#ifndef SHORTENER_EDGE_CLICKS_CLICK_SENDER_H_
#define SHORTENER_EDGE_CLICKS_CLICK_SENDER_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "edge/clicks/click_queue.h"
#include "edge/clicks/click_spool.h"
#include "edge/clicks/click_transport.h"
#include "lib/clicks/click_batch_limits.h"

namespace shortener::edge {

struct ClickSenderOptions {
  size_t batch_size = 1000;  // --click_batch
  // Most bytes of a batch's RecordClicksRequest (by EncodedSizeBound): a
  // batch must fit the service's limit for RecordClicks, the same constant
  // (lib/clicks/click_batch_limits.h). A full queue pop is cut into several
  // batches past it. Default 2 MiB.
  size_t max_batch_bytes = clicks::kMaxClickBatchBytes;
  absl::Duration flush_interval = absl::Seconds(1);  // --click_flush_interval
  absl::Duration rpc_timeout = absl::Seconds(5);     // deadline of one RecordClicks
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(30);
  std::string instance_id;  // batch id prefix; empty: 16 random hex digits
  uint64_t seed = 0;        // of the jitter; 0: random
};

struct ClickSenderStats {
  uint64_t rpcs = 0;            // RecordClicks calls made
  uint64_t rpc_failures = 0;    // of them, failed
  uint64_t rpc_seconds_ns = 0;  // their summed duration
  uint64_t batches_acked = 0;   // batches the service accepted (replays included)
  // Their events the service took (counted, skipped as unknown codes, or
  // counted before), refused ones not included.
  uint64_t events_acked = 0;
  uint64_t batches_spooled = 0;  // batches written to the spool
  uint64_t events_spooled = 0;
  uint64_t batches_replayed = 0;     // spooled batches later accepted
  uint64_t dropped_spool_full = 0;   // events lost: spool at its cap
  uint64_t dropped_spool_error = 0;  // events lost: the spool could not be written
  // Events lost: the service refused them (listed as refused, or alone in
  // a batch refused as a whole).
  uint64_t dropped_refused = 0;
  // Batches the service refused as a whole, split in two.
  uint64_t batches_split = 0;
};

class ClickSender {
 public:
  // Every pointer must outlive the sender.
  ClickSender(ClickQueue* queue, ClickSpool* spool, ClickTransport* transport,
              ClickSenderOptions options);
  // Stops (flush timeout 0: what is queued goes to the spool) if running.
  ~ClickSender();

  void Start();

  // Closes the queue, then for up to `flush_timeout` sends what it held
  // and what the spool holds (retrying transient failures with backoff;
  // not waiting at all once the service refused a batch); what is left is
  // spooled. Returns when done. Idempotent.
  void Stop(absl::Duration flush_timeout);

  ClickSenderStats Stats() const;

 private:
  using Clock = std::chrono::steady_clock;

  // Counts per cause (a reason's text up to its first digit or quote) and
  // when it was last logged; bounded, the rest share one entry.
  struct CauseLog {
    struct Cause {
      Clock::time_point last_log{};
      uint64_t since_log = 0;
    };
    absl::flat_hash_map<std::string, Cause> causes;
    // Adds `n` to the cause of `reason`; the count to log now, or 0 when
    // that cause was logged less than a minute ago.
    uint64_t Add(absl::string_view reason, uint64_t n, Clock::time_point now);
  };

  void Run();
  void Flush(Clock::time_point deadline);
  // `events` as batches of at most batch_size events and max_batch_bytes,
  // each with the next id.
  std::vector<ClickBatch> MakeBatches(std::vector<ClickEvent> events);
  // Sends `batch` now, or spools it while the spool is in use or the
  // service is failing.
  void Dispatch(ClickBatch batch, Clock::time_point deadline);
  // Sends the spool's oldest batch; true if it was settled (and popped).
  bool ReplayOne(Clock::time_point deadline);
  // Sends `batch` and settles what the service refuses (dropping refused
  // events, splitting a batch refused as a whole and spooling halves that
  // fail). True when nothing of `batch` is left to retry; false when the
  // call failed otherwise (NoteFailure'd): the caller keeps the batch.
  bool Deliver(const ClickBatch& batch, Clock::time_point deadline);
  absl::StatusOr<ClickSendResult> SendOnce(const ClickBatch& batch, Clock::time_point deadline);
  // Counts the refused events of an accepted batch as dropped; returns how
  // many (distinct indexes of the batch).
  uint64_t DropRefused(const ClickBatch& batch, const std::vector<RefusedClick>& refused);
  void Spool(const ClickBatch& batch);
  void NoteFailure(const absl::Status& status, const ClickBatch& batch);
  void LogQueueDrops();

  ClickQueue* queue_;
  ClickSpool* spool_;
  ClickTransport* transport_;
  const ClickSenderOptions options_;
  std::string instance_id_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> flush_timeout_ns_{0};

  // Sender thread only.
  uint64_t next_batch_ = 1;
  std::mt19937_64 rng_;
  absl::Duration backoff_ = absl::ZeroDuration();  // zero: healthy
  bool refused_ = false;  // the last call failed with a non-transient error
  Clock::time_point next_attempt_{};
  Clock::time_point last_drop_log_{};
  uint64_t drops_since_log_ = 0;
  Clock::time_point last_error_log_{};
  Clock::time_point last_queue_drop_log_{};
  uint64_t queue_drops_logged_ = 0;
  CauseLog refusals_;        // events refused, by reason
  CauseLog whole_refusals_;  // batches refused as a whole, by status message
  CauseLog unreadable_;      // spool records dropped, by message

  struct Counters {
    std::atomic<uint64_t> rpcs{0}, rpc_failures{0}, rpc_ns{0}, batches_acked{0}, events_acked{0},
        batches_spooled{0}, events_spooled{0}, batches_replayed{0}, dropped_spool_full{0},
        dropped_spool_error{0}, dropped_refused{0}, batches_split{0};
  } counters_;
};

// Whether retrying a RecordClicks that failed with `code` can help without
// anyone changing anything (UNAVAILABLE, DEADLINE_EXCEEDED,
// RESOURCE_EXHAUSTED, UNKNOWN, ABORTED, INTERNAL, CANCELLED).
bool IsTransientClickError(absl::StatusCode code);

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_CLICKS_CLICK_SENDER_H_
