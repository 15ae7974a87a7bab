#include "lib/idalloc/segment_id_allocator.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "lib/common/log.h"

namespace shortener::idalloc {
namespace {

// At max_step, a segment that lasted less than kGrowDepthBelow recent lease
// round trips makes the allocator keep one more segment ahead; one that
// lasted more than kShrinkDepthAbove lets it keep one fewer.
constexpr int kGrowDepthBelow = 2;
constexpr int kShrinkDepthAbove = 8;

// Waits on `cv` until `done()` or `deadline`; returns done(). Works in
// durations (steady clock) so that neither absl::InfinitePast nor
// absl::InfiniteFuture overflows a chrono conversion.
template <typename Done>
bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, absl::Time deadline,
               Done done) {
  while (!done()) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    if (left > absl::Hours(24)) {
      cv.wait_for(lock, std::chrono::hours(24));
    } else {
      cv.wait_for(lock, absl::ToChronoNanoseconds(left));
    }
  }
  return true;
}

IdAllocatorOptions Normalized(IdAllocatorOptions o) {
  o.max_step = std::clamp<int64_t>(o.max_step, 1, kMaxLeaseStep);
  o.min_step = std::clamp<int64_t>(o.min_step, 1, o.max_step);
  o.initial_step = std::clamp(o.initial_step, o.min_step, o.max_step);
  o.prefetch_threshold = std::clamp(o.prefetch_threshold, 0.0, 1.0);
  o.max_prefetched_segments = std::max<int64_t>(o.max_prefetched_segments, 1);
  if (o.clock == nullptr) o.clock = &SystemClock();
  return o;
}

}  // namespace

SegmentIdAllocator::SegmentIdAllocator(SegmentSource* source, IdAllocatorOptions options)
    : source_(source), options_(Normalized(std::move(options))) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    step_ = options_.initial_step;
    current_started_ = options_.clock->Now();
  }
  leaser_ = std::thread([this] { LeaserLoop(); });
}

SegmentIdAllocator::~SegmentIdAllocator() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  lease_needed_.notify_all();
  segment_ready_.notify_all();
  leaser_.join();
}

absl::StatusOr<int64_t> SegmentIdAllocator::Next(absl::Time deadline) {
  while (true) {
    // Claim an offset. Acquire pairs with the release store in InstallLocked
    // (later fetch_adds extend its release sequence), so the slot fields of
    // generation `gen` are visible.
    const uint64_t claimed = state_.fetch_add(1, std::memory_order_acquire);
    const uint64_t gen = claimed >> kOffsetBits;
    const int64_t offset = static_cast<int64_t>(claimed & kOffsetMask);
    // Seqlock-style read: if the slot was rewritten for a later generation
    // while we read it, an acquire load saw a release store of the rewrite,
    // so the generation read after them differs (no fences: TSan models
    // acquire/release, and on x86 these are plain loads).
    const Slot& slot = slots_[gen % kSlots];
    const int64_t begin = slot.begin.load(std::memory_order_acquire);
    const int64_t size = slot.size.load(std::memory_order_acquire);
    const int64_t prefetch_at = slot.prefetch_at.load(std::memory_order_acquire);
    if (ABSL_PREDICT_TRUE(offset < size &&
                          slot.generation.load(std::memory_order_relaxed) == gen)) {
      if (ABSL_PREDICT_FALSE(offset == prefetch_at)) RequestLease();
      return begin + offset;
    }
    // Used up (or a stale generation, whose offset is simply dropped).
    absl::Status status = AwaitSegment(gen, deadline);
    if (!status.ok()) return status;
  }
}

void SegmentIdAllocator::RequestLease() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    lease_wanted_ = true;
  }
  lease_needed_.notify_one();
}

absl::Status SegmentIdAllocator::AwaitSegment(uint64_t observed, absl::Time deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  auto current_generation = [this] {
    return state_.load(std::memory_order_acquire) >> kOffsetBits;
  };
  bool counted = false;
  while (true) {
    // Another caller already switched: claim again.
    if (current_generation() != observed) return absl::OkStatus();
    if (!ready_.empty()) {
      InstallLocked(ready_.front());
      ready_.pop_front();
      segment_ready_.notify_all();  // other waiters: the generation moved on
      lease_needed_.notify_one();   // the depth may have grown
      return absl::OkStatus();
    }
    lease_wanted_ = true;
    lease_needed_.notify_one();
    ClampOffsetLocked();
    if (!counted) {
      ++waits_;
      counted = true;
      // Waiting although segments cannot get bigger: keep one more ahead
      // (once per switch; generation 0 is the start, not a symptom).
      if (step_ >= options_.max_step && observed != 0 && observed != depth_raised_at_) {
        depth_ = std::min(depth_ + 1, options_.max_prefetched_segments);
        depth_raised_at_ = observed;
      }
    }
    auto ready = [&] { return stop_ || !ready_.empty() || current_generation() != observed; };
    if (!WaitUntil(segment_ready_, lock, deadline, ready)) {
      return absl::UnavailableError(
          absl::StrCat("id allocation: no id segment available before the deadline: ",
                       last_error_.ok() ? "lease in progress" : last_error_.ToString()));
    }
    if (stop_) return absl::UnavailableError("id allocation: allocator is shutting down");
  }
}

void SegmentIdAllocator::ClampOffsetLocked() {
  // Failed claims keep counting past the end of a used-up segment (callers
  // retrying through an outage); pull the offset back long before it could
  // carry into the generation bits. A lost race just leaves it for next time.
  uint64_t state = state_.load(std::memory_order_relaxed);
  if ((state & kOffsetMask) > kOffsetMask / 2) {
    const uint64_t gen = state >> kOffsetBits;
    const int64_t size = slots_[gen % kSlots].size.load(std::memory_order_relaxed);
    state_.compare_exchange_strong(state, (gen << kOffsetBits) | static_cast<uint64_t>(size),
                                   std::memory_order_relaxed);
  }
}

void SegmentIdAllocator::InstallLocked(const Segment& segment) {
  const absl::Time now = options_.clock->Now();
  const uint64_t old_gen = state_.load(std::memory_order_relaxed) >> kOffsetBits;
  const int64_t old_size = slots_[old_gen % kSlots].size.load(std::memory_order_relaxed);
  if (old_size > 0) {  // generation 0 is the empty start, not a segment
    const absl::Duration lifetime = now - current_started_;
    retired_ids_ += old_size;
    last_lifetime_ = lifetime;
    const absl::Duration lease_max = std::max(lease_max_this_minute_, lease_max_last_minute_);
    if (step_ >= options_.max_step && lifetime < kGrowDepthBelow * lease_max) {
      depth_ = std::min(depth_ + 1, options_.max_prefetched_segments);
    } else if (depth_ > 1 && lifetime > kShrinkDepthAbove * lease_max) {
      --depth_;
    }
  }
  const uint64_t gen = (old_gen + 1) & kGenerationMask;
  Slot& slot = slots_[gen % kSlots];
  const int64_t size = segment.size();
  const int64_t prefetch_at = std::clamp<int64_t>(
      static_cast<int64_t>(static_cast<double>(size) * options_.prefetch_threshold), 0, size - 1);
  // Seqlock write: invalidate, then the fields (each a release, so a reader
  // that sees one also sees the invalidation), then publish the generation.
  slot.generation.store(kInvalidGeneration, std::memory_order_relaxed);
  slot.begin.store(segment.begin, std::memory_order_release);
  slot.size.store(size, std::memory_order_release);
  slot.prefetch_at.store(prefetch_at, std::memory_order_release);
  slot.generation.store(gen, std::memory_order_release);
  state_.store(gen << kOffsetBits, std::memory_order_release);
  current_started_ = now;
  // The next lease is wanted once prefetch_at is taken (RequestLease).
  lease_wanted_ = false;
}

int64_t SegmentIdAllocator::NextStepLocked() {
  if (last_lifetime_.has_value()) {
    const absl::Duration lifetime = *last_lifetime_;
    last_lifetime_.reset();
    if (lifetime < options_.target_segment_lifetime) {
      step_ = std::min(step_ * 2, options_.max_step);
    } else if (lifetime > 2 * options_.target_segment_lifetime) {
      step_ = std::max(step_ / 2, options_.min_step);
    }
  }
  return step_;
}

void SegmentIdAllocator::RecordLeaseLatencyLocked(absl::Duration took, absl::Time now) {
  if (now - minute_start_ >= absl::Minutes(1)) {
    lease_max_last_minute_ =
        now - minute_start_ < absl::Minutes(2) ? lease_max_this_minute_ : absl::ZeroDuration();
    lease_max_this_minute_ = absl::ZeroDuration();
    minute_start_ = now;
  }
  lease_max_this_minute_ = std::max(lease_max_this_minute_, took);
}

void SegmentIdAllocator::LeaserLoop() {
  auto needed = [this] {
    const int64_t wanted = lease_wanted_ ? depth_ : depth_ - 1;
    return stop_ || static_cast<int64_t>(ready_.size()) < wanted;
  };
  bool failing = false;
  while (true) {
    int64_t step;
    {
      std::unique_lock<std::mutex> lock(mu_);
      lease_needed_.wait(lock, needed);
      if (stop_) return;
      step = NextStepLocked();
    }
    const absl::Time start = absl::Now();
    absl::StatusOr<Segment> leased =
        source_->Lease(options_.sequence, step, start + options_.lease_timeout);
    const absl::Duration took = absl::Now() - start;
    if (leased.ok() && leased->size() != step) {
      leased = absl::InternalError(absl::StrCat("id segment lease: asked for ", step, " ids, got [",
                                                leased->begin, ", ", leased->end, ")"));
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (leased.ok()) {
      ready_.push_back(*leased);
      segment_ready_.notify_all();
      ++leases_;
      RecordLeaseLatencyLocked(took, start + took);
      last_error_ = absl::OkStatus();
      if (failing) LogInfo("id allocation: leasing \"%s\" works again", options_.sequence);
      failing = false;
      continue;
    }
    last_error_ = leased.status();
    if (!failing) {
      LogWarning("id allocation: lease of \"%s\" failed, retrying every %s: %s", options_.sequence,
                 absl::FormatDuration(options_.lease_retry_backoff), last_error_.ToString());
    }
    failing = true;
    lease_needed_.wait_for(lock, absl::ToChronoNanoseconds(options_.lease_retry_backoff),
                           [this] { return stop_; });
  }
}

SegmentIdAllocator::Stats SegmentIdAllocator::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t state = state_.load(std::memory_order_acquire);
  const Slot& slot = slots_[(state >> kOffsetBits) % kSlots];
  const int64_t offset = static_cast<int64_t>(state & kOffsetMask);
  Stats stats;
  stats.leases = leases_;
  stats.ids_issued = retired_ids_ + std::min(offset, slot.size.load(std::memory_order_relaxed));
  stats.current_step = step_;
  stats.waits = waits_;
  stats.prefetch_depth = depth_;
  const int64_t size = slot.size.load(std::memory_order_relaxed);
  stats.remaining = size - std::min(offset, size);
  for (const Segment& segment : ready_) stats.remaining += segment.size();
  return stats;
}

}  // namespace shortener::idalloc
