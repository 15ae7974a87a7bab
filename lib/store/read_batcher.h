// ReadBatcher: batched LinkStore::GetById. Callers on many threads hand over
// ids; reader threads take everything queued (up to max_batch ids) and look
// it up with one LinkStore::GetByIds call (PgLinkStore: one
// `WHERE id = ANY($1::bigint[])` statement), then complete every caller with
// its own result. The read side of what GroupCommitter does for writes.
//
// Batching is adaptive, with no timer: an idle reader takes a request at
// once (no added latency when the service is quiet); while every reader is
// busy, new requests queue and the next free reader takes them all in one
// query. The busier the service, the bigger the batches: one query for tens
// of lookups under load instead of tens of queries.
//
// Errors: a whole-call failure of GetByIds (UNAVAILABLE when the database is
// down, DEADLINE_EXCEEDED, ...) fails every lookup of that batch with that
// status; an exception escaping GetByIds fails it INTERNAL "get links:
// unexpected exception: <what()>"; otherwise each caller gets its link or
// NOT_FOUND as GetById would answer.
//
// Thread-safe. Callbacks run on a reader thread: keep them short and never
// block in them (a blocked callback stalls a reader). std::mutex, which
// ThreadSanitizer sees (the system abseil is not instrumented).
#ifndef SHORTENER_LIB_STORE_READ_BATCHER_H_
#define SHORTENER_LIB_STORE_READ_BATCHER_H_

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

struct ReadBatchOptions {
  // Ids per GetByIds call at most. Default 256.
  int max_batch = 256;
  // GetByIds calls in flight at most (reader threads). Default 2.
  int reader_threads = 2;
};

class ReadBatcher {
 public:
  using Done = std::function<void(absl::StatusOr<Link>)>;

  // `store` must outlive the batcher. Options below 1 count as 1.
  ReadBatcher(LinkStore* store, ReadBatchOptions options);
  // Answers everything queued, then stops its threads. No call may start
  // once destruction has begun.
  ~ReadBatcher();
  ReadBatcher(const ReadBatcher&) = delete;
  ReadBatcher& operator=(const ReadBatcher&) = delete;

  // Queues a look-up of `id` and returns without waiting. `done` gets the
  // link, NOT_FOUND "no link with id N", or the batch's error (see the file
  // comment), on a reader thread.
  void GetById(int64_t id, Done done);

  // Blocking convenience for tests and command-line callers.
  absl::StatusOr<Link> GetByIdAndWait(int64_t id);

  struct Stats {
    int64_t batches = 0;  // GetByIds calls made
    int64_t lookups = 0;  // GetById calls answered through them
  };
  Stats GetStats() const;

 private:
  struct Pending {
    int64_t id;
    Done done;
  };

  void ReadLoop();
  void Answer(std::vector<Pending> batch);

  LinkStore* const store_;
  const size_t max_batch_;

  mutable std::mutex mu_;
  std::condition_variable work_;  // something queued, or stopping_
  // Guarded by mu_:
  std::deque<Pending> queue_;
  bool stopping_ = false;
  Stats stats_;
  std::vector<std::thread> threads_;
};

}  // namespace shortener::store

#endif  // SHORTENER_LIB_STORE_READ_BATCHER_H_
