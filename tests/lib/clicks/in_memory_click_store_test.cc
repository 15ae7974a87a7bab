// InMemoryClickStore: the contract suite (click_store_contract*.cc), plus
// what only it has: the view of what callers handed it (BatchCount, Visits).
#include "lib/clicks/in_memory_click_store.h"

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "tests/lib/clicks/click_store_contract.h"
#include "tests/support/status_matchers.h"

namespace shortener::clicks::testing {

namespace {

// The labels of SetLinkLabels, for every store of NewContractClickStore.
std::mutex labels_mu;
std::map<int64_t, std::vector<int64_t>> link_labels;  // guarded by labels_mu

}  // namespace

std::unique_ptr<ClickStore> NewContractClickStore() {
  return std::make_unique<InMemoryClickStore>([](int64_t link_id) {
    std::lock_guard<std::mutex> lock(labels_mu);
    auto it = link_labels.find(link_id);
    return it == link_labels.end() ? std::vector<int64_t>() : it->second;
  });
}

void SetLinkLabels(int64_t link_id, const std::vector<int64_t>& label_ids) {
  std::lock_guard<std::mutex> lock(labels_mu);
  link_labels[link_id] = label_ids;
}

namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::IsOk;

TEST_CASE("the in-memory store shows the batches and visits it recorded, as given",
          "[lib/clicks][in_memory]") {
  InMemoryClickStore store;
  const int64_t link = NextLinkId();
  ClickRow first = Click(link, At("2030-02-28T23:59:59.999999999Z"));
  first.country = "DE";
  first.ip = "";
  const std::vector<ClickRow> rows = {first, Click(link, At("2030-03-01T00:00:00Z"), true)};
  REQUIRE_THAT(store.Record("visits-1", rows, true), IsOk());
  REQUIRE_THAT(store.Record("counts-only", {Click(link, At("2030-03-01T01:00:00Z"))}, false),
               IsOk());
  REQUIRE_THAT(store.Record("visits-1", {Click(link, At("2030-03-01T02:00:00Z"))}, true), IsOk());
  CHECK_THAT(store.Record("", rows, true), HasCode(absl::StatusCode::kInvalidArgument));
  CHECK(store.BatchCount() == 2);
  const std::vector<ClickRow> visits = store.Visits();
  REQUIRE(visits.size() == 2);
  CHECK(visits[0].time == first.time);  // kept to the nanosecond
  CHECK(visits[0].country == "DE");
  CHECK(visits[0].ip.empty());
  CHECK(visits[0].client_id == first.client_id);
  CHECK(visits[1].bot);
  CHECK(visits[1].device == "bot");
  CHECK(*store.HumanTotal(link) == 2);
}

}  // namespace
}  // namespace shortener::clicks::testing
