#include "edge/clicks/click_sender.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "lib/common/log.h"

namespace shortener::edge {
namespace {

constexpr auto kLogEvery = std::chrono::minutes(1);

uint64_t Load(const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); }
void Add(std::atomic<uint64_t>& a, uint64_t n) { a.fetch_add(n, std::memory_order_relaxed); }

std::chrono::steady_clock::duration ToSteady(absl::Duration d) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      absl::ToChronoNanoseconds(d));
}

// Distinct causes logged apart; more share one line.
constexpr size_t kMaxCauses = 32;

// The part of a reason that names its cause: up to the first digit or
// quote ("user_agent: invalid UTF-8 at byte " for "... at byte 3 (0xFF)").
absl::string_view CauseOf(absl::string_view reason) {
  size_t end = 0;
  while (end < reason.size() && end < 64 && !absl::ascii_isdigit(reason[end]) &&
         reason[end] != '"') {
    ++end;
  }
  return reason.substr(0, end);
}

}  // namespace

uint64_t ClickSender::CauseLog::Add(absl::string_view reason, uint64_t n, Clock::time_point now) {
  absl::string_view cause = CauseOf(reason);
  if (causes.size() >= kMaxCauses && !causes.contains(cause)) cause = "(other causes)";
  Cause& c = causes[cause];
  c.since_log += n;
  if (c.last_log != Clock::time_point{} && now - c.last_log < kLogEvery) return 0;
  c.last_log = now;
  return std::exchange(c.since_log, 0);
}

bool IsTransientClickError(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kOutOfRange:
      return false;
    default:
      return true;
  }
}

ClickSender::ClickSender(ClickQueue* queue, ClickSpool* spool, ClickTransport* transport,
                         ClickSenderOptions options)
    : queue_(queue),
      spool_(spool),
      transport_(transport),
      options_(std::move(options)),
      instance_id_(options_.instance_id) {
  std::random_device device;
  const uint64_t random = (uint64_t{device()} << 32) ^ device();
  rng_.seed(options_.seed != 0 ? options_.seed : random);
  // Unique across restarts and replicas without coordination: 64 random
  // bits per process, then a sequence.
  if (instance_id_.empty())
    instance_id_ = absl::StrFormat("%016x", (uint64_t{device()} << 32) ^ device());
}

ClickSender::~ClickSender() { Stop(absl::ZeroDuration()); }

void ClickSender::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void ClickSender::Stop(absl::Duration flush_timeout) {
  if (!thread_.joinable()) return;
  flush_timeout_ns_.store(absl::ToInt64Nanoseconds(flush_timeout), std::memory_order_relaxed);
  stopping_.store(true, std::memory_order_release);
  queue_->Close();
  thread_.join();
}

void ClickSender::Run() {
  Clock::time_point flush_at = Clock::now() + ToSteady(options_.flush_interval);
  while (!stopping_.load(std::memory_order_acquire)) {
    Clock::time_point wake = flush_at;
    if (!spool_->empty()) wake = std::min(wake, next_attempt_);
    const bool full = queue_->WaitForBatch(options_.batch_size, wake);
    if (stopping_.load(std::memory_order_acquire)) break;
    Clock::time_point now = Clock::now();
    if (full || now >= flush_at) {
      flush_at = now + ToSteady(options_.flush_interval);
      // No deadline but each call's own (rpc_timeout).
      for (ClickBatch& batch : MakeBatches(queue_->Pop(options_.batch_size))) {
        Dispatch(std::move(batch), Clock::time_point::max());
      }
      now = Clock::now();
    }
    if (!spool_->empty() && now >= next_attempt_) {
      ReplayOne(Clock::time_point::max());
    }
    LogQueueDrops();
  }
  Flush(Clock::now() + std::chrono::nanoseconds(flush_timeout_ns_.load(std::memory_order_relaxed)));
}

void ClickSender::Flush(Clock::time_point deadline) {
  while (true) {
    std::vector<ClickEvent> events = queue_->Pop(options_.batch_size);
    if (events.empty()) break;
    // Each batch is tried at once unless batches wait in the spool already
    // (Dispatch then spools it behind them, keeping the order); the replay
    // below retries them with backoff until the deadline.
    for (ClickBatch& batch : MakeBatches(std::move(events))) {
      if (Clock::now() >= deadline) {
        Spool(batch);
      } else {
        next_attempt_ = Clock::now();
        Dispatch(std::move(batch), deadline);
      }
    }
  }
  // Replay what the spool holds until the deadline, backoff included: an
  // in-memory spool dies with the process, and a service that blinked
  // should not leave a file spool behind. A refusal (PERMISSION_DENIED,
  // UNIMPLEMENTED, ...) will not change within the timeout: no waiting.
  while (!spool_->empty() && !refused_) {
    const Clock::time_point now = Clock::now();
    if (now >= deadline) break;
    if (now < next_attempt_) {
      std::this_thread::sleep_for(std::min(next_attempt_, deadline) - now);
      continue;
    }
    ReplayOne(deadline);
  }
  const ClickSpoolStats left = spool_->Stats();
  if (left.batches > 0) {
    LogWarning(
        "click sender stopped with %d batches (%d bytes) in the spool: they are sent "
        "when the edge runs again with the same --click_spool_dir (an in-memory spool "
        "loses them)",
        left.batches, left.bytes);
  }
}

std::vector<ClickBatch> ClickSender::MakeBatches(std::vector<ClickEvent> events) {
  // The events' bounds plus the batch id's field (tag, length, at most
  // kMaxBatchIdBytes) stay within max_batch_bytes.
  constexpr size_t kIdField = 1 + 2 + kMaxBatchIdBytes;
  const size_t budget =
      options_.max_batch_bytes > kIdField ? options_.max_batch_bytes - kIdField : 0;
  std::vector<ClickBatch> batches;
  size_t bytes = 0;
  for (ClickEvent& event : events) {
    const size_t size = EncodedSizeBound(event);
    if (batches.empty() || batches.back().events.size() >= options_.batch_size ||
        (!batches.back().events.empty() && bytes + size > budget)) {
      batches.push_back({absl::StrFormat("%s-%d", instance_id_, next_batch_++), {}});
      bytes = 0;
    }
    bytes += size;
    batches.back().events.push_back(std::move(event));
  }
  return batches;
}

void ClickSender::Dispatch(ClickBatch batch, Clock::time_point deadline) {
  if (!spool_->empty() || Clock::now() < next_attempt_) {
    Spool(batch);
    return;
  }
  if (!Deliver(batch, deadline)) Spool(batch);
}

bool ClickSender::ReplayOne(Clock::time_point deadline) {
  absl::StatusOr<std::optional<ClickBatch>> front = spool_->Front();
  if (!front.ok()) {
    if (front.status().code() == absl::StatusCode::kDataLoss) {
      // The spool dropped and counted the record: go on with the next at
      // once, logging each kind of damage once a minute.
      if (const uint64_t n = unreadable_.Add(front.status().message(), 1, Clock::now()); n > 0) {
        LogError(
            "click spool: %d unreadable records dropped since the last such line (%s); "
            "counted in edge_clicks_dropped_total{reason=\"spool_unreadable\"}",
            n, front.status().message());
      }
      return false;
    }
    LogError("click spool: %s", front.status().ToString());
    // An I/O error would repeat at once: wait like after a failed call.
    next_attempt_ = Clock::now() + ToSteady(options_.max_backoff);
    return false;
  }
  if (!front->has_value()) return false;
  if (!Deliver(**front, deadline)) return false;
  Add(counters_.batches_replayed, 1);
  if (absl::Status popped = spool_->PopFront(); !popped.ok()) {
    LogError("click spool: %s", popped.ToString());
  }
  return true;
}

bool ClickSender::Deliver(const ClickBatch& batch, Clock::time_point deadline) {
  absl::StatusOr<ClickSendResult> result = SendOnce(batch, deadline);
  if (result.ok()) {
    const uint64_t dropped = DropRefused(batch, result->refused);
    Add(counters_.events_acked, batch.events.size() - dropped);
    return true;
  }
  if (result.status().code() != absl::StatusCode::kInvalidArgument) {
    NoteFailure(result.status(), batch);
    return false;
  }
  // Refused as a whole: the service recorded none of it, and these bytes
  // can never succeed. Halves with ids of their own (never recorded
  // either) isolate what it refuses; a single event is dropped.
  const Clock::time_point now = Clock::now();
  if (const uint64_t n = whole_refusals_.Add(result.status().message(), 1, now); n > 0) {
    LogError(
        "click sender: the service refused %d batches as a whole since the last such line, "
        "e.g. %s (%d events): %s; nothing of them was recorded: they are split to keep what "
        "it accepts, and single events it refuses are dropped",
        n, batch.id, batch.events.size(), result.status().ToString());
  }
  if (batch.events.size() <= 1) {
    Add(counters_.dropped_refused, batch.events.size());
    if (const uint64_t n = refusals_.Add(result.status().message(), batch.events.size(), now);
        n > 0) {
      LogError(
          "click events REFUSED by the service and dropped: %d since the last such line for "
          "this cause (%s); counted in edge_clicks_dropped_total{reason=\"refused\"}",
          n, result.status().message());
    }
    return true;
  }
  Add(counters_.batches_split, 1);
  std::pair<ClickBatch, ClickBatch> halves = SplitBatch(batch);
  for (const ClickBatch* half : {&halves.first, &halves.second}) {
    // After a failure of the first half the sender is backing off: the
    // second waits in the spool too.
    const Clock::time_point t = Clock::now();
    if (t < next_attempt_ || t >= deadline || !Deliver(*half, deadline)) Spool(*half);
  }
  return true;
}

uint64_t ClickSender::DropRefused(const ClickBatch& batch,
                                  const std::vector<RefusedClick>& refused) {
  if (refused.empty()) return 0;
  // Only distinct indexes of this batch count: an answer cannot make the
  // edge count more drops than it sent events.
  std::vector<bool> seen(batch.events.size(), false);
  uint64_t dropped = 0;
  const Clock::time_point now = Clock::now();
  for (const RefusedClick& r : refused) {
    if (r.index < 0 || static_cast<size_t>(r.index) >= seen.size() || seen[r.index]) continue;
    seen[r.index] = true;
    ++dropped;
    if (const uint64_t n = refusals_.Add(r.reason, 1, now); n > 0) {
      LogError(
          "click events REFUSED by the service and dropped: %d since the last such line for "
          "this cause (%s; batch %s, event %d); counted in "
          "edge_clicks_dropped_total{reason=\"refused\"}",
          n, r.reason, batch.id, r.index);
    }
  }
  Add(counters_.dropped_refused, dropped);
  return dropped;
}

absl::StatusOr<ClickSendResult> ClickSender::SendOnce(const ClickBatch& batch,
                                                      Clock::time_point deadline) {
  const Clock::time_point start = Clock::now();
  const absl::Duration timeout =
      deadline - start >= ToSteady(options_.rpc_timeout)
          ? options_.rpc_timeout
          : absl::FromChrono(
                std::max(deadline - start, Clock::duration(std::chrono::milliseconds(1))));
  absl::StatusOr<ClickSendResult> result = transport_->Send(batch, timeout);
  Add(counters_.rpcs, 1);
  Add(counters_.rpc_ns,
      static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count()));
  // A refusal of the whole batch is an answer too: the service is up.
  if (result.ok() || result.status().code() == absl::StatusCode::kInvalidArgument) {
    if (result.ok()) Add(counters_.batches_acked, 1);
    if (backoff_ != absl::ZeroDuration()) {
      LogInfo("click sender: RecordClicks works again (batch %s)", batch.id);
    }
    backoff_ = absl::ZeroDuration();
    next_attempt_ = Clock::time_point{};
    refused_ = false;
  }
  if (!result.ok()) Add(counters_.rpc_failures, 1);
  return result;
}

void ClickSender::NoteFailure(const absl::Status& status, const ClickBatch& batch) {
  const bool transient = IsTransientClickError(status.code());
  refused_ = !transient;
  // A definitive refusal will not change by itself: retry at the slowest pace.
  backoff_ = !transient                         ? options_.max_backoff
             : backoff_ == absl::ZeroDuration() ? options_.initial_backoff
                                                : std::min(backoff_ * 2, options_.max_backoff);
  // Full jitter over the upper half: replicas that failed together do not
  // retry together.
  std::uniform_real_distribution<double> jitter(0.5, 1.0);
  next_attempt_ = Clock::now() + ToSteady(backoff_ * jitter(rng_));
  const Clock::time_point now = Clock::now();
  if (!transient) {
    if (now - last_error_log_ >= kLogEvery || last_error_log_ == Clock::time_point{}) {
      last_error_log_ = now;
      LogError(
          "click sender: the service refuses RecordClicks (%s) for batch %s: clicks are "
          "kept in the spool and retried every %s; check the edge's key has the "
          "record_clicks scope and the service's version",
          status.ToString(), batch.id, absl::FormatDuration(options_.max_backoff));
    }
  } else if (backoff_ == options_.initial_backoff) {
    LogWarning(
        "click sender: RecordClicks failed (%s) for batch %s: spooling, retrying with "
        "backoff",
        status.ToString(), batch.id);
  }
}

void ClickSender::Spool(const ClickBatch& batch) {
  const absl::Status status = spool_->Append(batch);
  if (status.ok()) {
    Add(counters_.batches_spooled, 1);
    Add(counters_.events_spooled, batch.events.size());
    return;
  }
  const bool full = status.code() == absl::StatusCode::kResourceExhausted;
  Add(full ? counters_.dropped_spool_full : counters_.dropped_spool_error, batch.events.size());
  drops_since_log_ += batch.events.size();
  const Clock::time_point now = Clock::now();
  if (last_drop_log_ == Clock::time_point{} || now - last_drop_log_ >= kLogEvery) {
    last_drop_log_ = now;
    LogError(
        "click events DROPPED: %d since the last such line (%s); counted in "
        "edge_clicks_dropped_total",
        drops_since_log_, status.ToString());
    drops_since_log_ = 0;
  }
}

void ClickSender::LogQueueDrops() {
  // The event loops only count their drops (no logging on the hot path);
  // the sender says so in the log, at most once a minute.
  const Clock::time_point now = Clock::now();
  if (last_queue_drop_log_ != Clock::time_point{} && now - last_queue_drop_log_ < kLogEvery) {
    return;
  }
  const uint64_t dropped = queue_->Stats().dropped_full;
  if (dropped == queue_drops_logged_) return;
  LogError(
      "click events DROPPED: %d since the last such line (the click queue was full: "
      "--click_queue_events/--click_queue_bytes, or the sender cannot keep up); counted in "
      "edge_clicks_dropped_total{reason=\"queue_full\"}",
      dropped - queue_drops_logged_);
  queue_drops_logged_ = dropped;
  last_queue_drop_log_ = now;
}

ClickSenderStats ClickSender::Stats() const {
  ClickSenderStats s;
  s.rpcs = Load(counters_.rpcs);
  s.rpc_failures = Load(counters_.rpc_failures);
  s.rpc_seconds_ns = Load(counters_.rpc_ns);
  s.batches_acked = Load(counters_.batches_acked);
  s.events_acked = Load(counters_.events_acked);
  s.batches_spooled = Load(counters_.batches_spooled);
  s.events_spooled = Load(counters_.events_spooled);
  s.batches_replayed = Load(counters_.batches_replayed);
  s.dropped_spool_full = Load(counters_.dropped_spool_full);
  s.dropped_spool_error = Load(counters_.dropped_spool_error);
  s.dropped_refused = Load(counters_.dropped_refused);
  s.batches_split = Load(counters_.batches_split);
  return s;
}

}  // namespace shortener::edge
