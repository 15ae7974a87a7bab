// GroupCommitter: group commit for LinkStore::CreateLinks. Callers on many
// threads hand over links; committer threads take everything queued (up to
// max_batch links) and create it with one CreateLinks call, i.e. one
// transaction, then complete every caller with its own result. A caller is
// completed only after its batch returned, so an OK result is durable.
//
// Batching is natural, with no timer: a committer that finds work takes it at
// once; while it commits, new arrivals queue up for the next committer. With
// 64 callers in flight one transaction carries tens of links instead of one.
//
// Thread-safe. Callbacks run on a committer thread: keep them short and never
// block in them on another GroupCommitter call (that would stall a committer).
// Synchronised with std::mutex, which ThreadSanitizer sees (the system
// abseil is not instrumented, so absl::Mutex would look unsynchronised).
#ifndef SHORTENER_LIB_STORE_GROUP_COMMITTER_H_
#define SHORTENER_LIB_STORE_GROUP_COMMITTER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/store/link_store.h"

namespace shortener::store {

struct GroupCommitOptions {
  // Links per transaction at most. Default 1000.
  int max_batch = 1000;
  // Batches in flight at once (one collects while another commits). Default 2.
  int committer_threads = 2;
};

class GroupCommitter {
 public:
  using Done = std::function<void(absl::StatusOr<CreateOutcome>)>;
  using DoneMany = std::function<void(std::vector<absl::StatusOr<CreateOutcome>>)>;

  // `store` must outlive the committer. Options below 1 count as 1.
  GroupCommitter(LinkStore* store, GroupCommitOptions options);
  // Completes everything queued, then stops its threads. No call may start
  // once destruction has begun.
  ~GroupCommitter();
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Queues `link` and returns without waiting for the database. `done` gets
  // the item's CreateLinks result (see LinkStore::CreateLinks for its codes),
  // on a committer thread. An exception escaping CreateLinks fails its whole
  // batch INTERNAL "create links: unexpected exception: <what()>".
  void Create(NewLink link, Done done);

  // Queues many links together (BatchShorten): they go into one transaction
  // when they fit in max_batch, else into consecutive ones. `done` gets the
  // results in input order, once all are known (at once, on this thread,
  // for an empty `links`).
  void CreateMany(std::vector<NewLink> links, DoneMany done);

  // Blocking convenience for tests and command-line callers.
  absl::StatusOr<CreateOutcome> CreateAndWait(NewLink link);

  struct Stats {
    int64_t batches = 0;  // CreateLinks calls made
    int64_t links = 0;    // links passed to them
  };
  Stats GetStats() const;

 private:
  struct Pending {
    NewLink link;
    Done done;
    // Links of its Create/CreateMany call from this one on (1 for Create):
    // lets a batch take a CreateMany whole or not at all when it fits.
    size_t group_left = 1;
  };

  void Enqueue(std::vector<Pending> items);
  void CommitLoop();
  std::vector<Pending> TakeBatch();  // with mu_ held
  void Commit(std::vector<Pending> batch);

  LinkStore* const store_;
  const size_t max_batch_;

  mutable std::mutex mu_;
  std::condition_variable work_;  // queue_ got items, or stopping_
  // Guarded by mu_:
  std::deque<Pending> queue_;
  bool stopping_ = false;
  Stats stats_;
  std::vector<std::thread> threads_;
};

}  // namespace shortener::store

#endif  // SHORTENER_LIB_STORE_GROUP_COMMITTER_H_
