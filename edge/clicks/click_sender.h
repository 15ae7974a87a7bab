// The click sender: one background thread that takes events from the
// ClickQueue in batches (--click_batch events, or whatever arrived within
// --click_flush_interval), names each batch (edge instance id + sequence)
// and records it through the ClickTransport.
//
// A batch whose call fails is put in the ClickSpool with its id; while the
// spool holds anything (or the sender is backing off), new batches go to the
// spool behind it, so batches are delivered in order and failures never pile
// up in memory. The spool is replayed oldest-first, one call at a time,
// with exponential backoff and jitter between failed attempts; a replayed
// batch keeps its id, so the service counts it once even when an earlier
// attempt did reach it. Errors that retrying cannot fix
// (INVALID_ARGUMENT, PERMISSION_DENIED, UNAUTHENTICATED, UNIMPLEMENTED) are
// logged as errors and the batch is kept and retried at the longest backoff:
// the service may be fixed or upgraded. Events are lost only when the spool
// is full (or cannot be written): counted and logged at most once a minute.
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

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "edge/clicks/click_queue.h"
#include "edge/clicks/click_spool.h"
#include "edge/clicks/click_transport.h"

namespace shortener::edge {

struct ClickSenderOptions {
  size_t batch_size = 1000;                          // --click_batch
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
  uint64_t events_acked = 0;
  uint64_t batches_spooled = 0;  // batches written to the spool
  uint64_t events_spooled = 0;
  uint64_t batches_replayed = 0;     // spooled batches later accepted
  uint64_t dropped_spool_full = 0;   // events lost: spool at its cap
  uint64_t dropped_spool_error = 0;  // events lost: the spool could not be written
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

  void Run();
  void Flush(Clock::time_point deadline);
  // Sends `batch` now, or spools it while the spool is in use or the
  // service is failing.
  void Dispatch(ClickBatch batch, Clock::time_point deadline);
  // Sends the spool's oldest batch; true if it was accepted.
  bool ReplayOne(Clock::time_point deadline);
  absl::Status SendOnce(const ClickBatch& batch, Clock::time_point deadline);
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

  struct Counters {
    std::atomic<uint64_t> rpcs{0}, rpc_failures{0}, rpc_ns{0}, batches_acked{0}, events_acked{0},
        batches_spooled{0}, events_spooled{0}, batches_replayed{0}, dropped_spool_full{0},
        dropped_spool_error{0};
  } counters_;
};

// Whether retrying a RecordClicks that failed with `code` can help without
// anyone changing anything (UNAVAILABLE, DEADLINE_EXCEEDED,
// RESOURCE_EXHAUSTED, UNKNOWN, ABORTED, INTERNAL, CANCELLED).
bool IsTransientClickError(absl::StatusCode code);

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_CLICKS_CLICK_SENDER_H_
