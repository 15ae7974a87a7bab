#include "edge/descriptor_budget.h"

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "tests/support/status_matchers.h"

namespace shortener::edge {
namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

TEST_CASE(
    "the reserve counts stdio, each loop, the service, the spool, slack and the admin "
    "listener",
    "[edge][descriptors]") {
  DescriptorNeeds needs;
  needs.event_loops = 1;
  CHECK(ReservedDescriptors(needs) == 3 + 6 + 32 + 8 + 32);
  needs.event_loops = 4;
  CHECK(ReservedDescriptors(needs) == 3 + 4 * 6 + 32 + 8 + 32);
  needs.admin_connections = 64;
  CHECK(ReservedDescriptors(needs) == 3 + 4 * 6 + 32 + 8 + 32 + 6 + 64);
  needs.event_loops = 0;  // not resolved yet: counts as one
  needs.admin_connections = 0;
  CHECK(ReservedDescriptors(needs) == 3 + 6 + 32 + 8 + 32);
}

TEST_CASE("without --max_connections the limit is what the open-file limit leaves",
          "[edge][descriptors]") {
  DescriptorNeeds needs;
  needs.event_loops = 2;
  needs.admin_connections = 64;
  const uint64_t reserved = ReservedDescriptors(needs);
  REQUIRE(reserved == 157);
  for (uint64_t limit : {uint64_t{158}, uint64_t{256}, uint64_t{1024}, uint64_t{1048576}}) {
    INFO(limit);
    auto budget = PlanConnections(limit, needs, 0);
    REQUIRE_THAT(budget, IsOk());
    CHECK(budget->derived);
    CHECK(budget->reserved == reserved);
    CHECK(budget->open_file_limit == limit);
    CHECK(budget->max_connections == limit - reserved);
  }
}

TEST_CASE("a limit that leaves no room for one connection stops the start", "[edge][descriptors]") {
  DescriptorNeeds needs;
  for (uint64_t limit : {uint64_t{0}, uint64_t{20}, ReservedDescriptors(needs)}) {
    INFO(limit);
    CHECK_THAT(PlanConnections(limit, needs, 0),
               HasCodeAndMessage(absl::StatusCode::kFailedPrecondition,
                                 absl::StrCat("open-file limit ", limit)));
  }
}

TEST_CASE("an explicit --max_connections must fit with the reserve", "[edge][descriptors]") {
  DescriptorNeeds needs;
  needs.event_loops = 2;
  const uint64_t reserved = ReservedDescriptors(needs);
  auto fits = PlanConnections(1024, needs, 1024 - reserved);
  REQUIRE_THAT(fits, IsOk());
  CHECK_FALSE(fits->derived);
  CHECK(fits->max_connections == 1024 - reserved);
  CHECK_THAT(PlanConnections(1024, needs, 100), IsOk());
  // One more does not fit; the message names the numbers.
  CHECK_THAT(PlanConnections(1024, needs, 1024 - reserved + 1),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               absl::StrCat("--max_connections=", 1024 - reserved + 1,
                                            " does not fit the open-file limit 1024: at most ",
                                            1024 - reserved, " with ", reserved, " reserved")));
  CHECK_THAT(PlanConnections(256, needs, 100000), HasCode(absl::StatusCode::kInvalidArgument));
  CHECK_THAT(PlanConnections(10, needs, 1), HasCode(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace shortener::edge
