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

ResolveReply QueueFull(int max_queued) {
  return NoAnswer(ResolveOutcome::kOverloaded,
                  absl::ResourceExhaustedError(absl::StrCat("resolve queue full: ", max_queued,
                                                            " codes wait for a call already")));
}

ResolveReply ExpiredQueued() {
  return NoAnswer(ResolveOutcome::kTimedOut,
                  absl::DeadlineExceededError("miss deadline passed before the code was sent"));
}

}  // namespace

ResolveBatcher::ResolveBatcher(LinkResolver* upstream, ResolveBatcherOptions options)
    : upstream_(upstream),
      options_{std::max(1, options.max_batch), std::max(1, options.max_in_flight),
               std::max(1, options.max_queued)},
      expirer_([this] { ExpireLoop(); }) {}

ResolveBatcher::~ResolveBatcher() { Drain(); }

void ResolveBatcher::Resolve(absl::string_view code, Clock::time_point deadline, Done done) {
  std::vector<Pending> batch;
  std::vector<Pending> expired;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (draining_) {
      lock.unlock();
      done(ShuttingDown());
      return;
    }
    if (Clock::now() >= deadline) {
      ++stats_.expired_queued;
      lock.unlock();
      done(ExpiredQueued());
      return;
    }
    if (in_flight_ >= options_.max_in_flight) {
      // A returning call takes it, or the expiry thread at its deadline.
      if (queue_.size() >= static_cast<size_t>(options_.max_queued)) {
        ++stats_.refused_queue_full;
        lock.unlock();
        done(QueueFull(options_.max_queued));
        return;
      }
      queue_.push_back(Pending{std::string(code), deadline, std::move(done)});
      if (deadline < expiry_at_) {
        expiry_at_ = deadline;
        expiry_.notify_one();
      }
      return;
    }
    ++in_flight_;
    // Anything queued is older than this code: it goes first, unless its
    // deadline passed (it would cut the call short for all).
    TakeExpired(Clock::now(), expired);
    batch.reserve(queue_.size() + 1);
    for (Pending& p : queue_) batch.push_back(std::move(p));
    queue_.clear();
    batch.push_back(Pending{std::string(code), deadline, std::move(done)});
  }
  for (Pending& p : expired) p.done(ExpiredQueued());
  Send(std::move(batch));
}

std::vector<ResolveBatcher::Pending> ResolveBatcher::NextBatch() {
  for (;;) {
    std::vector<Pending> expired;
    {
      std::lock_guard<std::mutex> lock(mu_);
      TakeExpired(Clock::now(), expired);
      if (expired.empty()) {
        std::vector<Pending> batch;
        if (queue_.empty()) {
          // The last touch of the batcher by this call: Drain may return
          // (and the batcher be destroyed) as soon as the lock is released.
          if (--in_flight_ == 0) idle_.notify_all();
          return batch;
        }
        const size_t n = std::min(queue_.size(), static_cast<size_t>(options_.max_batch));
        batch.reserve(n);
        for (size_t i = 0; i < n; ++i) {
          batch.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
        return batch;
      }
    }
    // Answered while this call still holds its slot, so Drain waits for them.
    for (Pending& p : expired) p.done(ExpiredQueued());
  }
}

ResolveBatcher::Clock::time_point ResolveBatcher::TakeExpired(Clock::time_point now,
                                                              std::vector<Pending>& expired) {
  Clock::time_point earliest = Clock::time_point::max();
  // Deadlines are nearly in queue order; the queue is bounded (max_queued).
  auto keep = queue_.begin();
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->deadline <= now) {
      expired.push_back(std::move(*it));
      continue;
    }
    earliest = std::min(earliest, it->deadline);
    if (keep != it) *keep = std::move(*it);
    ++keep;
  }
  queue_.erase(keep, queue_.end());
  stats_.expired_queued += expired.size();
  return earliest;
}

void ResolveBatcher::ExpireLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!draining_) {
    std::vector<Pending> expired;
    expiry_at_ = TakeExpired(Clock::now(), expired);
    if (expired.empty()) {
      if (expiry_at_ == Clock::time_point::max()) {
        expiry_.wait(lock);
      } else {
        expiry_.wait_until(lock, expiry_at_);
      }
      continue;
    }
    lock.unlock();
    for (Pending& p : expired) p.done(ExpiredQueued());
    lock.lock();
  }
}

void ResolveBatcher::Send(std::vector<Pending> batch) {
  // A batch larger than max_batch only comes from Resolve's swap: split it.
  while (batch.size() > static_cast<size_t>(options_.max_batch)) {
    std::vector<Pending> rest(std::make_move_iterator(batch.begin() + options_.max_batch),
                              std::make_move_iterator(batch.end()));
    batch.resize(options_.max_batch);
    {
      std::lock_guard<std::mutex> lock(mu_);
      // Put the rest back in front: it is older than anything queued since.
      queue_.insert(queue_.begin(), std::make_move_iterator(rest.begin()),
                    std::make_move_iterator(rest.end()));
      if (rest.front().deadline < expiry_at_) {
        expiry_at_ = rest.front().deadline;
        expiry_.notify_one();
      }
    }
  }
  Clock::time_point deadline = Clock::time_point::max();
  for (const Pending& p : batch) deadline = std::min(deadline, p.deadline);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.calls;
    stats_.codes += batch.size();
  }
  auto waiting = std::make_shared<std::vector<Pending>>(std::move(batch));
  auto answer = [this, waiting](std::vector<ResolveReply> replies) {
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
    if (expired != 0) {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.expired_in_call += expired;
    }
    std::vector<Pending> next = NextBatch();
    if (!next.empty()) Send(std::move(next));
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

void ResolveBatcher::Drain() {
  std::deque<Pending> queued;
  {
    std::lock_guard<std::mutex> lock(mu_);
    draining_ = true;
    queued.swap(queue_);
  }
  expiry_.notify_all();
  if (expirer_.joinable()) expirer_.join();
  for (Pending& p : queued) p.done(ShuttingDown());
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return in_flight_ == 0; });
}

ResolveBatcher::Stats ResolveBatcher::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats stats = stats_;
  stats.queued = queue_.size();
  return stats;
}

}  // namespace shortener::edge
