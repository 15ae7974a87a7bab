// A RedirectHandler assembled as the edge assembles it, around the
// in-memory upstream instead of the service, and driven without sockets
// through ProtocolHarness connections (tests/edge/http/protocol_harness.h).
//
// Time: the wall clock is a ManualClock that starts at the harness's Date
// second (2024-01-02 03:04:05 GMT), so deferred responses carry the same
// Date as immediate ones. The connections' monotonic clock follows the real
// one (the batcher's deadlines and the cache's store times are real
// monotonic times) plus whatever Advance() added; Advance moves the wall
// clock by the same amount.
//
// Thread safety: one test thread drives it; the upstream answers on its own
// thread, and deferred responses reach the connections through the
// harness's queue (WaitAnswered delivers them).
#ifndef SHORTENER_TESTS_EDGE_APP_HANDLER_RIG_H_
#define SHORTENER_TESTS_EDGE_APP_HANDLER_RIG_H_

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "edge/app/edge_metrics.h"
#include "edge/app/redirect_handler.h"
#include "edge/cache/link_cache.h"
#include "edge/clicks/click_queue.h"
#include "edge/upstream/in_memory_link_resolver.h"
#include "edge/upstream/resolve_batcher.h"
#include "lib/codec/short_codec.h"
#include "lib/common/clock.h"
#include "tests/edge/http/protocol_harness.h"
#include "tests/lib/codec/codec_test_util.h"

namespace shortener::edge::testing {

using http::testing::ProtocolHarness;

struct RigOptions {
  RedirectHandlerOptions handler;  // its clock is the rig's
  ResolveBatcherOptions batcher;
  LinkCacheOptions cache;
  bool record_clicks = false;
};

// "Tue, 02 Jan 2024 03:04:05 GMT": the Date of every response until a test
// advances the clock.
inline constexpr absl::string_view kDate = "Tue, 02 Jan 2024 03:04:05 GMT";

// A GET (or `method`) request for `target` with `headers` (each ending in
// CRLF).
inline std::string Request(const std::string& target, const std::string& headers = "",
                           const std::string& method = "GET") {
  return absl::StrCat(method, " ", target, " HTTP/1.1\r\nHost: sho.rt\r\n", headers, "\r\n");
}

// The status line of `response` ("HTTP/1.1 302 Found").
inline std::string StatusLine(const std::string& response) {
  return response.substr(0, response.find("\r\n"));
}

class HandlerRig {
 public:
  explicit HandlerRig(RigOptions options = {})
      : wall(absl::FromTimeT(ProtocolHarness::kUnixSecond)),
        upstream(wall),
        codec(codec::testing::MakeCodec()),
        batcher(&upstream, options.batcher),
        cache(options.cache),
        metrics(1) {
    if (options.record_clicks) clicks = std::make_unique<ClickQueue>(ClickQueueOptions{});
    options.handler.clock = &wall;
    handler = std::make_unique<RedirectHandler>(&codec, &cache, &upstream, &batcher, &metrics,
                                                ClickRecording{clicks.get(), nullptr, nullptr},
                                                options.handler);
  }
  // Calls still out are answered (and their callbacks run) before the
  // parts they use go away.
  ~HandlerRig() {
    upstream.Release();
    batcher.Drain();
  }

  // Connection `i` (made on first use) from `peer`.
  ProtocolHarness& Connection(size_t i = 0) {
    while (connections_.size() <= i) {
      http::PeerAddress peer;
      peer.bytes = {203, 0, 113, static_cast<uint8_t>(7 + connections_.size())};
      connections_.push_back(
          std::make_unique<ProtocolHarness>(http::HttpServerOptions(), handler.get(), peer));
    }
    return *connections_[i];
  }

  // Sends `request` on `connection` without waiting for a deferred answer.
  void Start(ProtocolHarness& connection, const std::string& request) {
    Tick(connection);
    connection.Send(request);
  }
  // Waits for the connection's deferred answers (up to 10 s) and returns
  // everything it received.
  std::string Finish(ProtocolHarness& connection) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (connection.protocol().deferred_pending()) {
      if (connection.DeliverDeferred() > 0) {
        connection.Run();
        continue;
      }
      if (std::chrono::steady_clock::now() > until) {
        FAIL("no answer within 10 s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return connection.TakeReceived();
  }
  // One request on connection 0, answered.
  std::string Ask(const std::string& request) {
    Start(Connection(), request);
    return Finish(Connection());
  }
  std::string Get(const std::string& target, const std::string& headers = "") {
    return Ask(Request(target, headers));
  }

  // Moves the wall clock and the connections' monotonic clock forward.
  void Advance(absl::Duration by) {
    offset_ += by;
    wall.Advance(by);
  }

  // A generated code that passes the prefilter.
  std::string Code(uint64_t id) const { return *codec.Encode(id); }

  // The value of one /metrics sample ("name{labels}"), or -1.
  double Metric(const std::string& sample) const {
    const std::string text = handler->MetricsText();
    const std::string key = "\n" + sample + " ";
    const size_t at = text.find(key);
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + key.size()));
  }

  ManualClock wall;
  InMemoryLinkResolver upstream;
  codec::ShortCodec codec;
  ResolveBatcher batcher;
  LinkCache cache;
  EdgeMetrics metrics;
  std::unique_ptr<ClickQueue> clicks;
  std::unique_ptr<RedirectHandler> handler;

 private:
  // Sets the connection's clock to now: real monotonic time plus the
  // advances, wall seconds from the ManualClock.
  void Tick(ProtocolHarness& connection) {
    connection.context().SetClock(MonotonicNowNs() + absl::ToInt64Nanoseconds(offset_),
                                  absl::ToTimeT(wall.Now()));
  }

  absl::Duration offset_;
  std::vector<std::unique_ptr<ProtocolHarness>> connections_;
};

}  // namespace shortener::edge::testing

#endif  // SHORTENER_TESTS_EDGE_APP_HANDLER_RIG_H_
