#include "lib/common/histogram_counts.h"

namespace shortener {

std::vector<double> BatchSizeBounds() {
  std::vector<double> bounds;
  for (double b = 1; b <= 8192; b *= 2) bounds.push_back(b);
  return bounds;
}

std::vector<double> WaitSecondsBounds() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
          0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
}

}  // namespace shortener
