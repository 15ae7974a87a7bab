// SegmentIdAllocator: unique int64 IDs for new links, issued from segments
// leased from a SegmentSource (design.md, "ID allocation").
//
// - Hot path: one atomic fetch_add on a packed (segment generation, offset)
//   word plus a few loads; no lock, no I/O.
// - Double buffer: once `prefetch_threshold` of the current segment is used, a
//   background thread leases the next one, so at steady state no caller ever
//   waits on the source. When segments at max_step last about as long as a
//   lease takes (or a caller had to wait anyway), one more segment is kept
//   ahead, up to `max_prefetched_segments`; the extra ones are dropped again
//   once segments outlive the recent lease round trips by far.
// - Dynamic step: a segment that lasted less than `target_segment_lifetime`
//   doubles the step of the next lease (up to `max_step`); one that lasted
//   more than twice the target halves it (down to `min_step`).
// - Never a duplicate, never a made-up ID: when no segment is available a
//   caller waits until its deadline and then fails UNAVAILABLE. IDs of a
//   segment that is never used up (crash, shutdown) are lost: gaps are fine.
//
// Thread safety: Next and GetStats may be called from any number of threads.
// The constructor starts the background leaser and does not block; the
// destructor stops it (waiting for a lease in flight, at most
// `lease_timeout`). Do not destroy the allocator while calls are in flight.
#ifndef SHORTENER_LIB_IDALLOC_SEGMENT_ID_ALLOCATOR_H_
#define SHORTENER_LIB_IDALLOC_SEGMENT_ID_ALLOCATOR_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "lib/common/clock.h"
#include "lib/idalloc/segment_source.h"

namespace shortener::idalloc {

struct IdAllocatorOptions {
  // Sequence (id_segments.name) to lease from. Default "links".
  std::string sequence = "links";
  // Step of the first lease. Default 1000. Clamped to [min_step, max_step].
  int64_t initial_step = 1000;
  // Bounds of the dynamic step. Defaults 100 and 2^20; max_step is clamped to
  // kMaxLeaseStep and min_step to [1, max_step].
  int64_t min_step = 100;
  int64_t max_step = 1 << 20;
  // Segments used up faster than this double the step; slower than twice this
  // halve it. Default 15 minutes.
  absl::Duration target_segment_lifetime = absl::Minutes(15);
  // Fraction of the current segment after which the next one is leased.
  // Default 0.1 (clamped to [0, 1]).
  double prefetch_threshold = 0.1;
  // Most segments kept leased ahead of the current one (see above); 1 is a
  // plain double buffer. Default 4.
  int64_t max_prefetched_segments = 4;
  // Pause between background lease attempts after a failure. Default 50 ms.
  absl::Duration lease_retry_backoff = absl::Milliseconds(50);
  // Deadline given to each background lease. Default 5 s.
  absl::Duration lease_timeout = absl::Seconds(5);
  // Clock for segment lifetimes (step decisions) only; waits for a segment
  // always use real time. Must outlive the allocator. Default (null):
  // SystemClock(); tests give a ManualClock.
  const Clock* clock = nullptr;
};

class SegmentIdAllocator {
 public:
  // `source` must outlive the allocator. Starts leasing the first segment in
  // the background right away; never blocks.
  SegmentIdAllocator(SegmentSource* source, IdAllocatorOptions options);
  ~SegmentIdAllocator();

  SegmentIdAllocator(const SegmentIdAllocator&) = delete;
  SegmentIdAllocator& operator=(const SegmentIdAllocator&) = delete;

  // Returns an ID never returned before by any allocator sharing the source's
  // sequence. When the current segment is used up and the next one is not
  // there yet, waits for the background leaser until `deadline`, then fails
  // UNAVAILABLE ("id allocation: no id segment available before the
  // deadline: <last lease error>"). An ID available at once is returned even
  // when `deadline` has passed.
  absl::StatusOr<int64_t> Next(absl::Time deadline);

  // Counters for benchmarks and metrics (a consistent-enough snapshot).
  struct Stats {
    int64_t leases = 0;          // successful leases
    int64_t ids_issued = 0;      // IDs handed out (approximate by a few under races)
    int64_t current_step = 0;    // step of the latest lease
    int64_t waits = 0;           // Next calls that had to wait for a segment
    int64_t prefetch_depth = 0;  // segments kept ahead (1: double buffer)
    // IDs left to hand out without a lease: the rest of the current segment
    // and the prefetched ones (approximate by a few under races).
    int64_t remaining = 0;
  };
  Stats GetStats() const;

 private:
  // The packed hot word: generation of the current segment in the high bits,
  // the next offset within it in the low kOffsetBits bits. fetch_add(1) both
  // claims an offset and names the segment it belongs to.
  static constexpr int kOffsetBits = 40;
  static constexpr uint64_t kOffsetMask = (uint64_t{1} << kOffsetBits) - 1;
  static constexpr uint64_t kGenerationMask = (uint64_t{1} << (64 - kOffsetBits)) - 1;
  // Generation g lives in slots_[g % kSlots]; a slot is rewritten only
  // kSlots generations later, which a reader detects (see Next).
  static constexpr uint64_t kSlots = 4;
  static constexpr uint64_t kInvalidGeneration = ~uint64_t{0};

  struct alignas(64) Slot {
    std::atomic<uint64_t> generation{0};
    std::atomic<int64_t> begin{0};
    std::atomic<int64_t> size{0};
    std::atomic<int64_t> prefetch_at{-1};  // offset whose taker asks for a lease
  };

  // Methods named *Locked must be called with mu_ held.

  // Slow path after a failed claim in generation `observed`: switches to a
  // prefetched segment, or waits for one until `deadline`.
  absl::Status AwaitSegment(uint64_t observed, absl::Time deadline);
  // Keeps failed claims on a used-up segment from overflowing the offset.
  void ClampOffsetLocked();
  // Tells the background leaser that the next segment is wanted now.
  void RequestLease();
  // Makes `segment` current (generation + 1) and retires the old one.
  void InstallLocked(const Segment& segment);
  // Step for the next lease, adjusted by the lifetime of the last retired
  // segment (each lifetime is used once).
  int64_t NextStepLocked();
  // Feeds a successful lease's round trip into the per-minute maxima.
  void RecordLeaseLatencyLocked(absl::Duration took, absl::Time now);
  void LeaserLoop();

  SegmentSource* const source_;
  const IdAllocatorOptions options_;

  alignas(64) std::atomic<uint64_t> state_{0};  // generation 0: empty slot
  Slot slots_[kSlots];

  // The slow path. std::mutex rather than absl::Mutex: Debian's libabsl is
  // not built with TSan, so TSan cannot see absl::Mutex synchronise. Every
  // member below is guarded by mu_.
  mutable std::mutex mu_;
  std::condition_variable segment_ready_;  // callers in AwaitSegment wait here
  std::condition_variable lease_needed_;   // the leaser waits here
  // Leased segments waiting to become current, oldest first.
  std::deque<Segment> ready_;
  // Whether the current segment passed its prefetch point (true at start: the
  // first segment is wanted now). The leaser keeps depth_ segments ready
  // then, depth_ - 1 before.
  bool lease_wanted_ = true;
  int64_t depth_ = 1;
  uint64_t depth_raised_at_ = kInvalidGeneration;
  // Longest lease round trip of the current and the previous minute (real
  // time): extra prefetched segments are kept while segments last less than
  // a few of these.
  absl::Duration lease_max_this_minute_;
  absl::Duration lease_max_last_minute_;
  absl::Time minute_start_ = absl::InfinitePast();
  bool stop_ = false;
  absl::Status last_error_;
  int64_t step_ = 0;
  absl::Time current_started_;
  std::optional<absl::Duration> last_lifetime_;
  int64_t leases_ = 0;
  int64_t retired_ids_ = 0;
  int64_t waits_ = 0;

  std::thread leaser_;  // last: starts after everything above is initialised
};

}  // namespace shortener::idalloc

#endif  // SHORTENER_LIB_IDALLOC_SEGMENT_ID_ALLOCATOR_H_
