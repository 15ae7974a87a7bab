// GroupCommitter: group commit for LinkStore::CreateLinks. Callers on many
// threads hand over links; committer threads take everything queued (up to
// max_batch links) and create it with one CreateLinks call, i.e. one
// transaction, then complete every caller with its own result. A caller is
// completed only after its batch returned, so an OK result is durable.
//
// Batching is natural, with no timer: a committer that finds work takes it at
// once; while it commits, new arrivals queue up for the next batch. With 64
// callers in flight one transaction carries tens of links instead of one.
//
// Extra committers join only under a real backlog: while one committer is
// busy, another starts a batch only when `parallel_backlog` links are queued
// or the busy one has been committing for `parallel_after`. Otherwise the
// busy committer takes everything that queued once it is done: fewer, bigger
// transactions (less database CPU per link) for many small calls, and
// transactions in parallel for large CreateMany calls.
//
// Bounded: at most max_queued links wait for a committer. A Create or
// CreateMany that would take the queue past it is refused whole with
// RESOURCE_EXHAUSTED "group committer is full: ..." at once, on the calling
// thread (a call is never split by the bound; one arriving at an empty queue
// is always taken, however large).
//
// Built on batching::AdaptiveBatcher (lib/batching/adaptive_batcher.h),
// with a blocking executor and its parallel rule (backlog or age): the
// queue, its bound and the committer threads are its; the transaction and
// the results are here.
//
// Thread-safe. Callbacks run on a committer thread (or the calling thread
// for a refusal): keep them short and never block in them on another
// GroupCommitter call (that would stall a committer).
#ifndef SHORTENER_LIB_STORE_GROUP_COMMITTER_H_
#define SHORTENER_LIB_STORE_GROUP_COMMITTER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "lib/batching/adaptive_batcher.h"
#include "lib/common/histogram_counts.h"
#include "lib/store/link_store.h"

namespace shortener::store {

struct GroupCommitOptions {
  // Links per transaction at most. Default 1000.
  int max_batch = 1000;
  // Batches in flight at most. Default 2.
  int committer_threads = 2;
  // While a committer is busy, another one starts a batch only when this many
  // links are queued... Default 256.
  int parallel_backlog = 256;
  // ... or when the busy committer started its batch this long ago.
  // Default 10 ms.
  absl::Duration parallel_after = absl::Milliseconds(10);
  // Links waiting for a committer at most (see the file comment). Default
  // 20000 (20 full transactions).
  int max_queued = 20000;
};

class GroupCommitter {
 public:
  using Done = std::function<void(absl::StatusOr<CreateOutcome>)>;
  using DoneMany = std::function<void(std::vector<absl::StatusOr<CreateOutcome>>)>;

  // `store` must outlive the committer. Options below 1 count as 1.
  GroupCommitter(LinkStore* store, GroupCommitOptions options);
  // Completes everything queued, then stops its threads. No call may start
  // once destruction has begun.
  ~GroupCommitter() = default;
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Queues `link` and returns without waiting for the database. `done` gets
  // the item's CreateLinks result (see LinkStore::CreateLinks for its codes),
  // on a committer thread; or RESOURCE_EXHAUSTED at once when the queue is
  // full. An exception escaping CreateLinks fails its whole batch INTERNAL
  // "create links: unexpected exception: <what()>".
  void Create(NewLink link, Done done);

  // Queues many links together (BatchShorten): they go into one transaction
  // when they fit in max_batch, else into consecutive ones. `done` gets the
  // results in input order, once all are known (at once, on this thread,
  // for an empty `links`).
  void CreateMany(std::vector<NewLink> links, DoneMany done);

  // Blocking convenience for tests and command-line callers.
  absl::StatusOr<CreateOutcome> CreateAndWait(NewLink link);

  struct Stats {
    int64_t batches = 0;                             // CreateLinks calls made
    int64_t links = 0;                               // links passed to them
    int64_t refused = 0;                             // links refused: the queue was full
    int64_t queued = 0;                              // links waiting for a committer now
    HistogramCounts batch_sizes{BatchSizeBounds()};  // links per transaction
    // Per transaction: how long its oldest link waited for a committer.
    HistogramCounts queue_wait_seconds{WaitSecondsBounds()};
    // Per transaction: how long CreateLinks took (the callers wait for it).
    HistogramCounts commit_seconds{WaitSecondsBounds()};
  };
  Stats GetStats() const;

 private:
  // Gathers the results of one CreateMany; the last item to complete (on any
  // committer thread) hands them over and deletes it.
  class ManyResults {
   public:
    ManyResults(size_t n, DoneMany done);
    void Set(size_t i, absl::StatusOr<CreateOutcome> result);

   private:
    std::vector<absl::StatusOr<CreateOutcome>> results_;
    std::atomic<size_t> remaining_;
    DoneMany done_;
  };

  struct Pending {
    NewLink link;
    Done done;                    // a Create's callback...
    ManyResults* many = nullptr;  // ... or the CreateMany it is item `index` of
    size_t index = 0;

    // Hands `result` to the caller. Exactly once per Pending.
    void Complete(absl::StatusOr<CreateOutcome> result);
  };

  // Commits a batch with one CreateLinks call.
  class Committer final : public batching::BlockingBatchExecutor<Pending> {
   public:
    explicit Committer(LinkStore* store) : store_(store) {}
    void Run(std::vector<Pending> batch) override;
    void Refuse(absl::Span<Pending> links, const batching::Refusal& why) override;
    HistogramCounts CommitSeconds() const;

   private:
    LinkStore* const store_;
    mutable std::mutex mu_;
    HistogramCounts commit_seconds_{WaitSecondsBounds()};  // guarded by mu_
  };

  Committer committer_;
  // A CreateMany is one group: one transaction when it fits.
  batching::AdaptiveBatcher<Pending> batcher_;
};

}  // namespace shortener::store

#endif  // SHORTENER_LIB_STORE_GROUP_COMMITTER_H_
