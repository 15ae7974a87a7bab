// ReadBatcher: batched LinkStore::GetById and GetByAlias. Callers on many
// threads hand over ids and aliases; reader threads take everything queued
// (up to max_batch look-ups) and look it up with one LinkStore::GetByIds
// call for the ids and one GetByAliases call for the aliases (PgLinkStore:
// one `WHERE id = ANY($1::bigint[])` and one `WHERE alias = ANY($1::text[])`
// statement), then complete every caller with its own result. The read side
// of what GroupCommitter does for writes.
//
// Why two statements for a mixed batch rather than one (a UNION of both):
// each key costs an index probe either way, one more round trip on a batch
// of hundreds of keys is noise, and two plain statements keep one contract
// per store method (both implementations pass the same suite).
//
// Batching is adaptive, with no timer: an idle reader takes a request at
// once (no added latency when the service is quiet); while every reader is
// busy, new requests queue and the next free reader takes them all in one
// query. The busier the service, the bigger the batches: one query for tens
// of lookups under load instead of tens of queries.
//
// Bounded: at most max_queued look-ups wait for a reader; one more is
// answered RESOURCE_EXHAUSTED "read batcher is full: ..." at once, on the
// calling thread, and never queued.
//
// Errors: a whole-call failure of GetByIds or GetByAliases (UNAVAILABLE when
// the database is down, DEADLINE_EXCEEDED, ...) fails every look-up of that
// kind in the batch with that status; an exception escaping the store fails
// them INTERNAL "get links: unexpected exception: <what()>"; otherwise each
// caller gets its link or NOT_FOUND as GetById / GetByAlias would answer.
//
// GetMany hands over many keys at once (BatchResolve's codes): they are
// queued as one group, so that they go out in one batch when they fit in it
// (two statements for up to max_batch keys, rather than one queue entry
// each that the readers would have to regroup), and are accepted or refused
// together.
//
// Built on batching::AdaptiveBatcher (lib/batching/adaptive_batcher.h),
// with a blocking executor: the queue, its bound and the reader threads are
// its; the look-ups and the answers are here.
//
// Thread-safe. Callbacks run on a reader thread: keep them short and never
// block in them (a blocked callback stalls a reader).
#ifndef SHORTENER_LIB_STORE_READ_BATCHER_H_
#define SHORTENER_LIB_STORE_READ_BATCHER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "lib/batching/adaptive_batcher.h"
#include "lib/common/histogram_counts.h"
#include "lib/store/link_store.h"

namespace shortener::store {

// One key to look up: a link id, or an alias.
struct LinkKey {
  static LinkKey Id(int64_t id) { return LinkKey{id, std::string(), false}; }
  static LinkKey Alias(std::string alias) { return LinkKey{0, std::move(alias), true}; }

  int64_t id = 0;     // unless by_alias
  std::string alias;  // if by_alias
  bool by_alias = false;
};

struct ReadBatchOptions {
  // Ids per GetByIds call at most. Default 256.
  int max_batch = 256;
  // Batches in flight at most (reader threads). Default 2.
  int reader_threads = 2;
  // Look-ups waiting for a reader at most; beyond, RESOURCE_EXHAUSTED at
  // once. Default 16384 (64 full batches).
  int max_queued = 16384;
};

class ReadBatcher {
 public:
  using Done = std::function<void(absl::StatusOr<Link>)>;
  // One answer per key, in the order of the keys.
  using ManyDone = std::function<void(std::vector<absl::StatusOr<Link>>)>;

  // `store` must outlive the batcher. Options below 1 count as 1.
  ReadBatcher(LinkStore* store, ReadBatchOptions options);
  // Answers everything queued, then stops its threads. No call may start
  // once destruction has begun.
  ~ReadBatcher() = default;
  ReadBatcher(const ReadBatcher&) = delete;
  ReadBatcher& operator=(const ReadBatcher&) = delete;

  // Queues a look-up of `id` and returns without waiting. `done` gets the
  // link, NOT_FOUND "no link with id N", or the batch's error (see the file
  // comment), on a reader thread; or RESOURCE_EXHAUSTED on this thread when
  // max_queued look-ups wait already.
  void GetById(int64_t id, Done done);
  // The same for an alias: the link, NOT_FOUND "no link with alias \"x\"",
  // or an error as above.
  void GetByAlias(std::string alias, Done done);
  // Queues the look-ups of `keys` as one group (see the file comment) and
  // returns without waiting. `done` runs once, when the last is answered,
  // with each key's answer as GetById / GetByAlias gives it; when the group
  // is refused (max_queued look-ups would be waiting with it, or shutdown),
  // every answer is that refusal, on this thread. No keys: done({}) at once.
  void GetMany(std::vector<LinkKey> keys, ManyDone done);

  // Blocking conveniences: for tests, tools, and callers on a thread that
  // may block (never a reader thread, never a gRPC reactor).
  absl::StatusOr<Link> GetByIdAndWait(int64_t id);
  absl::StatusOr<Link> GetByAliasAndWait(std::string alias);

  struct Stats {
    int64_t batches = 0;  // batches taken by readers
    int64_t lookups = 0;  // look-ups answered through them (ids and aliases)
    int64_t queries = 0;  // GetByIds and GetByAliases calls made for them
    int64_t refused = 0;  // look-ups refused: max_queued were waiting
    int64_t queued = 0;   // look-ups waiting for a reader now
    HistogramCounts batch_sizes{BatchSizeBounds()};  // look-ups per batch
    // Per batch: how long its oldest look-up waited for a reader.
    HistogramCounts queue_wait_seconds{WaitSecondsBounds()};
  };
  Stats GetStats() const;

 private:
  struct Pending {
    LinkKey key;
    Done done;
  };

  // Answers a batch with one GetByIds and one GetByAliases call.
  class Reader final : public batching::BlockingBatchExecutor<Pending> {
   public:
    explicit Reader(LinkStore* store) : store_(store) {}
    void Run(std::vector<Pending> batch) override;
    void Refuse(absl::Span<Pending> lookups, const batching::Refusal& why) override;

    std::atomic<int64_t> queries{0};  // GetByIds and GetByAliases calls

   private:
    LinkStore* const store_;
  };

  Reader reader_;
  batching::AdaptiveBatcher<Pending> batcher_;
};

}  // namespace shortener::store

#endif  // SHORTENER_LIB_STORE_READ_BATCHER_H_
