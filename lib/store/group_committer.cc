#include "lib/store/group_committer.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <future>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace shortener::store {
namespace {

// store.CreateLinks(links), with an exception that escapes it (a store
// broken by a bug, std::bad_alloc, ...) failing the whole batch: on a
// committer thread it would otherwise end the process, and its callers
// would never be answered.
std::vector<absl::StatusOr<CreateOutcome>> CreateLinksNoThrow(LinkStore& store,
                                                              absl::Span<const NewLink> links) {
  std::string what;
  try {
    return store.CreateLinks(links);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "not a std::exception";
  }
  const absl::Status status =
      absl::InternalError(absl::StrCat("create links: unexpected exception: ", what));
  return std::vector<absl::StatusOr<CreateOutcome>>(links.size(), status);
}

}  // namespace

GroupCommitter::ManyResults::ManyResults(size_t n, DoneMany done)
    : results_(n), remaining_(n), done_(std::move(done)) {}

void GroupCommitter::ManyResults::Set(size_t i, absl::StatusOr<CreateOutcome> result) {
  results_[i] = std::move(result);  // each slot written by one thread
  if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    done_(std::move(results_));
    delete this;
  }
}

void GroupCommitter::Pending::Complete(absl::StatusOr<CreateOutcome> result) {
  if (many != nullptr) {
    many->Set(index, std::move(result));
  } else {
    done(std::move(result));
  }
}

GroupCommitter::GroupCommitter(LinkStore* store, GroupCommitOptions options)
    : store_(store),
      max_batch_(static_cast<size_t>(std::max(1, options.max_batch))),
      max_queued_(static_cast<size_t>(std::max(1, options.max_queued))),
      parallel_backlog_(static_cast<size_t>(std::max(1, options.parallel_backlog))),
      parallel_after_(std::max(absl::ZeroDuration(), options.parallel_after)) {
  int n = std::max(1, options.committer_threads);
  busy_since_.assign(n, absl::InfiniteFuture());
  work_ = std::make_unique<std::condition_variable[]>(n);
  idle_.reserve(n);
  threads_.reserve(n);
  for (int i = 0; i < n; ++i) threads_.emplace_back([this, i] { CommitLoop(i); });
}

GroupCommitter::~GroupCommitter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  for (size_t i = 0; i < threads_.size(); ++i) work_[i].notify_all();
  for (std::thread& t : threads_) t.join();
}

void GroupCommitter::Create(NewLink link, Done done) {
  std::vector<Pending> items;
  items.push_back(Pending{std::move(link), std::move(done), nullptr, 0, 1});
  Enqueue(std::move(items));
}

void GroupCommitter::CreateMany(std::vector<NewLink> links, DoneMany done) {
  if (links.empty()) {
    done({});
    return;
  }
  // Deleted by the last item to complete. Items point at it rather than each
  // carrying a std::function of its own: no allocation or reference count per
  // item of a 1000-link call.
  auto* results = new ManyResults(links.size(), std::move(done));
  std::vector<Pending> items;
  items.reserve(links.size());
  for (size_t i = 0; i < links.size(); ++i) {
    items.push_back(Pending{std::move(links[i]), nullptr, results, i, links.size() - i});
  }
  Enqueue(std::move(items));
}

absl::StatusOr<CreateOutcome> GroupCommitter::CreateAndWait(NewLink link) {
  std::promise<absl::StatusOr<CreateOutcome>> result;
  Create(std::move(link), [&](absl::StatusOr<CreateOutcome> r) { result.set_value(std::move(r)); });
  return result.get_future().get();
}

GroupCommitter::Stats GroupCommitter::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void GroupCommitter::Enqueue(std::vector<Pending> items) {
  std::condition_variable* wake = nullptr;
  absl::Status refusal;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      refusal = absl::UnavailableError("group committer is shutting down");
    } else if (!queue_.empty() && queue_.size() + items.size() > max_queued_) {
      stats_.refused += static_cast<int64_t>(items.size());
      refusal = absl::ResourceExhaustedError(
          absl::StrCat("group committer is full: ", queue_.size(), " links are waiting (at most ",
                       max_queued_, "); retry later"));
    } else {
      for (Pending& p : items) queue_.push_back(std::move(p));
      items.clear();
      if (ShouldWake()) wake = PickIdle();
    }
  }
  if (items.empty()) {
    if (wake != nullptr) wake->notify_one();
    return;
  }
  for (Pending& p : items) p.Complete(refusal);
}

bool GroupCommitter::MayStart(absl::Time now) const {
  if (queue_.empty()) return false;
  if (stopping_ || busy_ == 0 || queue_.size() >= parallel_backlog_) return true;
  absl::Time oldest = *std::min_element(busy_since_.begin(), busy_since_.end());
  return now - oldest >= parallel_after_;
}

bool GroupCommitter::ShouldWake() const {
  // Every idle committer may be asleep without a deadline: wake one when it
  // may start, or to arm the parallel_after timer for what is queued.
  // Waking one for nothing costs a context switch per link.
  if (queue_.empty() || busy_ >= static_cast<int>(busy_since_.size())) return false;
  return !timer_armed_ || busy_ == 0 || queue_.size() >= parallel_backlog_;
}

std::condition_variable* GroupCommitter::PickIdle() {
  return idle_.empty() ? nullptr : &work_[idle_.back()];
}

void GroupCommitter::Idle(std::unique_lock<std::mutex>& lock, size_t slot,
                          std::optional<std::chrono::nanoseconds> timeout) {
  idle_.push_back(slot);
  if (timeout.has_value()) {
    work_[slot].wait_for(lock, *timeout);
  } else {
    work_[slot].wait(lock);
  }
  idle_.erase(std::find(idle_.begin(), idle_.end(), slot));
}

bool GroupCommitter::WaitForBatch(std::unique_lock<std::mutex>& lock, size_t slot) {
  for (;;) {
    if (queue_.empty()) {
      if (stopping_) return false;  // everything is done
      Idle(lock, slot, std::nullopt);
      continue;
    }
    absl::Time now = absl::Now();
    if (MayStart(now)) return true;
    if (timer_armed_) {
      Idle(lock, slot, std::nullopt);  // another idle committer keeps the time
      continue;
    }
    // A committer is busy and the backlog is small: wait for it to take the
    // queue itself, or for it to have been busy parallel_after.
    // Waits of at most a second: an infinite parallel_after must not
    // overflow the clock arithmetic (the loop checks again anyway).
    absl::Time oldest = *std::min_element(busy_since_.begin(), busy_since_.end());
    absl::Duration left = std::min(oldest + parallel_after_ - now, absl::Seconds(1));
    timer_armed_ = true;
    Idle(lock, slot, absl::ToChronoNanoseconds(left));
    timer_armed_ = false;
  }
}

void GroupCommitter::CommitLoop(size_t slot) {
  std::unique_lock<std::mutex> lock(mu_);
  while (WaitForBatch(lock, slot)) {
    std::vector<Pending> batch = TakeBatch();
    busy_ += 1;
    busy_since_[slot] = absl::Now();
    // What did not fit may go to an idle committer now, not after this commit.
    std::condition_variable* wake = ShouldWake() ? PickIdle() : nullptr;
    lock.unlock();
    if (wake != nullptr) wake->notify_one();
    Commit(std::move(batch));
    lock.lock();
    busy_ -= 1;
    busy_since_[slot] = absl::InfiniteFuture();
  }
}

std::vector<GroupCommitter::Pending> GroupCommitter::TakeBatch() {
  std::vector<Pending> batch;
  batch.reserve(std::min(queue_.size(), max_batch_));
  while (!queue_.empty() && batch.size() < max_batch_) {
    // A CreateMany that does not fit in what is left waits for the next
    // batch, unless it is the first (then it is split).
    if (!batch.empty() && batch.size() + queue_.front().group_left > max_batch_) break;
    batch.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  stats_.batches += 1;
  stats_.links += static_cast<int64_t>(batch.size());
  return batch;
}

void GroupCommitter::Commit(std::vector<Pending> batch) {
  std::vector<NewLink> links;
  links.reserve(batch.size());
  for (Pending& p : batch) links.push_back(std::move(p.link));
  std::vector<absl::StatusOr<CreateOutcome>> results = CreateLinksNoThrow(*store_, links);
  for (size_t i = 0; i < batch.size(); ++i) {
    batch[i].Complete(i < results.size()
                          ? std::move(results[i])
                          : absl::InternalError("link store returned too few results"));
  }
}

}  // namespace shortener::store
