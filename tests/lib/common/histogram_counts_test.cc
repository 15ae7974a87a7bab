#include "lib/common/histogram_counts.h"

#include <catch2/catch.hpp>

namespace shortener {
namespace {

TEST_CASE("HistogramCounts counts a value in the first bucket whose bound is >= it",
          "[lib/common][histogram]") {
  HistogramCounts h({1, 10});
  h.Observe(0.5);
  h.Observe(1);  // on the bound: that bucket (le)
  h.Observe(1.5);
  h.Observe(10);
  h.Observe(11);  // above the last bound: +Inf
  REQUIRE(h.counts() == std::vector<uint64_t>{2, 2, 1});
  REQUIRE(h.count() == 5);
  REQUIRE(h.sum() == Approx(24));
}

TEST_CASE("HistogramCounts without bounds has only the +Inf bucket", "[lib/common][histogram]") {
  HistogramCounts h;
  h.Observe(3);
  REQUIRE(h.counts() == std::vector<uint64_t>{1});
  REQUIRE(h.count() == 1);
}

TEST_CASE("The shared bounds ascend", "[lib/common][histogram]") {
  for (const std::vector<double>& bounds : {BatchSizeBounds(), WaitSecondsBounds()}) {
    REQUIRE(!bounds.empty());
    for (size_t i = 1; i < bounds.size(); ++i) REQUIRE(bounds[i - 1] < bounds[i]);
  }
  REQUIRE(BatchSizeBounds().front() == 1);
  REQUIRE(BatchSizeBounds().back() == 8192);
}

}  // namespace
}  // namespace shortener
