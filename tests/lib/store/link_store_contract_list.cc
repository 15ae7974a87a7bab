// The LinkStore contract, part 4: ListLinks (issue 21, item 1). Keyset
// pages in each order, every condition, short pages under a small scan
// budget, and the clicked-then-unclicked walk. Every implementation passes
// these cases.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "lib/store/link_list.h"
#include "tests/lib/store/link_store_contract.h"
#include "tests/support/status_matchers.h"

namespace shortener::store::testing {
namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::IsOk;

// Every page of `query` from the first to the last: the ids in the order
// returned. Checks that no page is longer than page_size and that the walk
// ends.
std::vector<int64_t> WalkAll(LinkStore& store, LinkListQuery query, int* pages = nullptr) {
  std::vector<int64_t> ids;
  query.after.reset();
  for (int page_number = 1;; ++page_number) {
    REQUIRE(page_number < 1000);
    absl::StatusOr<LinkPage> page = store.ListLinks(query);
    REQUIRE_THAT(page, IsOk());
    REQUIRE(static_cast<int>(page->links.size()) <= query.page_size);
    for (const Link& link : page->links) ids.push_back(link.id);
    if (!page->next.has_value()) {
      if (pages != nullptr) *pages = page_number;
      return ids;
    }
    query.after = page->next;
  }
}

// `count` links of a fresh owner, the i-th created at T0() + i seconds.
std::vector<NewLink> MakeLinks(LinkStore& store, const std::string& owner, int count) {
  std::vector<NewLink> links;
  for (int i = 0; i < count; ++i) {
    NewLink link = MakeNewLink(owner, "https://example.com/list/" + std::to_string(i));
    link.create_time = T0() + absl::Seconds(i);
    links.push_back(link);
  }
  for (const auto& result : Create(store, links)) REQUIRE_THAT(result, IsOk());
  return links;
}

std::vector<int64_t> IdsOf(const std::vector<NewLink>& links) {
  std::vector<int64_t> ids;
  for (const NewLink& link : links) ids.push_back(link.id);
  return ids;
}

std::vector<int64_t> Reversed(std::vector<int64_t> ids) {
  return std::vector<int64_t>(ids.rbegin(), ids.rend());
}

// `t` as stores keep it (whole microseconds): T0() has nanoseconds.
absl::Time Stored(absl::Time t) { return absl::FromUnixMicros(absl::ToUnixMicros(t)); }

LinkListQuery QueryFor(const std::string& owner, int page_size) {
  LinkListQuery query;
  query.owner = owner;
  query.page_size = page_size;
  query.now = T0() + absl::Hours(1);
  return query;
}

TEST_CASE("ListLinks pages through an owner's links newest first, then oldest first",
          "[lib/store][list][contract]") {
  auto store = NewContractStore();
  const std::string owner = UniqueName("lister");
  std::vector<NewLink> links = MakeLinks(*store, owner, 7);
  MakeLinks(*store, UniqueName("other"), 3);  // never listed for `owner`

  for (int page_size : {1, 2, 3, 7, 100}) {
    INFO("page_size " << page_size);
    LinkListQuery query = QueryFor(owner, page_size);
    int pages = 0;
    CHECK(WalkAll(*store, query, &pages) == Reversed(IdsOf(links)));
    // A full last page may be followed by an empty one; never more.
    CHECK(pages <= 7 / page_size + 1);
    query.order = LinkOrder::kOldestFirst;
    CHECK(WalkAll(*store, query) == IdsOf(links));
  }

  // The items are the links as stored.
  LinkListQuery query = QueryFor(owner, 1);
  absl::StatusOr<LinkPage> first = store->ListLinks(query);
  REQUIRE_THAT(first, IsOk());
  REQUIRE(first->links.size() == 1);
  absl::StatusOr<Link> stored = store->GetById(links.back().id);
  REQUIRE_THAT(stored, IsOk());
  CheckSameLink(first->links[0], *stored);
  REQUIRE(first->next.has_value());
}

TEST_CASE("ListLinks breaks create-time ties by id and lists nothing for an unknown owner",
          "[lib/store][list][contract]") {
  auto store = NewContractStore();
  const std::string owner = UniqueName("ties");
  std::vector<NewLink> links;
  for (int i = 0; i < 5; ++i) {
    links.push_back(MakeNewLink(owner, "https://example.com/tie/" + std::to_string(i)));
  }
  for (const auto& result : Create(*store, links)) REQUIRE_THAT(result, IsOk());
  std::vector<int64_t> ids = IdsOf(links);
  std::sort(ids.begin(), ids.end());
  LinkListQuery query = QueryFor(owner, 2);
  CHECK(WalkAll(*store, query) == Reversed(ids));
  query.order = LinkOrder::kOldestFirst;
  CHECK(WalkAll(*store, query) == ids);

  absl::StatusOr<LinkPage> none = store->ListLinks(QueryFor(UniqueName("nobody"), 10));
  REQUIRE_THAT(none, IsOk());
  CHECK(none->links.empty());
  CHECK_FALSE(none->next.has_value());
}

TEST_CASE("ListLinks refuses a page size out of range and an empty owner",
          "[lib/store][list][contract]") {
  auto store = NewContractStore();
  CHECK_THAT(store->ListLinks(QueryFor("x", 0)), HasCode(absl::StatusCode::kInvalidArgument));
  CHECK_THAT(store->ListLinks(QueryFor("x", kMaxPageSize + 1)),
             HasCode(absl::StatusCode::kInvalidArgument));
  CHECK_THAT(store->ListLinks(QueryFor("", 10)), HasCode(absl::StatusCode::kInvalidArgument));
}

TEST_CASE("ListLinks filters by labels (all of them), in both orders",
          "[lib/store][list][contract]") {
  auto store = NewContractStore();
  const std::string owner = UniqueName("campaigner");
  std::vector<NewLink> links;
  std::vector<int64_t> spring, spring_sms;
  for (int i = 0; i < 9; ++i) {
    NewLink link = MakeNewLink(owner, "https://example.com/label/" + std::to_string(i));
    link.create_time = T0() + absl::Seconds(i);
    if (i % 3 != 2) link.labels["campaign"] = "spring";
    if (i % 3 == 0) link.labels["channel"] = "sms";
    if (i % 3 == 2) link.labels["campaign"] = "autumn";
    if (i % 3 != 2) spring.push_back(link.id);
    if (i % 3 == 0) spring_sms.push_back(link.id);
    links.push_back(link);
  }
  // Another tenant's link with the same label is never listed.
  NewLink foreign = MakeNewLink(UniqueName("other"), "https://example.com/label/x");
  foreign.labels["campaign"] = "spring";
  links.push_back(foreign);
  for (const auto& result : Create(*store, links)) REQUIRE_THAT(result, IsOk());

  absl::StatusOr<int64_t> spring_id = store->FindLabelId(owner, "campaign", "spring");
  absl::StatusOr<int64_t> sms_id = store->FindLabelId(owner, "channel", "sms");
  REQUIRE_THAT(spring_id, IsOk());
  REQUIRE_THAT(sms_id, IsOk());

  LinkListQuery query = QueryFor(owner, 2);
  query.label_ids = {*spring_id};
  CHECK(WalkAll(*store, query) == Reversed(spring));
  query.order = LinkOrder::kOldestFirst;
  CHECK(WalkAll(*store, query) == spring);
  // Either label may come first: the answer is the links with both.
  query.label_ids = {*sms_id, *spring_id};
  CHECK(WalkAll(*store, query) == spring_sms);
  query.label_ids = {*spring_id, *sms_id};
  query.order = LinkOrder::kNewestFirst;
  CHECK(WalkAll(*store, query) == Reversed(spring_sms));
}

TEST_CASE("ListLinks filters by state at the query's time, create time range and host",
          "[lib/store][list][contract]") {
  auto store = NewContractStore();
  const std::string owner = UniqueName("states");
  const absl::Time now = T0() + absl::Hours(1);
  std::vector<NewLink> links;
  auto add = [&](const std::string& url, int second) {
    NewLink link = MakeNewLink(owner, url);
    link.create_time = T0() + absl::Seconds(second);
    links.push_back(link);
    return links.size() - 1;
  };
  const size_t active = add("https://shop.example.com/a", 0);
  const size_t expired = add("https://example.com:8443/b", 1);
  links[expired].expire_time = now - absl::Minutes(1);
  const size_t expiring_later = add("https://example.com/c?x=1", 2);
  links[expiring_later].expire_time = now + absl::Minutes(1);
  const size_t revoked = add("http://[2001:db8::1]:8080/d", 3);
  const size_t ipv4 = add("http://192.0.2.7/e#top", 4);
  for (const auto& result : Create(*store, links)) REQUIRE_THAT(result, IsOk());
  REQUIRE_THAT(store->Revoke(links[revoked].id, T0() + absl::Seconds(30), "code"), IsOk());

  LinkListQuery query = QueryFor(owner, 2);
  query.order = LinkOrder::kOldestFirst;
  query.status = LinkStatus::kActive;
  CHECK(WalkAll(*store, query) ==
        std::vector<int64_t>{links[active].id, links[expiring_later].id, links[ipv4].id});
  query.status = LinkStatus::kExpired;
  CHECK(WalkAll(*store, query) == std::vector<int64_t>{links[expired].id});
  // Expiry is judged at the query's time.
  query.now = now + absl::Hours(1);
  CHECK(WalkAll(*store, query) ==
        std::vector<int64_t>{links[expired].id, links[expiring_later].id});
  query.now = now;
  query.status = LinkStatus::kRevoked;
  CHECK(WalkAll(*store, query) == std::vector<int64_t>{links[revoked].id});
  query.status_negated = true;
  CHECK(WalkAll(*store, query) == std::vector<int64_t>{links[active].id, links[expired].id,
                                                       links[expiring_later].id, links[ipv4].id});
  query.status.reset();
  query.status_negated = false;

  query.created_from = Stored(T0() + absl::Seconds(1));
  query.created_before = Stored(T0() + absl::Seconds(4));
  CHECK(WalkAll(*store, query) ==
        std::vector<int64_t>{links[expired].id, links[expiring_later].id, links[revoked].id});
  query.created_from.reset();
  query.created_before.reset();

  query.host = "example.com";
  CHECK(WalkAll(*store, query) ==
        std::vector<int64_t>{links[expired].id, links[expiring_later].id});
  query.host = "shop.example.com";
  CHECK(WalkAll(*store, query) == std::vector<int64_t>{links[active].id});
  query.host = "[2001:db8::1]";
  CHECK(WalkAll(*store, query) == std::vector<int64_t>{links[revoked].id});
  query.host = "192.0.2.7";
  CHECK(WalkAll(*store, query) == std::vector<int64_t>{links[ipv4].id});
  query.host = "example";
  CHECK(WalkAll(*store, query).empty());
  query.host = std::string("bad\0host", 8);
  CHECK(WalkAll(*store, query).empty());
}

TEST_CASE("ListLinks under a small scan budget returns short pages but every match once",
          "[lib/store][list][contract]") {
  auto store = NewContractStore();
  const std::string owner = UniqueName("sparse");
  std::vector<NewLink> links = MakeLinks(*store, owner, 30);
  std::vector<int64_t> revoked;
  for (int i : {3, 17, 18, 29}) {
    REQUIRE_THAT(store->Revoke(links[i].id, T0() + absl::Minutes(1), "code"), IsOk());
    revoked.push_back(links[i].id);
  }
  LinkListQuery query = QueryFor(owner, 2);
  query.order = LinkOrder::kOldestFirst;
  query.status = LinkStatus::kRevoked;
  query.scan_limit = 5;
  int pages = 0;
  CHECK(WalkAll(*store, query, &pages) == revoked);
  // 30 links looked at 5 per page: at least 6 pages, some of them empty.
  CHECK(pages >= 6);
  query.order = LinkOrder::kNewestFirst;
  CHECK(WalkAll(*store, query) == Reversed(revoked));
}

TEST_CASE(
    "ListLinks by clicks: most clicked first (ties by id), then the never clicked, newest "
    "first",
    "[lib/store][list][contract]") {
  const std::string owner = UniqueName("ranked");
  auto store = NewContractStore();
  std::vector<NewLink> links = MakeLinks(*store, owner, 6);
  // links 1 and 4 tie; 0, 2 and 5 were never clicked.
  SetRankedClicks(*store, links[1].id, owner, 7);
  SetRankedClicks(*store, links[3].id, owner, 50);
  SetRankedClicks(*store, links[4].id, owner, 7);
  const std::vector<int64_t> want{links[3].id,
                                  std::max(links[1].id, links[4].id),
                                  std::min(links[1].id, links[4].id),
                                  links[5].id,
                                  links[2].id,
                                  links[0].id};
  for (int page_size : {1, 2, 4, 10}) {
    INFO("page_size " << page_size);
    LinkListQuery query = QueryFor(owner, page_size);
    query.order = LinkOrder::kMostClicked;
    CHECK(WalkAll(*store, query) == want);
  }
  LinkListQuery query = QueryFor(owner, 10);
  query.order = LinkOrder::kMostClicked;
  query.created_from = Stored(T0() + absl::Seconds(2));
  CHECK(WalkAll(*store, query) ==
        std::vector<int64_t>{links[3].id, links[4].id, links[5].id, links[2].id});
  query.scan_limit = 1;
  query.page_size = 1;
  CHECK(WalkAll(*store, query) ==
        std::vector<int64_t>{links[3].id, links[4].id, links[5].id, links[2].id});
}

}  // namespace
}  // namespace shortener::store::testing
