#include "lib/store/read_batcher.h"

#include <algorithm>
#include <exception>
#include <future>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace shortener::store {
namespace {

// store.GetByIds(ids), with an exception that escapes it failing the whole
// batch: on a reader thread it would otherwise end the process, and its
// callers would never be answered.
absl::StatusOr<std::vector<absl::StatusOr<Link>>> GetByIdsNoThrow(LinkStore& store,
                                                                  absl::Span<const int64_t> ids) {
  std::string what;
  try {
    return store.GetByIds(ids);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "not a std::exception";
  }
  return absl::InternalError(absl::StrCat("get links: unexpected exception: ", what));
}

}  // namespace

ReadBatcher::ReadBatcher(LinkStore* store, ReadBatchOptions options)
    : store_(store), max_batch_(static_cast<size_t>(std::max(1, options.max_batch))) {
  int n = std::max(1, options.reader_threads);
  threads_.reserve(n);
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { ReadLoop(); });
}

ReadBatcher::~ReadBatcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ReadBatcher::GetById(int64_t id, Done done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(Pending{id, std::move(done)});
  }
  // A reader that is idle takes it now; when all are busy the notification
  // is lost harmlessly: each reader looks at the queue before it sleeps.
  work_.notify_one();
}

absl::StatusOr<Link> ReadBatcher::GetByIdAndWait(int64_t id) {
  std::promise<absl::StatusOr<Link>> result;
  GetById(id, [&](absl::StatusOr<Link> r) { result.set_value(std::move(r)); });
  return result.get_future().get();
}

ReadBatcher::Stats ReadBatcher::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void ReadBatcher::ReadLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything is answered
    std::vector<Pending> batch;
    size_t n = std::min(queue_.size(), max_batch_);
    batch.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    stats_.batches += 1;
    stats_.lookups += static_cast<int64_t>(n);
    // What did not fit goes to another idle reader now, not after this query.
    bool more = !queue_.empty();
    lock.unlock();
    if (more) work_.notify_one();
    Answer(std::move(batch));
    lock.lock();
  }
}

void ReadBatcher::Answer(std::vector<Pending> batch) {
  // The same id asked twice (two edges missing one code) is looked up once.
  std::vector<int64_t> ids;
  ids.reserve(batch.size());
  absl::flat_hash_map<int64_t, size_t> slot;
  slot.reserve(batch.size());
  for (const Pending& p : batch) {
    if (slot.emplace(p.id, ids.size()).second) ids.push_back(p.id);
  }
  absl::StatusOr<std::vector<absl::StatusOr<Link>>> links = GetByIdsNoThrow(*store_, ids);
  if (links.ok() && links->size() != ids.size()) {
    links = absl::InternalError(absl::StrCat("get links: the store returned ", links->size(),
                                             " results for ", ids.size(), " ids"));
  }
  for (Pending& p : batch) {
    if (!links.ok()) {
      p.done(links.status());
    } else {
      p.done((*links)[slot[p.id]]);
    }
  }
}

}  // namespace shortener::store
