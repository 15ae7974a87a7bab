// Steady state of the synchronous path allocates nothing per request. The
// counter (tests/edge/alloc_counter.h) replaces operator new for this whole
// binary, hence a binary of its own; it counts per thread, so the handler
// reads it on the loop thread at two request numbers and the difference
// covers everything the loop did for the requests in between.
#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "edge/http/http_server.h"
#include "tests/edge/alloc_counter.h"
#include "tests/support/http_client.h"
#include "tests/support/status_matchers.h"

namespace shortener::edge::http {
namespace {

using ::shortener::testing::HttpConnection;
using ::shortener::testing::IsOk;

// Answers a fixed 302 (with Date) and samples the loop thread's allocation
// count when request number `from` and number `to` arrive (1-based).
class SamplingHandler : public Handler {
 public:
  SamplingHandler(size_t from, size_t to) : from_(from), to_(to) {}

  void Handle(Exchange& exchange) override {
    const size_t n = ++handled_;
    if (n == from_) at_from_ = edge::testing::ThreadAllocations();
    if (n == to_) at_to_ = edge::testing::ThreadAllocations();
    std::string& out = exchange.out();
    out.append("HTTP/1.1 302 Found\r\nDate: ");
    out.append(exchange.http_date().data(), exchange.http_date().size());
    out.append("\r\nLocation: https://example.com/\r\nContent-Length: 0\r\n\r\n");
  }

  // Allocations on the loop thread between the two samples.
  size_t allocations() const { return at_to_.load() - at_from_.load(); }
  // Allocations on the loop thread before the first sample: not zero, or
  // the counter is not counting that thread.
  size_t allocations_before() const { return at_from_.load(); }

 private:
  const size_t from_, to_;
  std::atomic<size_t> handled_{0};
  std::atomic<size_t> at_from_{0}, at_to_{0};
};

constexpr size_t kBurst = 1200;

TEST_CASE("pipelined keep-alive requests allocate nothing in steady state",
          "[edge/http][server][alloc][concurrent]") {
  // Warm-up burst first (buffers grow to their size), then the measured one.
  SamplingHandler handler(kBurst + 100, kBurst + 1100);
  auto server = HttpServer::Start(HttpServerOptions(), &handler);
  REQUIRE_THAT(server, IsOk());
  auto connection = HttpConnection::Connect((*server)->port());
  REQUIRE_THAT(connection, IsOk());
  std::string burst;
  for (size_t i = 0; i < kBurst; ++i)
    burst += absl::StrCat("GET /abc?i=", i, " HTTP/1.1\r\nHost: a\r\n\r\n");
  for (int round = 0; round < 2; ++round) {
    std::thread sender([&] { (void)connection->Send(burst); });
    size_t ok = 0;
    for (size_t i = 0; i < kBurst; ++i) ok += connection->Read().ok() ? 1 : 0;
    sender.join();
    REQUIRE(ok == kBurst);
  }
  INFO("allocations over 1000 requests: " << handler.allocations());
  CHECK(handler.allocations_before() > 0);
  CHECK(handler.allocations() < 10);
}

TEST_CASE("one request at a time on a keep-alive connection allocates nothing in steady state",
          "[edge/http][server][alloc][concurrent]") {
  SamplingHandler handler(200, 1200);
  auto server = HttpServer::Start(HttpServerOptions(), &handler);
  REQUIRE_THAT(server, IsOk());
  auto connection = HttpConnection::Connect((*server)->port());
  REQUIRE_THAT(connection, IsOk());
  for (int i = 0; i < 1300; ++i) {
    REQUIRE_THAT(connection->Send("GET /abc HTTP/1.1\r\nHost: a\r\n\r\n"), IsOk());
    REQUIRE_THAT(connection->Read(), IsOk());
  }
  INFO("allocations over 1000 requests: " << handler.allocations());
  CHECK(handler.allocations_before() > 0);
  CHECK(handler.allocations() < 10);
}

}  // namespace
}  // namespace shortener::edge::http
