#include "lib/common/thread_pool.h"

#include <atomic>
#include <memory>

#include <catch2/catch.hpp>

#include "lib/common/status_macros.h"
#include "tests/support/status_matchers.h"

namespace shortener {
namespace {

TEST_CASE("ThreadPool runs every scheduled closure, including those queued at destruction",
          "[common][concurrent]") {
  std::atomic<int> ran{0};
  {
    ThreadPool pool(4);
    for (int i = 0; i < 10000; ++i) pool.Schedule([&ran] { ran.fetch_add(1); });
  }
  CHECK(ran.load() == 10000);
}

absl::StatusOr<int> Half(int x) {
  if (x % 2 != 0) return absl::InvalidArgumentError("odd");
  return x / 2;
}

absl::StatusOr<int> Quarter(int x) {
  SHORTENER_ASSIGN_OR_RETURN(int h, Half(x));
  SHORTENER_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

absl::Status CheckEven(int x) {
  SHORTENER_RETURN_IF_ERROR(Half(x).status());
  return absl::OkStatus();
}

TEST_CASE("Status macros return the first error and pass values through", "[common]") {
  using shortener::testing::HasCodeAndMessage;
  using shortener::testing::IsOk;
  CHECK(*Quarter(8) == 2);
  CHECK_THAT(Quarter(6), HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "odd"));
  CHECK_THAT(Quarter(3), HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "odd"));
  CHECK_THAT(CheckEven(4), IsOk());
  CHECK_THAT(CheckEven(5), HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "odd"));
}

}  // namespace
}  // namespace shortener
