#include "edge/http/loop_context.h"

#include <time.h>

#include <utility>

#include "absl/time/time.h"

namespace shortener::edge::http::internal {

LoopContext::LoopContext(int index, const HttpServerOptions& options, Handler* handler,
                         std::shared_ptr<LoopGate> gate)
    : index(index),
      handler(handler),
      limits{options.max_request_line, options.max_header_bytes, options.max_header_fields,
             options.max_body_bytes, options.keep_body},
      error_writer(options.error_writer),
      idle_timeout_ns(absl::ToInt64Nanoseconds(options.idle_timeout)),
      header_timeout_ns(absl::ToInt64Nanoseconds(options.header_timeout)),
      max_output_bytes(options.max_output_bytes),
      gate(std::move(gate)) {}

void LoopContext::UpdateClock() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  now_ns = static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
  const std::time_t second = std::time(nullptr);
  if (second != date_second) {
    date_second = second;
    FormatHttpDate(second, date);
  }
}

void LoopContext::SetClock(int64_t monotonic_ns, std::time_t unix_second) {
  now_ns = monotonic_ns;
  if (unix_second != date_second) {
    date_second = unix_second;
    FormatHttpDate(unix_second, date);
  }
}

}  // namespace shortener::edge::http::internal
