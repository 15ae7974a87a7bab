// HistogramCounts: observations counted by upper bound, with their sum, for
// the Stats structs of lib/ parts (batch sizes, queue waits) that a metrics
// collector renders as Prometheus histograms (services/shorten's
// service_metrics.h). lib/ stays free of any metrics library: the owner
// counts into this plain value under its own lock and copies it out in its
// GetStats().
//
// Not thread-safe: the owner serialises Observe and copies.
#ifndef SHORTENER_LIB_COMMON_HISTOGRAM_COUNTS_H_
#define SHORTENER_LIB_COMMON_HISTOGRAM_COUNTS_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace shortener {

class HistogramCounts {
 public:
  // `bounds`: ascending upper bounds; one more bucket above the last
  // (+Inf) is implied. Default: no bounds, only the +Inf bucket.
  explicit HistogramCounts(std::vector<double> bounds = {})
      : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

  // Counts `value` in the first bucket whose bound is >= it (Prometheus'
  // "le"), or in +Inf.
  void Observe(double value) {
    size_t bucket = 0;
    while (bucket < bounds_.size() && value > bounds_[bucket]) ++bucket;
    ++counts_[bucket];
    sum_ += value;
    ++count_;
  }

  const std::vector<double>& bounds() const { return bounds_; }
  // Per bucket, not cumulative: counts()[i] for bounds()[i], the last one
  // for +Inf.
  const std::vector<uint64_t>& counts() const { return counts_; }
  double sum() const { return sum_; }
  uint64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;
  double sum_ = 0;
  uint64_t count_ = 0;
};

// Bounds for batch sizes: powers of two from 1 to 8192.
std::vector<double> BatchSizeBounds();
// Bounds for waits in seconds, 100 us to 10 s.
std::vector<double> WaitSecondsBounds();

}  // namespace shortener

#endif  // SHORTENER_LIB_COMMON_HISTOGRAM_COUNTS_H_
