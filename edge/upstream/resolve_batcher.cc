#include "edge/upstream/resolve_batcher.h"

#include <algorithm>
#include <memory>
#include <utility>

namespace shortener::edge {

ResolveBatcher::ResolveBatcher(ServiceClient* client, ResolveBatcherOptions options)
    : client_(client), options_{std::max(1, options.max_batch), std::max(1, options.max_in_flight)} {}

namespace {

ResolveReply ShuttingDown() {
  ResolveReply reply;
  reply.outcome = ResolveOutcome::kUnavailable;
  reply.error = absl::UnavailableError("redirect-edge is shutting down");
  return reply;
}

}  // namespace

void ResolveBatcher::Resolve(absl::string_view code, Done done) {
  std::vector<Pending> batch;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (draining_) {
      lock.unlock();
      done(ShuttingDown());
      return;
    }
    queue_.push_back(Pending{std::string(code), std::move(done)});
    if (in_flight_ >= options_.max_in_flight) return;  // a returning call takes it
    ++in_flight_;
    batch.swap(queue_);
  }
  Send(std::move(batch));
}

std::vector<ResolveBatcher::Pending> ResolveBatcher::NextBatch() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Pending> batch;
  if (queue_.empty()) {
    // The last touch of the batcher by this call: Drain may return (and the
    // batcher be destroyed) as soon as the lock is released.
    if (--in_flight_ == 0) idle_.notify_all();
    return batch;
  }
  if (queue_.size() <= static_cast<size_t>(options_.max_batch)) {
    batch.swap(queue_);
  } else {
    auto split = queue_.begin() + options_.max_batch;
    batch.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(split));
    queue_.erase(queue_.begin(), split);
  }
  return batch;
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
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.calls;
    stats_.codes += batch.size();
  }
  if (batch.size() == 1) {
    auto pending = std::make_shared<Pending>(std::move(batch.front()));
    client_->Resolve(pending->code, [this, pending](ResolveReply reply) {
      pending->done(std::move(reply));
      std::vector<Pending> next = NextBatch();
      if (!next.empty()) Send(std::move(next));
    });
    return;
  }
  std::vector<std::string> codes;
  codes.reserve(batch.size());
  for (const Pending& p : batch) codes.push_back(p.code);
  auto waiting = std::make_shared<std::vector<Pending>>(std::move(batch));
  client_->ResolveBatch(std::move(codes), [this, waiting](std::vector<ResolveReply> replies) {
    for (size_t i = 0; i < waiting->size(); ++i) (*waiting)[i].done(std::move(replies[i]));
    std::vector<Pending> next = NextBatch();
    if (!next.empty()) Send(std::move(next));
  });
}

void ResolveBatcher::Drain() {
  std::vector<Pending> queued;
  {
    std::lock_guard<std::mutex> lock(mu_);
    draining_ = true;
    queued.swap(queue_);
  }
  for (Pending& p : queued) p.done(ShuttingDown());
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return in_flight_ == 0; });
}

ResolveBatcher::Stats ResolveBatcher::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace shortener::edge
