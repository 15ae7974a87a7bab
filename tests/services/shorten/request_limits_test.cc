// Request size and item limits per method, and the receive limit derived
// from them (the arithmetic in services/shorten/request_limits.h).
#include "services/shorten/request_limits.h"

#include <catch2/catch.hpp>

#include "lib/clicks/click_batch_limits.h"
#include "tests/support/status_matchers.h"

namespace shortener::service {
namespace {

using shortener::testing::HasCodeAndMessage;
using shortener::testing::IsOk;

TEST_CASE("limits follow the field limits: a full BatchShorten sets the receive limit",
          "[services/shorten][limits]") {
  const RequestLimits limits(2048);
  CHECK(limits.MaxBytes(Rpc::kShorten) == 2048 + 64 + 128 + 64);
  CHECK(limits.MaxBytes(Rpc::kBatchShorten) == 1000 * (2304 + 8));
  CHECK(limits.MaxBytes(Rpc::kBatchResolve) == 1000 * (64 + 8));
  CHECK(limits.MaxBytes(Rpc::kRecordClicks) == clicks::kMaxClickBatchBytes);
  // The longest filter and page token fit.
  CHECK(limits.MaxBytes(Rpc::kListLinks) == 5120);
  for (Rpc small :
       {Rpc::kResolve, Rpc::kGetLink, Rpc::kGetQrCode, Rpc::kRevoke, Rpc::kGetClickStats,
        Rpc::kWatchInvalidations, Rpc::kListApiKeys, Rpc::kRevokeApiKey}) {
    CHECK(limits.MaxBytes(small) == 512);
  }
  // 2 312 000 bytes rounded up to whole MiB (it was 16 MiB for everything).
  CHECK(limits.ReceiveLimit() == 3 * 1024 * 1024);
  // The receive limit holds every method's largest request.
  for (size_t i = 0; i < kRpcCount; ++i) {
    CHECK(limits.MaxBytes(static_cast<Rpc>(i)) <= limits.ReceiveLimit());
  }
  // Longer URLs allowed: the limits grow with them.
  CHECK(RequestLimits(8192).ReceiveLimit() == 9 * 1024 * 1024);
}

TEST_CASE("a request over its method's limit is refused naming the limit",
          "[services/shorten][limits]") {
  const RequestLimits limits(2048);
  CHECK_THAT(limits.Check(Rpc::kShorten, 2304, 0), IsOk());
  CHECK_THAT(
      limits.Check(Rpc::kShorten, 2305, 0),
      HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                        "request: 2305 bytes, more than the 2304 a Shorten request may take"));
  CHECK_THAT(limits.Check(Rpc::kResolve, 513, 0),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "request: 513 bytes, more than the 512 a Resolve request may take"));
  CHECK_THAT(limits.Check(Rpc::kBatchResolve, 100, 1000), IsOk());
  CHECK_THAT(limits.Check(Rpc::kBatchResolve, 100, 1001),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "codes: 1001, more than the 1000 a BatchResolve request may carry"));
  CHECK_THAT(limits.Check(Rpc::kBatchShorten, 100, 1001),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "requests: 1001, more than the 1000 a BatchShorten request may "
                               "carry"));
  CHECK_THAT(limits.Check(Rpc::kRecordClicks, 100, 10001),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "events: 10001, more than the 10000 a RecordClicks request may "
                               "carry"));
  CHECK_THAT(limits.Check(Rpc::kRecordClicks, clicks::kMaxClickBatchBytes, 10000), IsOk());
  // Bytes are checked first: they bound the work of counting.
  CHECK_THAT(limits.Check(Rpc::kRecordClicks, clicks::kMaxClickBatchBytes + 1, 10001),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "request: 2097153 bytes, more than the 2097152 a RecordClicks "
                               "request may take"));
}

}  // namespace
}  // namespace shortener::service
