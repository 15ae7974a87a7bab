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

using Links = absl::StatusOr<std::vector<absl::StatusOr<Link>>>;

// get() (a store call), with an exception that escapes it failing the whole
// batch: on a reader thread it would otherwise end the process, and its
// callers would never be answered. A result of the wrong length is INTERNAL.
template <typename Get>
Links GetNoThrow(Get get, size_t keys) {
  std::string what;
  try {
    Links links = get();
    if (links.ok() && links->size() != keys) {
      return absl::InternalError(absl::StrCat("get links: the store returned ", links->size(),
                                              " results for ", keys, " keys"));
    }
    return links;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "not a std::exception";
  }
  return absl::InternalError(absl::StrCat("get links: unexpected exception: ", what));
}

}  // namespace

ReadBatcher::ReadBatcher(LinkStore* store, ReadBatchOptions options)
    : store_(store),
      max_batch_(static_cast<size_t>(std::max(1, options.max_batch))),
      max_queued_(static_cast<size_t>(std::max(1, options.max_queued))) {
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
  Pending pending;
  pending.id = id;
  pending.done = std::move(done);
  Enqueue(std::move(pending));
}

void ReadBatcher::GetByAlias(std::string alias, Done done) {
  Pending pending;
  pending.alias = std::move(alias);
  pending.by_alias = true;
  pending.done = std::move(done);
  Enqueue(std::move(pending));
}

void ReadBatcher::Enqueue(Pending pending) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() < max_queued_) {
      queue_.push_back(std::move(pending));
      pending.done = nullptr;
    } else {
      ++stats_.refused;
    }
  }
  if (pending.done) {
    pending.done(absl::ResourceExhaustedError(
        absl::StrCat("read batcher is full: ", max_queued_, " look-ups are waiting; retry later")));
    return;
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

absl::StatusOr<Link> ReadBatcher::GetByAliasAndWait(std::string alias) {
  std::promise<absl::StatusOr<Link>> result;
  GetByAlias(std::move(alias), [&](absl::StatusOr<Link> r) { result.set_value(std::move(r)); });
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
  // The same key asked twice (two edges missing one code) is looked up once.
  std::vector<int64_t> ids;
  std::vector<std::string> aliases;
  absl::flat_hash_map<int64_t, size_t> id_slot;
  absl::flat_hash_map<std::string, size_t> alias_slot;
  for (const Pending& p : batch) {
    if (!p.by_alias) {
      if (id_slot.emplace(p.id, ids.size()).second) ids.push_back(p.id);
    } else if (alias_slot.emplace(p.alias, aliases.size()).second) {
      aliases.push_back(p.alias);
    }
  }
  Links by_id, by_alias;
  if (!ids.empty()) by_id = GetNoThrow([&] { return store_->GetByIds(ids); }, ids.size());
  if (!aliases.empty()) {
    by_alias = GetNoThrow([&] { return store_->GetByAliases(aliases); }, aliases.size());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.queries += (ids.empty() ? 0 : 1) + (aliases.empty() ? 0 : 1);
  }
  for (Pending& p : batch) {
    const Links& links = p.by_alias ? by_alias : by_id;
    if (!links.ok()) {
      p.done(links.status());
    } else {
      p.done((*links)[p.by_alias ? alias_slot[p.alias] : id_slot[p.id]]);
    }
  }
}

}  // namespace shortener::store
