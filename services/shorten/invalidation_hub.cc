#include "services/shorten/invalidation_hub.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace shortener::service {

InvalidationHub::Subscription::Subscription(size_t max_codes_per_message, size_t max_pending_codes,
                                            std::function<void()> wake)
    : max_codes_per_message_(std::max<size_t>(1, max_codes_per_message)),
      max_pending_codes_(max_pending_codes),
      wake_(std::move(wake)) {}

std::optional<InvalidationBatch> InvalidationHub::Subscription::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return std::nullopt;
  InvalidationBatch batch;
  if (drop_all_) {
    drop_all_ = false;
    codes_.clear();  // covered by dropping everything
    batch.drop_all = true;
    return batch;
  }
  if (codes_.empty()) return std::nullopt;
  size_t n = std::min(codes_.size(), max_codes_per_message_);
  batch.codes.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    batch.codes.push_back(std::move(codes_.front()));
    codes_.pop_front();
  }
  return batch;
}

bool InvalidationHub::Subscription::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

bool InvalidationHub::Subscription::Deliver(const std::vector<std::string>& codes,
                                            bool* overflowed) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return false;
  if (drop_all_) return true;  // absorbed by the pending drop_all
  if (codes_.size() + codes.size() > max_pending_codes_) {
    // A subscriber this far behind gets one drop_all instead of a backlog
    // that would only grow.
    codes_.clear();
    drop_all_ = true;
    *overflowed = true;
    return true;
  }
  codes_.insert(codes_.end(), codes.begin(), codes.end());
  return true;
}

bool InvalidationHub::Subscription::MarkDropAll() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return false;
  drop_all_ = true;
  codes_.clear();
  return true;
}

void InvalidationHub::Subscription::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  codes_.clear();
}

InvalidationHub::InvalidationHub(InvalidationHubOptions options) : options_(std::move(options)) {
  flusher_ = std::thread([this] { FlushLoop(); });
}

InvalidationHub::~InvalidationHub() {
  Close();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_.notify_all();
  flusher_.join();
}

absl::StatusOr<std::shared_ptr<InvalidationHub::Subscription>> InvalidationHub::Subscribe(
    std::function<void()> wake) {
  std::shared_ptr<Subscription> sub(new Subscription(options_.max_codes_per_message,
                                                     options_.max_pending_codes, std::move(wake)));
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) {
    sub->Close();
  } else if (subscribers_.size() >= options_.max_subscribers) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "invalidation subscribers: ", subscribers_.size(),
        " are subscribed, the limit of this "
        "replica (--max_invalidation_subscribers); subscribe to another replica or retry later"));
  } else {
    subscribers_.push_back(sub);
  }
  return sub;
}

void InvalidationHub::Unsubscribe(const std::shared_ptr<Subscription>& subscription) {
  subscription->Close();
  std::lock_guard<std::mutex> lock(mu_);
  subscribers_.erase(std::remove(subscribers_.begin(), subscribers_.end(), subscription),
                     subscribers_.end());
}

void InvalidationHub::Publish(const std::string& code) {
  bool wake_flusher = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_ || !pending_set_.insert(code).second) return;
    pending_.push_back(code);
    if (pending_.size() == 1) {
      first_pending_ = absl::Now();
      wake_flusher = true;  // to start the flush window
    }
    if (pending_.size() == options_.max_codes_per_message) wake_flusher = true;  // full
  }
  if (wake_flusher) work_.notify_one();
}

void InvalidationHub::DropAll() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.drop_alls += 1;
  }
  for (const std::shared_ptr<Subscription>& sub : Snapshot()) {
    if (sub->MarkDropAll() && sub->wake_) sub->wake_();
  }
}

void InvalidationHub::Close() {
  std::vector<std::shared_ptr<Subscription>> subs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    subs.swap(subscribers_);
    pending_.clear();
    pending_set_.clear();
  }
  for (const std::shared_ptr<Subscription>& sub : subs) {
    sub->Close();
    if (sub->wake_) sub->wake_();
  }
}

size_t InvalidationHub::subscriber_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return subscribers_.size();
}

InvalidationHub::Stats InvalidationHub::GetStats() const {
  std::vector<std::shared_ptr<Subscription>> subscribers;
  Stats stats;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats = stats_;
    stats.pending = static_cast<int64_t>(pending_.size());
    subscribers = subscribers_;
  }
  // Each subscription's own lock, not the hub's: a scrape never holds up
  // the flusher for more than one subscriber at a time.
  stats.subscribers = static_cast<int64_t>(subscribers.size());
  for (const std::shared_ptr<Subscription>& sub : subscribers) {
    const int64_t backlog = static_cast<int64_t>(sub->backlog());
    stats.backlog += backlog;
    stats.max_backlog = std::max(stats.max_backlog, backlog);
  }
  return stats;
}

size_t InvalidationHub::Subscription::backlog() const {
  std::lock_guard<std::mutex> lock(mu_);
  return codes_.size();
}

std::vector<std::shared_ptr<InvalidationHub::Subscription>> InvalidationHub::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return subscribers_;
}

void InvalidationHub::FlushLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
    if (pending_.empty()) return;  // stopping
    // Let codes published close together gather, up to a full message.
    work_.wait_until(lock, absl::ToChronoTime(first_pending_ + options_.flush_interval), [this] {
      return stopping_ || pending_.size() >= options_.max_codes_per_message;
    });
    std::vector<std::string> codes;
    codes.swap(pending_);
    pending_set_.clear();
    first_pending_ = absl::InfiniteFuture();
    stats_.codes += static_cast<int64_t>(codes.size());
    stats_.batches += 1;
    std::vector<std::shared_ptr<Subscription>> subs = subscribers_;
    lock.unlock();
    int64_t overflows = 0;
    for (const std::shared_ptr<Subscription>& sub : subs) {
      bool overflowed = false;
      if (sub->Deliver(codes, &overflowed) && sub->wake_) sub->wake_();
      overflows += overflowed ? 1 : 0;
    }
    lock.lock();
    stats_.overflows += overflows;
  }
}

}  // namespace shortener::service
