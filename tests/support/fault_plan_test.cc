// FaultPlan and the FaultyLinkStore wrapper: injected failures reach the
// caller and not the wrapped store, latency and the gate hold calls, and
// calls are counted per method with their batch sizes.
#include "tests/support/fault_plan.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "lib/common/sha256.h"
#include "lib/store/in_memory_link_store.h"
#include "tests/support/faulty_link_store.h"
#include "tests/support/status_matchers.h"

namespace shortener::testing {
namespace {

store::NewLink Link(int64_t id) {
  store::NewLink link;
  link.id = id;
  link.long_url = "https://example.com/" + std::to_string(id);
  link.long_url_sha256 = Sha256String(link.long_url);
  link.owner = "tenant";
  return link;
}

TEST_CASE("fault plan: the next N calls fail, then calls reach the wrapped store",
          "[support][faults][concurrent]") {
  store::InMemoryLinkStore memory;
  FaultPlan plan;
  FaultyLinkStore store(&memory, &plan);
  plan.FailNext(2, absl::UnavailableError("database down"));

  const std::vector<store::NewLink> links = {Link(1), Link(2)};
  const auto failed = store.CreateLinks(links);
  REQUIRE(failed.size() == 2);
  CHECK_THAT(failed[0].status(), HasCode(absl::StatusCode::kUnavailable));
  CHECK_THAT(failed[1].status(), HasCode(absl::StatusCode::kUnavailable));
  CHECK_THAT(store.GetById(1).status(), HasCode(absl::StatusCode::kUnavailable));
  // Nothing reached the wrapped store while failing.
  CHECK_THAT(memory.GetById(1).status(), HasCode(absl::StatusCode::kNotFound));

  const auto created = store.CreateLinks(links);
  REQUIRE(created.size() == 2);
  CHECK(created[0].ok());
  CHECK(store.GetById(2).ok());
  CHECK(plan.calls() == 4);
  CHECK(plan.calls("CreateLinks") == 2);
  CHECK(plan.batch_sizes("CreateLinks") == std::vector<size_t>{2, 2});
  CHECK(plan.items("GetById") == 2);
}

TEST_CASE("fault plan: a failure for one method leaves the others alone",
          "[support][faults][concurrent]") {
  store::InMemoryLinkStore memory;
  FaultPlan plan;
  FaultyLinkStore store(&memory, &plan);
  REQUIRE(store.CreateLinks(std::vector<store::NewLink>{Link(7)})[0].ok());
  plan.FailNext(1, absl::DeadlineExceededError("slow"), "GetByIds");
  CHECK(store.GetById(7).ok());
  const std::vector<int64_t> ids = {7};
  CHECK_THAT(store.GetByIds(ids).status(), HasCode(absl::StatusCode::kDeadlineExceeded));
  CHECK(store.GetByIds(ids).ok());
}

TEST_CASE("fault plan: the gate holds calls until opened, and latency delays them",
          "[support][faults][concurrent]") {
  store::InMemoryLinkStore memory;
  FaultPlan plan;
  FaultyLinkStore store(&memory, &plan);
  plan.CloseGate();
  std::thread caller([&] { (void)store.GetById(1); });
  REQUIRE(plan.WaitForCalls(1, "GetById"));
  // Counted but held: the call has not returned.
  CHECK_FALSE(plan.WaitForCalls(2, "", absl::Milliseconds(50)));
  plan.OpenGate();
  caller.join();

  plan.SetLatency(absl::Milliseconds(100));
  const absl::Time start = absl::Now();
  CHECK_THAT(store.GetById(1).status(), HasCode(absl::StatusCode::kNotFound));
  CHECK(absl::Now() - start >= absl::Milliseconds(100));
}

TEST_CASE("fault plan: PassOne lets the call that waited longest through the closed gate",
          "[support][faults][concurrent]") {
  store::InMemoryLinkStore memory;
  FaultPlan plan;
  FaultyLinkStore store(&memory, &plan);
  plan.CloseGate();
  std::atomic<int> returned{0};  // which caller returned first (1 or 2)
  auto caller = [&](int64_t id) {
    (void)store.GetById(id);
    int none = 0;
    returned.compare_exchange_strong(none, static_cast<int>(id));
  };
  std::thread first(caller, 1);
  REQUIRE(plan.WaitForCalls(1, "GetById"));
  std::thread second(caller, 2);
  REQUIRE(plan.WaitForCalls(2, "GetById"));
  plan.PassOne();
  first.join();
  CHECK(returned == 1);
  // The other still waits, and so does a third after a pass was used.
  CHECK_FALSE(plan.WaitForCalls(3, "", absl::Milliseconds(50)));
  plan.OpenGate();
  second.join();
  // With nobody waiting, a pass is for the next call to arrive.
  plan.CloseGate();
  plan.PassOne();
  CHECK_THAT(store.GetById(3).status(), HasCode(absl::StatusCode::kNotFound));
}

TEST_CASE("fault plan: injected exceptions leave the wrapper's method and can be cleared",
          "[support][faults][concurrent]") {
  store::InMemoryLinkStore memory;
  FaultPlan plan;
  FaultyLinkStore store(&memory, &plan);
  plan.ThrowNext(1, std::make_exception_ptr(std::runtime_error("store bug")), "CreateLinks");
  plan.ThrowNext(1, std::make_exception_ptr(42));
  const std::vector<store::NewLink> links = {Link(1)};
  CHECK_THROWS_WITH(store.CreateLinks(links), "store bug");
  CHECK_THROWS_AS(store.GetById(1), int);
  // Nothing reached the wrapped store while throwing.
  CHECK_THAT(memory.GetById(1).status(), HasCode(absl::StatusCode::kNotFound));
  plan.ThrowNext(5, std::make_exception_ptr(std::runtime_error("store bug")));
  plan.FailNext(5, absl::UnavailableError("database down"));
  plan.ClearFaults();
  CHECK(store.CreateLinks(links)[0].ok());
  CHECK(store.GetById(1).ok());
}

TEST_CASE("fault plan: the calling thread of every call is recorded",
          "[support][faults][concurrent]") {
  store::InMemoryLinkStore memory;
  FaultPlan plan;
  FaultyLinkStore store(&memory, &plan);
  (void)store.GetById(1);
  std::thread other([&] { (void)store.GetById(2); });
  const std::thread::id other_id = other.get_id();
  other.join();
  CHECK(plan.threads("GetById") ==
        std::vector<std::thread::id>{std::this_thread::get_id(), other_id});
  CHECK(plan.threads("GetByIds").empty());
}

}  // namespace
}  // namespace shortener::testing
