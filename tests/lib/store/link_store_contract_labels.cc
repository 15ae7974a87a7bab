// The LinkStore contract, part 3: labels (issue 19, item 2). They round-trip
// through every read, take part in the dedupe key, and each (tenant, key,
// value) gets one label id. Every implementation passes these cases.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/lib/store/link_store_contract.h"
#include "tests/support/status_matchers.h"

namespace shortener::store::testing {
namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

NewLink Labelled(const std::string& owner, const std::string& url, Labels labels) {
  NewLink link = MakeNewLink(owner, url);
  link.labels = std::move(labels);
  return link;
}

TEST_CASE("labels round-trip through create and every read", "[lib/store][contract]") {
  auto store = NewContractStore();
  const std::string owner = UniqueName("owner");
  const Labels labels{{"campaign", "spring-sale"}, {"channel", "sms"}, {"empty", ""}};
  NewLink plain = Labelled(owner, "https://example.com/l1", labels);
  NewLink vanity = Labelled(owner, "https://example.com/l2", {{"campaign", "spring-sale"}});
  vanity.alias = UniqueName("labelled");
  NewLink none = MakeNewLink(owner, "https://example.com/l3");

  auto r = Create(*store, {plain, vanity, none});
  REQUIRE_THAT(r[0], IsOk());
  REQUIRE_THAT(r[1], IsOk());
  REQUIRE_THAT(r[2], IsOk());
  CHECK(r[0]->link.labels == labels);
  CHECK(r[1]->link.labels == Labels{{"campaign", "spring-sale"}});
  CHECK(r[2]->link.labels.empty());

  absl::StatusOr<Link> by_id = store->GetById(plain.id);
  REQUIRE_THAT(by_id, IsOk());
  CHECK(by_id->labels == labels);
  absl::StatusOr<Link> by_alias = store->GetByAlias(*vanity.alias);
  REQUIRE_THAT(by_alias, IsOk());
  CHECK(by_alias->labels == Labels{{"campaign", "spring-sale"}});
  auto many = store->GetByIds({plain.id, vanity.id, none.id});
  REQUIRE_THAT(many, IsOk());
  REQUIRE(many->size() == 3);
  CheckSameLink(*(*many)[0], r[0]->link);
  CheckSameLink(*(*many)[1], r[1]->link);
  CheckSameLink(*(*many)[2], r[2]->link);
  auto aliases = store->GetByAliases({*vanity.alias});
  REQUIRE_THAT(aliases, IsOk());
  CheckSameLink(*(*aliases)[0], r[1]->link);
  absl::StatusOr<Link> revoked = store->Revoke(plain.id, T0() + absl::Hours(1), "code");
  REQUIRE_THAT(revoked, IsOk());
  CHECK(revoked->labels == labels);
}

TEST_CASE("dedupe covers the labels: same labels the same link, other labels a new one",
          "[lib/store][contract]") {
  auto store = NewContractStore();
  const std::string owner = UniqueName("owner");
  const std::string url = "https://example.com/campaign";
  const Labels spring{{"campaign", "spring-sale"}, {"channel", "sms"}};
  auto first = CreateOne(*store, Labelled(owner, url, spring));
  REQUIRE_THAT(first, IsOk());
  CHECK(first->created);

  // The same labels (a map: the order they were given in cannot matter).
  auto again = CreateOne(*store, Labelled(owner, url, spring));
  REQUIRE_THAT(again, IsOk());
  CHECK_FALSE(again->created);
  CHECK(again->link.id == first->link.id);

  // Other labels, fewer labels, another value, no labels: each a new link,
  // each then the target of its own labels.
  const std::vector<Labels> others{{{"campaign", "spring-sale"}},
                                   {{"campaign", "summer-sale"}, {"channel", "sms"}},
                                   {{"campaign", "spring-sale"}, {"channel", "email"}},
                                   {}};
  std::vector<int64_t> ids{first->link.id};
  for (const Labels& labels : others) {
    auto made = CreateOne(*store, Labelled(owner, url, labels));
    REQUIRE_THAT(made, IsOk());
    CHECK(made->created);
    CHECK(made->link.labels == labels);
    for (int64_t id : ids) CHECK(made->link.id != id);
    ids.push_back(made->link.id);
    auto replay = CreateOne(*store, Labelled(owner, url, labels));
    REQUIRE_THAT(replay, IsOk());
    CHECK_FALSE(replay->created);
    CHECK(replay->link.id == made->link.id);
  }

  // Within one batch, too.
  const std::string batch_url = "https://example.com/campaign-batch";
  auto batch = Create(*store, {Labelled(owner, batch_url, spring), Labelled(owner, batch_url, {}),
                               Labelled(owner, batch_url, spring)});
  REQUIRE_THAT(batch[0], IsOk());
  REQUIRE_THAT(batch[1], IsOk());
  REQUIRE_THAT(batch[2], IsOk());
  CHECK(batch[0]->created);
  CHECK(batch[1]->created);
  CHECK(batch[1]->link.id != batch[0]->link.id);
  CHECK_FALSE(batch[2]->created);
  CHECK(batch[2]->link.id == batch[0]->link.id);
}

TEST_CASE("a label id is made once per tenant, key and value and shared by its links",
          "[lib/store][contract]") {
  auto store = NewContractStore();
  const std::string alice = UniqueName("alice"), bob = UniqueName("bob");
  CHECK_THAT(store->FindLabelId(alice, "campaign", "spring-sale"),
             HasCodeAndMessage(absl::StatusCode::kNotFound,
                               "no label campaign=spring-sale for tenant \"" + alice + "\""));

  auto a1 = CreateOne(*store, Labelled(alice, "https://example.com/a1",
                                       {{"campaign", "spring-sale"}, {"channel", "sms"}}));
  REQUIRE_THAT(a1, IsOk());
  absl::StatusOr<int64_t> spring = store->FindLabelId(alice, "campaign", "spring-sale");
  absl::StatusOr<int64_t> sms = store->FindLabelId(alice, "channel", "sms");
  REQUIRE_THAT(spring, IsOk());
  REQUIRE_THAT(sms, IsOk());
  CHECK(*spring != *sms);

  // More links with the label (one per recipient): the same id.
  auto more =
      Create(*store, {Labelled(alice, "https://example.com/a2", {{"campaign", "spring-sale"}}),
                      Labelled(alice, "https://example.com/a3", {{"campaign", "spring-sale"}})});
  REQUIRE_THAT(more[0], IsOk());
  REQUIRE_THAT(more[1], IsOk());
  CHECK(store->FindLabelId(alice, "campaign", "spring-sale").value() == *spring);

  // Another value, and another tenant's same label: ids of their own.
  REQUIRE_THAT(
      CreateOne(*store, Labelled(alice, "https://example.com/a4", {{"campaign", "summer-sale"}})),
      IsOk());
  REQUIRE_THAT(
      CreateOne(*store, Labelled(bob, "https://example.com/a1", {{"campaign", "spring-sale"}})),
      IsOk());
  absl::StatusOr<int64_t> summer = store->FindLabelId(alice, "campaign", "summer-sale");
  absl::StatusOr<int64_t> bobs = store->FindLabelId(bob, "campaign", "spring-sale");
  REQUIRE_THAT(summer, IsOk());
  REQUIRE_THAT(bobs, IsOk());
  CHECK(*summer != *spring);
  CHECK(*bobs != *spring);
  CHECK(*bobs != *summer);

  // Text no label can be is simply not found.
  CHECK_THAT(store->FindLabelId(alice, std::string("a\0b", 3), "x"),
             HasCode(absl::StatusCode::kNotFound));
}

TEST_CASE("labels breaking the rule fail their item only, naming the label",
          "[lib/store][contract]") {
  auto store = NewContractStore();
  const std::string owner = UniqueName("owner");
  Labels too_many;
  for (int i = 0; i < 17; ++i) too_many.emplace("k" + std::to_string(i), "v");
  auto r =
      Create(*store, {Labelled(owner, "https://example.com/bad1", {{"Campaign", "x"}}),
                      Labelled(owner, "https://example.com/ok", {{"campaign", "x"}}),
                      Labelled(owner, "https://example.com/bad2", {{"campaign", "Spring Sale"}}),
                      Labelled(owner, "https://example.com/bad3", too_many)});
  CHECK_THAT(r[0], HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                     "labels: key \"Campaign\" must match [a-z][a-z0-9_-]{0,62}"));
  REQUIRE_THAT(r[1], IsOk());
  CHECK_THAT(r[2],
             HasCodeAndMessage(
                 absl::StatusCode::kInvalidArgument,
                 "labels: value of \"campaign\" must match [a-z0-9_-]{0,63}, got \"Spring Sale\""));
  CHECK_THAT(r[3], HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                     "labels: at most 16 per link, got 17"));
  // An item the rules refuse makes no label id.
  CHECK_THAT(store->FindLabelId(owner, "Campaign", "x"), HasCode(absl::StatusCode::kNotFound));
  // A valid item refused later (its alias taken) leaves its label's id
  // behind, as a label without links: no click ever counts under it.
  NewLink first = Labelled(owner, "https://example.com/alias1", {});
  first.alias = UniqueName("taken");
  REQUIRE_THAT(CreateOne(*store, first), IsOk());
  NewLink second = Labelled(owner, "https://example.com/alias2", {{"campaign", "orphan"}});
  second.alias = first.alias;
  CHECK_THAT(CreateOne(*store, second), HasCode(absl::StatusCode::kAlreadyExists));
  CHECK_THAT(store->FindLabelId(owner, "campaign", "orphan"), IsOk());
}

}  // namespace
}  // namespace shortener::store::testing
