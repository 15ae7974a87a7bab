// lib/common/store_time.h: the microsecond precision every store keeps.
#include "lib/common/store_time.h"

#include <catch2/catch.hpp>

namespace shortener {
namespace {

TEST_CASE("StoreTime rounds down to whole microseconds", "[lib/common]") {
  CHECK(StoreTime(absl::FromUnixNanos(1'999)) == absl::FromUnixMicros(1));
  CHECK(StoreTime(absl::FromUnixMicros(5)) == absl::FromUnixMicros(5));
  CHECK(StoreTime(absl::UnixEpoch()) == absl::UnixEpoch());
  // Towards the past before 1970 too: a floor, not a cut towards zero.
  CHECK(StoreTime(absl::FromUnixNanos(-1)) == absl::FromUnixMicros(-1));
  CHECK(StoreTime(absl::FromUnixNanos(-1'001)) == absl::FromUnixMicros(-2));
  const absl::Time t = absl::FromUnixNanos(1732500000123456789);
  CHECK(StoreTime(t) == absl::FromUnixMicros(1732500000123456));
  CHECK(StoreTime(StoreTime(t)) == StoreTime(t));
}

}  // namespace
}  // namespace shortener
