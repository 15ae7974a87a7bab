#include "lib/store/group_committer.h"

#include <chrono>
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

batching::AdaptiveBatcherOptions BatcherOptions(const GroupCommitOptions& options) {
  batching::AdaptiveBatcherOptions batcher;
  batcher.max_batch = options.max_batch;
  batcher.max_in_flight = options.committer_threads;
  batcher.max_queued = options.max_queued;
  batcher.parallel_backlog = options.parallel_backlog;
  batcher.parallel_after = options.parallel_after == absl::InfiniteDuration()
                               ? batching::BatchClock::duration::max()
                               : std::chrono::duration_cast<batching::BatchClock::duration>(
                                     absl::ToChronoNanoseconds(options.parallel_after));
  return batcher;
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
    : committer_(store), batcher_(BatcherOptions(options), &committer_) {}

void GroupCommitter::Create(NewLink link, Done done) {
  batcher_.Submit(Pending{std::move(link), std::move(done), nullptr, 0});
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
    items.push_back(Pending{std::move(links[i]), nullptr, results, i});
  }
  batcher_.SubmitGroup(std::move(items));
}

absl::StatusOr<CreateOutcome> GroupCommitter::CreateAndWait(NewLink link) {
  std::promise<absl::StatusOr<CreateOutcome>> result;
  Create(std::move(link), [&](absl::StatusOr<CreateOutcome> r) { result.set_value(std::move(r)); });
  return result.get_future().get();
}

GroupCommitter::Stats GroupCommitter::GetStats() const {
  const auto batches = batcher_.GetStats();
  Stats stats;
  stats.batches = static_cast<int64_t>(batches.batches);
  stats.links = static_cast<int64_t>(batches.items);
  stats.refused = static_cast<int64_t>(batches.refused_queue_full);
  stats.queued = static_cast<int64_t>(batches.queued);
  stats.batch_sizes = batches.batch_sizes;
  stats.queue_wait_seconds = batches.queue_wait_seconds;
  stats.commit_seconds = committer_.CommitSeconds();
  return stats;
}

HistogramCounts GroupCommitter::Committer::CommitSeconds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return commit_seconds_;
}

void GroupCommitter::Committer::Refuse(absl::Span<Pending> links, const batching::Refusal& why) {
  absl::Status refusal;
  switch (why.reason) {
    case batching::Refusal::Reason::kQueueFull:
      refusal = absl::ResourceExhaustedError(absl::StrCat("group committer is full: ", why.queued,
                                                          " links are waiting (at most ",
                                                          why.max_queued, "); retry later"));
      break;
    case batching::Refusal::Reason::kShuttingDown:
      refusal = absl::UnavailableError("group committer is shutting down");
      break;
    case batching::Refusal::Reason::kExpired:  // links carry no deadline
      refusal = absl::DeadlineExceededError("deadline passed before the link was committed");
      break;
  }
  for (Pending& p : links) p.Complete(refusal);
}

void GroupCommitter::Committer::Run(std::vector<Pending> batch) {
  std::vector<NewLink> links;
  links.reserve(batch.size());
  for (Pending& p : batch) links.push_back(std::move(p.link));
  const auto start = std::chrono::steady_clock::now();
  std::vector<absl::StatusOr<CreateOutcome>> results = CreateLinksNoThrow(*store_, links);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  {
    std::lock_guard<std::mutex> lock(mu_);
    commit_seconds_.Observe(took.count());
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    batch[i].Complete(i < results.size()
                          ? std::move(results[i])
                          : absl::InternalError("link store returned too few results"));
  }
}

}  // namespace shortener::store
