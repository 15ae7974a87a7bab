// The invalidation watcher against an in-process WatchInvalidations
// service: what reaches the sink and in which order, reconnection after the
// stream drops (the cache is dropped again on every new stream), retries
// with backoff while the service refuses, and Stop with a stream open.
#include "edge/upstream/invalidation_watcher.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/edge/upstream/fake_invalidation_service.h"

namespace shortener::edge {
namespace {

// Records every sink call as one line, in order.
class RecordingSink final : public InvalidationSink {
 public:
  void DropAll() override { Record("drop_all"); }
  void Invalidate(absl::string_view code) override { Record(absl::StrCat("invalidate ", code)); }
  void StreamState(bool subscribed) override { Record(subscribed ? "up" : "down"); }
  void StreamStarting() override { Record("starting"); }
  void MessageReceived(size_t codes, bool drop_all) override {
    Record(absl::StrCat("message codes=", codes, drop_all ? " drop_all" : ""));
  }

  std::vector<std::string> Events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  // Waits until `event` was recorded `times` times in all.
  bool WaitFor(const std::string& event, int times = 1,
               absl::Duration timeout = absl::Seconds(20)) const {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [&] {
      return std::count(events_.begin(), events_.end(), event) >= times;
    });
  }

 private:
  void Record(std::string event) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(event));
    changed_.notify_all();
  }
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::vector<std::string> events_;
};

InvalidationWatcherOptions QuickRetries() {
  InvalidationWatcherOptions options;
  options.subscriber = "edge-under-test";
  options.initial_backoff = absl::Milliseconds(20);
  options.max_backoff = absl::Milliseconds(200);
  return options;
}

// A watcher (not started) on an in-process stream, recording its sink.
struct Watching {
  Watching() { REQUIRE(server.started()); }
  FakeInvalidationServer server;
  RecordingSink sink;
  InvalidationWatcher watcher{server.channel, &sink, QuickRetries()};
};

TEST_CASE("watcher: drop_all acknowledges the stream, then codes reach the sink in order",
          "[edge/upstream]") {
  Watching w;
  CHECK_FALSE(w.watcher.subscribed());
  w.watcher.Start();
  REQUIRE(w.sink.WaitFor("up"));
  CHECK(w.watcher.subscribed());
  w.server.service.Send({"abc", "x_y-z"});
  w.server.service.Send({}, /*drop_all=*/true);
  REQUIRE(w.sink.WaitFor("drop_all", 2));
  w.watcher.Stop();
  CHECK(w.sink.Events() ==
        std::vector<std::string>{"starting", "message codes=0 drop_all", "drop_all", "up",
                                 "message codes=2", "invalidate abc", "invalidate x_y-z",
                                 "message codes=0 drop_all", "drop_all", "down"});
  const auto attempts = w.server.service.Attempts();
  REQUIRE(attempts.size() == 1);
  CHECK(attempts[0].subscriber == "edge-under-test");
}

TEST_CASE("watcher: a dropped stream is reported down and resubscribed; the new one drops again",
          "[edge/upstream]") {
  Watching w;
  w.watcher.Start();
  REQUIRE(w.sink.WaitFor("up"));
  w.server.service.EndStream();
  REQUIRE(w.sink.WaitFor("down"));
  // Resubscribed: codes revoked while the stream was down were never seen,
  // so the new stream's first message drops everything cached again.
  REQUIRE(w.sink.WaitFor("up", 2));
  CHECK(w.watcher.subscribed());
  w.server.service.Send({"after"});
  REQUIRE(w.sink.WaitFor("invalidate after"));
  w.watcher.Stop();
  CHECK(w.sink.Events() == std::vector<std::string>{"starting", "message codes=0 drop_all",
                                                    "drop_all", "up", "down", "starting",
                                                    "message codes=0 drop_all", "drop_all", "up",
                                                    "message codes=1", "invalidate after", "down"});
  CHECK(w.server.service.Attempts().size() == 2);
}

TEST_CASE("watcher: refused subscriptions are retried with growing waits until one is accepted",
          "[edge/upstream]") {
  Watching w;
  w.server.service.RefuseNext(
      4, grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "key lacks watch_invalidations"));
  w.watcher.Start();
  REQUIRE(w.sink.WaitFor("up"));
  const auto attempts = w.server.service.Attempts();
  REQUIRE(attempts.size() == 5);
  // Waits of 20, 40, 80, 160 ms, each jittered to at least half.
  absl::Duration backoff = absl::Milliseconds(20);
  for (size_t i = 1; i < attempts.size(); ++i) {
    INFO("attempt " << i);
    CHECK(absl::FromChrono(attempts[i].when - attempts[i - 1].when) >= backoff / 2);
    backoff *= 2;
  }
  // An unacknowledged stream never reported "up" or "down".
  const std::vector<std::string> events = w.sink.Events();
  CHECK(std::count(events.begin(), events.end(), "starting") == 5);
  CHECK(std::count(events.begin(), events.end(), "down") == 0);
  CHECK(std::count(events.begin(), events.end(), "drop_all") == 1);
}

TEST_CASE("watcher: Stop cancels the open stream and returns; a second Stop does nothing",
          "[edge/upstream]") {
  Watching w;
  w.watcher.Start();
  REQUIRE(w.sink.WaitFor("up"));
  w.watcher.Stop();
  CHECK_FALSE(w.watcher.subscribed());
  CHECK(w.server.service.WaitForNoStream());
  w.watcher.Stop();
  CHECK(w.server.service.Attempts().size() == 1);  // no resubscription after Stop
}

}  // namespace
}  // namespace shortener::edge
