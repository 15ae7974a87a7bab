// InMemoryLinkResolver: the LinkResolver contract suite, plus what only it
// has (holding calls, outages, the call log) and its expiry against a
// ManualClock.
#include "edge/upstream/in_memory_link_resolver.h"

#include <catch2/catch.hpp>
#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/common/clock.h"
#include "tests/edge/upstream/link_resolver_contract.h"

namespace shortener::edge::testing {
namespace {

using Clock = LinkResolver::Clock;

// The in-memory upstream: its table is the upstream, its ManualClock the
// upstream's wall clock.
class InMemoryContractUpstream final : public ContractUpstream {
 public:
  LinkResolver& resolver() override { return resolver_; }
  std::string CreateLink(const ContractLink& link) override {
    const std::string code = link.alias.empty() ? absl::StrCat("Gen", ++codes_) : link.alias;
    InMemoryLink stored;
    stored.location = link.long_url;
    stored.redirect_status = link.redirect_status;
    stored.expire_time = link.expire_time;
    resolver_.SetLink(code, std::move(stored));
    return code;
  }
  void Revoke(const std::string& code) override { REQUIRE(resolver_.Revoke(code)); }
  std::string UnknownCode() override { return "Unknown7"; }
  absl::Time Now() override { return clock_.Now(); }
  void Elapse(absl::Duration duration) override { clock_.Advance(duration); }
  void Stop() override { resolver_.SetAvailable(false); }
  void Restart() override { resolver_.SetAvailable(true); }

 private:
  ManualClock clock_;
  InMemoryLinkResolver resolver_{clock_};  // after the clock it reads
  int codes_ = 0;
};

}  // namespace

std::unique_ptr<ContractUpstream> NewContractUpstream() {
  return std::make_unique<InMemoryContractUpstream>();
}

namespace {

TEST_CASE("in-memory: a link expires exactly at its expire_time by the clock it was given",
          "[edge/upstream]") {
  ManualClock clock;
  InMemoryLinkResolver resolver(clock);
  InMemoryLink link;
  link.location = "https://example.com/e";
  link.expire_time = clock.Now() + absl::Seconds(10);
  resolver.SetLink("exp", link);
  clock.Advance(absl::Seconds(10) - absl::Nanoseconds(1));
  CHECK(ResolveAndWait(resolver, "exp").reply.outcome == ResolveOutcome::kActive);
  clock.Advance(absl::Nanoseconds(1));
  CHECK(ResolveAndWait(resolver, "exp").reply.outcome == ResolveOutcome::kExpired);
  // Revocation wins over expiry.
  resolver.Revoke("exp");
  CHECK(ResolveAndWait(resolver, "exp").reply.outcome == ResolveOutcome::kRevoked);
}

TEST_CASE("in-memory: held calls wait for Release, or end at their deadline", "[edge/upstream]") {
  InMemoryLinkResolver resolver;
  resolver.SetLink("held", "https://example.com/h");
  resolver.Hold();
  std::promise<ResolveReply> released;
  resolver.Resolve("held", Clock::time_point::max(),
                   [&released](ResolveReply reply) { released.set_value(std::move(reply)); });
  REQUIRE(resolver.WaitForCalls(1));
  // A second call with a near deadline ends there while the first still waits.
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(100);
  const Answered late = ResolveAndWait(resolver, "held", deadline);
  CHECK(Clock::now() >= deadline);
  CHECK(late.reply.outcome == ResolveOutcome::kUnavailable);
  CHECK(absl::IsDeadlineExceeded(late.reply.error));
  std::future<ResolveReply> first = released.get_future();
  CHECK(first.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout);
  resolver.Release();
  REQUIRE(first.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  const ResolveReply reply = first.get();
  CHECK(reply.outcome == ResolveOutcome::kActive);
  CHECK(reply.latency >= absl::Milliseconds(100));
}

TEST_CASE("in-memory: an outage answers the calls already waiting", "[edge/upstream]") {
  InMemoryLinkResolver resolver;
  resolver.Hold();
  std::promise<ResolveReply> promise;
  resolver.Resolve("waiting", Clock::time_point::max(),
                   [&promise](ResolveReply reply) { promise.set_value(std::move(reply)); });
  REQUIRE(resolver.WaitForCalls(1));
  CHECK(resolver.Ready());
  resolver.SetAvailable(false);
  CHECK_FALSE(resolver.Ready());
  std::future<ResolveReply> answered = promise.get_future();
  REQUIRE(answered.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  const ResolveReply reply = answered.get();
  CHECK(reply.outcome == ResolveOutcome::kUnavailable);
  CHECK(absl::IsUnavailable(reply.error));
}

TEST_CASE("in-memory: destruction answers every call still waiting", "[edge/upstream]") {
  std::promise<ResolveReply> one;
  std::promise<std::vector<ResolveReply>> batch;
  {
    InMemoryLinkResolver resolver;
    resolver.Hold();
    resolver.Resolve("a", Clock::time_point::max(),
                     [&one](ResolveReply reply) { one.set_value(std::move(reply)); });
    resolver.ResolveBatch({"b", "c"}, Clock::time_point::max(),
                          [&batch](std::vector<ResolveReply> r) { batch.set_value(std::move(r)); });
    REQUIRE(resolver.WaitForCalls(2));
  }
  CHECK(one.get_future().get().outcome == ResolveOutcome::kUnavailable);
  const std::vector<ResolveReply> replies = batch.get_future().get();
  REQUIRE(replies.size() == 2);
  CHECK(replies[1].outcome == ResolveOutcome::kUnavailable);
}

TEST_CASE("in-memory: every call is logged with its codes, in order", "[edge/upstream]") {
  InMemoryLinkResolver resolver;
  ResolveAndWait(resolver, "one");
  ResolveBatchAndWait(resolver, {"two", "three"}, Clock::now() + std::chrono::seconds(10));
  CHECK(resolver.Calls() == std::vector<std::vector<std::string>>{{"one"}, {"two", "three"}});
}

}  // namespace
}  // namespace shortener::edge::testing
