#include "edge/upstream/resolve_batcher.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

namespace shortener::edge {
namespace {

ResolveReply NoAnswer(ResolveOutcome outcome, absl::Status why) {
  ResolveReply reply;
  reply.outcome = outcome;
  reply.error = std::move(why);
  return reply;
}

ResolveReply ShuttingDown() {
  return NoAnswer(ResolveOutcome::kUnavailable,
                  absl::UnavailableError("redirect-edge is shutting down"));
}

ResolveReply QueueFull(size_t max_queued) {
  return NoAnswer(ResolveOutcome::kOverloaded,
                  absl::ResourceExhaustedError(absl::StrCat("resolve queue full: ", max_queued,
                                                            " codes wait for a call already")));
}

ResolveReply ExpiredQueued() {
  return NoAnswer(ResolveOutcome::kTimedOut,
                  absl::DeadlineExceededError("miss deadline passed before the code was sent"));
}

batching::AdaptiveBatcherOptions BatcherOptions(const ResolveBatcherOptions& options) {
  batching::AdaptiveBatcherOptions batcher;
  batcher.max_batch = options.max_batch;
  batcher.max_in_flight = options.max_in_flight;
  batcher.max_queued = options.max_queued;
  // Every code carries the request's miss deadline: answered at it, even
  // while every call is out.
  batcher.expire_on_time = true;
  return batcher;
}

}  // namespace

ResolveBatcher::ResolveBatcher(LinkResolver* upstream, ResolveBatcherOptions options)
    : sender_(upstream), batcher_(BatcherOptions(options), &sender_) {}

ResolveBatcher::~ResolveBatcher() { Drain(); }

void ResolveBatcher::Resolve(absl::string_view code, Clock::time_point deadline, Done done) {
  batcher_.Submit(Pending{std::string(code), deadline, std::move(done)}, deadline);
}

void ResolveBatcher::Drain() {
  batcher_.Shutdown(batching::AdaptiveBatcher<Pending>::Queued::kRefuse);
}

void ResolveBatcher::Sender::Refuse(absl::Span<Pending> codes, const batching::Refusal& why) {
  for (Pending& p : codes) {
    switch (why.reason) {
      case batching::Refusal::Reason::kQueueFull:
        p.done(QueueFull(why.max_queued));
        break;
      case batching::Refusal::Reason::kShuttingDown:
        p.done(ShuttingDown());
        break;
      case batching::Refusal::Reason::kExpired:
        p.done(ExpiredQueued());
        break;
    }
  }
}

void ResolveBatcher::Sender::Start(std::vector<Pending> batch, batching::BatchFinished finished) {
  Clock::time_point deadline = Clock::time_point::max();
  for (const Pending& p : batch) deadline = std::min(deadline, p.deadline);
  auto waiting = std::make_shared<std::vector<Pending>>(std::move(batch));
  auto answer = [this, waiting,
                 finished = std::move(finished)](std::vector<ResolveReply> replies) mutable {
    const Clock::time_point now = Clock::now();
    uint64_t expired = 0;
    for (size_t i = 0; i < waiting->size(); ++i) {
      Pending& p = (*waiting)[i];
      ResolveReply& reply = replies[i];
      // The call was cut short by this code's deadline (or ended without an
      // answer after it): say so rather than "unavailable".
      if (reply.outcome == ResolveOutcome::kUnavailable && now >= p.deadline) {
        reply.outcome = ResolveOutcome::kTimedOut;
        ++expired;
      }
      p.done(std::move(reply));
    }
    if (expired != 0) expired_in_call.fetch_add(expired, std::memory_order_relaxed);
    // The last touch of the batcher by this call: Drain may return (and the
    // batcher be destroyed) once it has freed the slot.
    finished();
  };
  if (waiting->size() == 1) {
    upstream_->Resolve(waiting->front().code, deadline,
                       [answer = std::move(answer)](ResolveReply reply) mutable {
                         std::vector<ResolveReply> replies;
                         replies.push_back(std::move(reply));
                         answer(std::move(replies));
                       });
    return;
  }
  std::vector<std::string> codes;
  codes.reserve(waiting->size());
  for (const Pending& p : *waiting) codes.push_back(p.code);
  upstream_->ResolveBatch(std::move(codes), deadline, std::move(answer));
}

ResolveBatcher::Stats ResolveBatcher::GetStats() const {
  const auto batches = batcher_.GetStats();
  Stats stats;
  stats.calls = batches.batches;
  stats.codes = batches.items;
  stats.refused_queue_full = batches.refused_queue_full;
  stats.expired_queued = batches.expired_queued;
  stats.expired_in_call = sender_.expired_in_call.load(std::memory_order_relaxed);
  stats.queued = batches.queued;
  return stats;
}

}  // namespace shortener::edge
