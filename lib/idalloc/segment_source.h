// SegmentSource: the I/O seam of ID allocation. A source hands out disjoint
// ranges ("segments") of a named integer sequence; the allocator then issues
// the IDs of a segment from memory. Uniqueness across processes rests entirely
// on the source: two leases of one sequence never overlap, whoever asks.
//
// Implementations: PgSegmentSource (lib/idalloc/pg, one atomic UPDATE per
// lease) and InMemorySegmentSource below (tests, benchmarks, single-process
// tools). Both pass tests/lib/idalloc/segment_source_contract.h.
//
// Thread safety: every implementation is safe to call from several threads.
#ifndef SHORTENER_LIB_IDALLOC_SEGMENT_SOURCE_H_
#define SHORTENER_LIB_IDALLOC_SEGMENT_SOURCE_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace shortener::idalloc {

// A half-open range of IDs [begin, end).
struct Segment {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};

// The largest step a source accepts: id_segments.step is a Postgres integer.
inline constexpr int64_t kMaxLeaseStep = INT32_MAX;

class SegmentSource {
 public:
  virtual ~SegmentSource() = default;

  // Leases the next `step` IDs of sequence `name` atomically and returns them
  // as [begin, begin + step). Errors:
  //   UNAVAILABLE       the backing store cannot be reached (or does not
  //                     answer) before `deadline`; retrying later may work;
  //   NOT_FOUND         `name` is not a known sequence;
  //   INVALID_ARGUMENT  `step` is not in [1, kMaxLeaseStep];
  //   INTERNAL          anything else the store reports.
  virtual absl::StatusOr<Segment> Lease(const std::string& name, int64_t step,
                                        absl::Time deadline) = 0;
};

// An in-memory sequence table with fault injection for tests: it can be made
// unavailable, slow, and it records every lease. Thread-safe.
class InMemorySegmentSource : public SegmentSource {
 public:
  // Starts with the sequence "links" at 1, like the schema's seed row.
  InMemorySegmentSource();

  // Creates (or resets) sequence `name` so that its next lease starts at
  // `next_id`.
  void AddSequence(const std::string& name, int64_t next_id = 1);

  // While unavailable, Lease fails UNAVAILABLE (after the latency, if any).
  void SetAvailable(bool available);
  // Makes each Lease take `latency` (bounded by its deadline; a lease whose
  // deadline comes first fails UNAVAILABLE without taking IDs).
  void SetLatency(absl::Duration latency);

  // Successful leases so far, and the steps every Lease call asked for.
  int64_t lease_count() const;
  std::vector<int64_t> requested_steps() const;

  absl::StatusOr<Segment> Lease(const std::string& name, int64_t step,
                                absl::Time deadline) override;

 private:
  // std::mutex: Debian's libabsl is not built with TSan, which then cannot
  // see absl::Mutex synchronise. Guards every member below.
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, int64_t> next_id_;
  bool available_ = true;
  absl::Duration latency_ = absl::ZeroDuration();
  int64_t lease_count_ = 0;
  std::vector<int64_t> requested_steps_;
};

}  // namespace shortener::idalloc

#endif  // SHORTENER_LIB_IDALLOC_SEGMENT_SOURCE_H_
