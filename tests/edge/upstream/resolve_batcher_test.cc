// The resolve batcher: batching, the queue bound, the per-code deadline
// (queued and in a call), shutdown, many threads at once; over the
// in-memory upstream (which keeps gRPC out of the TSan run), and once
// through the real ServiceClient against an in-process fake service (the
// deadline reaches gRPC, BatchResolve's answers map back in order).
#include "edge/upstream/resolve_batcher.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "edge/upstream/in_memory_link_resolver.h"
#include "edge/upstream/service_client.h"
#include "tests/edge/upstream/fake_resolve_service.h"

namespace shortener::edge {
namespace {

using Clock = ResolveBatcher::Clock;

// The replies a test's `done` callbacks got, by code, with when they came.
class Replies {
 public:
  ResolveBatcher::Done For(const std::string& code) {
    return [this, code](ResolveReply reply) {
      std::lock_guard<std::mutex> lock(mu_);
      got_[code].push_back(Got{reply.outcome, reply.location, Clock::now()});
      arrived_.notify_all();
    };
  }
  bool WaitFor(size_t n, absl::Duration timeout = absl::Seconds(10)) {
    std::unique_lock<std::mutex> lock(mu_);
    return arrived_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                             [&] { return Count() >= n; });
  }
  // The only reply for `code` (REQUIREs exactly one).
  struct Got {
    ResolveOutcome outcome;
    std::string location;
    Clock::time_point when;
  };
  Got Only(const std::string& code) {
    std::lock_guard<std::mutex> lock(mu_);
    REQUIRE(got_[code].size() == 1);
    return got_[code].front();
  }
  size_t Total() {
    std::lock_guard<std::mutex> lock(mu_);
    return Count();
  }

 private:
  size_t Count() const {
    size_t n = 0;
    for (const auto& [code, replies] : got_) n += replies.size();
    return n;
  }
  std::mutex mu_;
  std::condition_variable arrived_;
  std::map<std::string, std::vector<Got>> got_;
};

ServiceClientOptions Timeout(absl::Duration d) {
  ServiceClientOptions o;
  o.resolve_timeout = d;
  return o;
}

Clock::time_point In(std::chrono::milliseconds d) { return Clock::now() + d; }

TEST_CASE("batcher: misses queued behind a call go out together in one BatchResolve",
          "[edge/upstream]") {
  InMemoryLinkResolver upstream;
  upstream.SetLink("aaa", "https://example.com/a");
  ResolveBatcherOptions o;
  o.max_in_flight = 1;
  ResolveBatcher batcher(&upstream, o);
  Replies replies;
  upstream.Hold();
  batcher.Resolve("first", replies.For("first"));
  REQUIRE(upstream.WaitForCalls(1));
  for (const char* code : {"aaa", "bbb", "ccc"}) batcher.Resolve(code, replies.For(code));
  CHECK(batcher.GetStats().queued == 3);
  upstream.Release();
  REQUIRE(replies.WaitFor(4));
  const auto calls = upstream.Calls();
  REQUIRE(calls.size() == 2);
  CHECK(calls[1] == std::vector<std::string>{"aaa", "bbb", "ccc"});
  CHECK(replies.Only("aaa").outcome == ResolveOutcome::kActive);
  CHECK(replies.Only("aaa").location == "https://example.com/a");
  CHECK(replies.Only("bbb").outcome == ResolveOutcome::kNotFound);
  CHECK(batcher.GetStats().calls == 2);
  CHECK(batcher.GetStats().codes == 4);
}

TEST_CASE("batcher: beyond max_queued codes a miss is refused at once and nothing queues",
          "[edge/upstream]") {
  InMemoryLinkResolver upstream;
  ResolveBatcherOptions o;
  o.max_in_flight = 1;
  o.max_queued = 3;
  ResolveBatcher batcher(&upstream, o);
  Replies replies;
  upstream.Hold();
  batcher.Resolve("first", replies.For("first"));
  REQUIRE(upstream.WaitForCalls(1));
  for (const char* code : {"q1", "q2", "q3"}) batcher.Resolve(code, replies.For(code));
  // The fourth waiting code: answered before Resolve returns.
  batcher.Resolve("over", replies.For("over"));
  CHECK(replies.Total() == 1);
  CHECK(replies.Only("over").outcome == ResolveOutcome::kOverloaded);
  ResolveBatcher::Stats stats = batcher.GetStats();
  CHECK(stats.queued == 3);
  CHECK(stats.refused_queue_full == 1);

  // Once the queue drains there is room again.
  upstream.Release();
  REQUIRE(replies.WaitFor(5));
  for (const char* code : {"first", "q1", "q2", "q3"}) {
    CHECK(replies.Only(code).outcome == ResolveOutcome::kNotFound);
  }
  batcher.Resolve("later", replies.For("later"));
  REQUIRE(replies.WaitFor(6));
  CHECK(replies.Only("later").outcome == ResolveOutcome::kNotFound);
  // The refused code never reached the service.
  for (const auto& call : upstream.Calls()) {
    for (const std::string& code : call) CHECK(code != "over");
  }
}

TEST_CASE("batcher: a queued code is answered kTimedOut at its deadline, not when a call returns",
          "[edge/upstream]") {
  InMemoryLinkResolver upstream;
  ResolveBatcherOptions o;
  o.max_in_flight = 1;
  ResolveBatcher batcher(&upstream, o);
  Replies replies;
  upstream.Hold();
  batcher.Resolve("slow", In(std::chrono::seconds(30)), replies.For("slow"));
  REQUIRE(upstream.WaitForCalls(1));
  const Clock::time_point queued = Clock::now();
  batcher.Resolve("late", queued + std::chrono::milliseconds(300), replies.For("late"));
  // The call in flight is held for as long as the test wants: the queued
  // code's answer can only come from its deadline.
  REQUIRE(replies.WaitFor(1, absl::Seconds(20)));
  const Replies::Got late = replies.Only("late");
  CHECK(late.outcome == ResolveOutcome::kTimedOut);
  CHECK(late.when >= queued + std::chrono::milliseconds(300));
  CHECK(batcher.GetStats().expired_queued == 1);
  CHECK(batcher.GetStats().queued == 0);
  CHECK(upstream.Calls().size() == 1);  // never sent

  upstream.Release();
  REQUIRE(replies.WaitFor(2));
  CHECK(replies.Only("slow").outcome == ResolveOutcome::kNotFound);
}

TEST_CASE("batcher over gRPC: queued misses go out in one BatchResolve, answered in order",
          "[edge/upstream]") {
  FakeResolveServer server;
  REQUIRE(server.started());
  server.service.AddLink("aaa", "https://example.com/a");
  server.service.AddLink("ccc", "https://example.com/c");
  ServiceClient client(server.channel, Timeout(absl::Seconds(10)));
  ResolveBatcherOptions o;
  o.max_in_flight = 1;
  ResolveBatcher batcher(&client, o);
  Replies replies;
  server.service.Hold();
  batcher.Resolve("first", In(std::chrono::seconds(20)), replies.For("first"));
  REQUIRE(server.service.WaitForCalls(1));
  for (const char* code : {"aaa", "bbb", "ccc"}) {
    batcher.Resolve(code, In(std::chrono::seconds(20)), replies.For(code));
  }
  server.service.Release();
  REQUIRE(replies.WaitFor(4));
  const auto calls = server.service.Calls();
  REQUIRE(calls.size() == 2);
  CHECK(calls[1] == std::vector<std::string>{"aaa", "bbb", "ccc"});
  CHECK(replies.Only("aaa").location == "https://example.com/a");
  CHECK(replies.Only("bbb").outcome == ResolveOutcome::kNotFound);
  CHECK(replies.Only("ccc").location == "https://example.com/c");
  batcher.Drain();
}

TEST_CASE("batcher over gRPC: a call is cut at the earliest deadline of its codes",
          "[edge/upstream]") {
  FakeResolveServer server;
  REQUIRE(server.started());
  // The client would wait 30 s; the code's own deadline is much nearer.
  ServiceClient client(server.channel, Timeout(absl::Seconds(30)));
  ResolveBatcher batcher(&client, {});
  Replies replies;
  // Connected first: on a busy machine a first connection alone can take
  // longer than the deadline below, and the call must reach the service.
  REQUIRE(server.channel->WaitForConnected(std::chrono::system_clock::now() +
                                           std::chrono::seconds(20)));
  server.service.Hold();
  const Clock::time_point sent = Clock::now();
  batcher.Resolve("held", sent + std::chrono::milliseconds(300), replies.For("held"));
  REQUIRE(replies.WaitFor(1, absl::Seconds(20)));
  const Replies::Got held = replies.Only("held");
  CHECK(held.outcome == ResolveOutcome::kTimedOut);
  CHECK(held.when >= sent + std::chrono::milliseconds(300));
  CHECK(batcher.GetStats().expired_in_call == 1);
  // The call reached the service (it may arrive after the client gave up).
  CHECK(server.service.WaitForCalls(1));
  CHECK(server.service.Calls().size() == 1);
}

TEST_CASE("batcher: a code whose deadline has passed is answered without a call",
          "[edge/upstream]") {
  InMemoryLinkResolver upstream;
  ResolveBatcher batcher(&upstream, {});
  Replies replies;
  batcher.Resolve("past", Clock::now() - std::chrono::milliseconds(1), replies.For("past"));
  CHECK(replies.Total() == 1);
  CHECK(replies.Only("past").outcome == ResolveOutcome::kTimedOut);
  CHECK(upstream.Calls().empty());
}

TEST_CASE("batcher: drain answers queued codes, refuses new ones and waits for calls out",
          "[edge/upstream]") {
  InMemoryLinkResolver upstream;
  ResolveBatcherOptions o;
  o.max_in_flight = 1;
  ResolveBatcher batcher(&upstream, o);
  Replies replies;
  upstream.Hold();
  batcher.Resolve("out", In(std::chrono::seconds(1)), replies.For("out"));
  REQUIRE(upstream.WaitForCalls(1));
  batcher.Resolve("queued", In(std::chrono::seconds(30)), replies.For("queued"));
  batcher.Drain();  // waits for the call out, which ends at its 1 s deadline
  CHECK(replies.Total() == 2);
  CHECK(replies.Only("queued").outcome == ResolveOutcome::kUnavailable);
  CHECK(replies.Only("out").outcome == ResolveOutcome::kTimedOut);
  batcher.Resolve("after", replies.For("after"));
  CHECK(replies.Only("after").outcome == ResolveOutcome::kUnavailable);
  batcher.Drain();  // idempotent
}

TEST_CASE("batcher: many threads missing at once are each answered exactly once",
          "[edge/upstream][concurrent]") {
  InMemoryLinkResolver upstream;
  upstream.SetLink("c7", "https://example.com/7");
  ResolveBatcherOptions o;
  o.max_in_flight = 2;
  o.max_batch = 16;
  o.max_queued = 64;
  ResolveBatcher batcher(&upstream, o);
  Replies replies;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string code = absl::StrCat("t", t, "-", i);
        // Some deadlines are short enough to expire while queued.
        const auto deadline =
            i % 5 == 0 ? In(std::chrono::milliseconds(1)) : In(std::chrono::seconds(20));
        batcher.Resolve(code, deadline, replies.For(code));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  REQUIRE(replies.WaitFor(kThreads * kPerThread, absl::Seconds(60)));
  batcher.Drain();
  CHECK(replies.Total() == kThreads * kPerThread);
  const ResolveBatcher::Stats stats = batcher.GetStats();
  CHECK(stats.queued == 0);
  // Every code was sent, refused, or expired: nothing is counted twice.
  CHECK(stats.codes + stats.refused_queue_full + stats.expired_queued ==
        static_cast<uint64_t>(kThreads * kPerThread));
}

}  // namespace
}  // namespace shortener::edge
