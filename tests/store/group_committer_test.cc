// GroupCommitter over InMemoryLinkStore (slowed down, so that batches form
// the way they do in front of a real database).
#include "lib/store/group_committer.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "lib/store/in_memory_link_store.h"
#include "tests/store/link_store_contract.h"
#include "tests/support/status_matchers.h"

namespace shortener::store::testing {
namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::IsOk;

// An InMemoryLinkStore whose CreateLinks takes `delay` (like a commit).
class SlowStore : public InMemoryLinkStore {
 public:
  explicit SlowStore(absl::Duration delay) : delay_(delay) {}
  std::vector<absl::StatusOr<CreateOutcome>> CreateLinks(absl::Span<const NewLink> links) override {
    absl::SleepFor(delay_);
    return InMemoryLinkStore::CreateLinks(links);
  }

 private:
  absl::Duration delay_;
};

TEST_CASE("64 threads each get their own result, grouped into fewer transactions",
          "[store][concurrent]") {
  SlowStore store(absl::Milliseconds(1));
  GroupCommitter committer(&store, GroupCommitOptions{});
  constexpr int kThreads = 64, kPerThread = 20;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::string owner = "owner-" + std::to_string(t);
      for (int i = 0; i < kPerThread; ++i) {
        NewLink link = MakeNewLink(owner, "https://example.com/" + std::to_string(i));
        absl::StatusOr<CreateOutcome> r = committer.CreateAndWait(link);
        if (!r.ok() || !r->created || r->link.id != link.id || r->link.owner != owner) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(wrong == 0);
  GroupCommitter::Stats stats = committer.GetStats();
  CHECK(stats.links == kThreads * kPerThread);
  CHECK(stats.batches < stats.links / 4);
  CHECK(store.LinkCount() == size_t{kThreads * kPerThread});
}

TEST_CASE("CreateMany returns per-item results in input order", "[store][concurrent]") {
  InMemoryLinkStore store;
  GroupCommitter committer(&store, GroupCommitOptions{});
  std::string owner = UniqueName("owner");
  std::vector<NewLink> links;
  for (int i = 0; i < 10; ++i) {
    links.push_back(MakeNewLink(owner, "https://example.com/" + std::to_string(i)));
  }
  links[3].alias = links[7].alias = UniqueName("same");
  std::promise<std::vector<absl::StatusOr<CreateOutcome>>> done;
  committer.CreateMany(
      links, [&](std::vector<absl::StatusOr<CreateOutcome>> r) { done.set_value(std::move(r)); });
  std::vector<absl::StatusOr<CreateOutcome>> results = done.get_future().get();
  REQUIRE(results.size() == 10);
  for (int i = 0; i < 10; ++i) {
    if (i == 7) {
      CHECK_THAT(results[i], HasCode(absl::StatusCode::kAlreadyExists));
    } else {
      REQUIRE_THAT(results[i], IsOk());
      CHECK(results[i]->link.id == links[i].id);
    }
  }
}

TEST_CASE("a CreateMany larger than max_batch is split and still answered in order",
          "[store][concurrent]") {
  InMemoryLinkStore store;
  GroupCommitter committer(&store, GroupCommitOptions{/*max_batch=*/10, 2});
  std::string owner = UniqueName("owner");
  std::vector<NewLink> links;
  for (int i = 0; i < 25; ++i) {
    links.push_back(MakeNewLink(owner, "https://example.com/" + std::to_string(i)));
  }
  std::promise<std::vector<absl::StatusOr<CreateOutcome>>> done;
  committer.CreateMany(
      links, [&](std::vector<absl::StatusOr<CreateOutcome>> r) { done.set_value(std::move(r)); });
  std::vector<absl::StatusOr<CreateOutcome>> results = done.get_future().get();
  REQUIRE(results.size() == 25);
  for (int i = 0; i < 25; ++i) {
    REQUIRE_THAT(results[i], IsOk());
    CHECK(results[i]->link.id == links[i].id);
  }
  CHECK(committer.GetStats().batches >= 3);
  bool empty_done = false;
  committer.CreateMany(
      {}, [&](std::vector<absl::StatusOr<CreateOutcome>> r) { empty_done = r.empty(); });
  CHECK(empty_done);
}

TEST_CASE("the destructor completes everything queued", "[store][concurrent]") {
  SlowStore store(absl::Milliseconds(2));
  std::atomic<int> ok{0};
  constexpr int kLinks = 300;
  {
    GroupCommitter committer(&store, GroupCommitOptions{/*max_batch=*/16, 2});
    std::string owner = UniqueName("owner");
    for (int i = 0; i < kLinks; ++i) {
      committer.Create(MakeNewLink(owner, "https://example.com/" + std::to_string(i)),
                       [&](absl::StatusOr<CreateOutcome> r) {
                         if (r.ok()) ++ok;
                       });
    }
  }
  CHECK(ok == kLinks);
  CHECK(store.LinkCount() == size_t{kLinks});
}

TEST_CASE("a store outage reaches every caller of the batch", "[store][concurrent]") {
  InMemoryLinkStore store;
  store.SetAvailable(false);
  GroupCommitter committer(&store, GroupCommitOptions{});
  std::vector<std::thread> threads;
  std::atomic<int> unavailable{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      auto r = committer.CreateAndWait(MakeNewLink(UniqueName("owner"), "https://example.com/"));
      if (absl::IsUnavailable(r.status())) ++unavailable;
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(unavailable == 8);
}

}  // namespace
}  // namespace shortener::store::testing
