// The LinkStore contract, part 5: UpdateLink and LinkHistory (issue 21,
// item 2). Every implementation passes these cases.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "lib/store/link_update.h"
#include "tests/lib/store/link_store_contract.h"
#include "tests/support/status_matchers.h"

namespace shortener::store::testing {
namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

LinkUpdate UpdateOf(const NewLink& link, absl::Time when = T0() + absl::Hours(1)) {
  LinkUpdate update;
  update.id = link.id;
  update.code = "code-" + std::to_string(link.id);
  update.actor = "tester (api key 1)";
  update.when = when;
  return update;
}

void SetUrl(LinkUpdate& update, const std::string& url) {
  update.long_url = url;
  update.long_url_sha256 = Sha256(url);
}

TEST_CASE("UpdateLink changes each field, reads return it, and the history keeps old and new",
          "[lib/store][update][contract]") {
  auto store = NewContractStore();
  const std::string owner = UniqueName("editor");
  NewLink link = MakeNewLink(owner, "https://example.com/before");
  link.labels = {{"campaign", "spring"}};
  REQUIRE_THAT(CreateOne(*store, link), IsOk());

  LinkUpdate first = UpdateOf(link);
  SetUrl(first, "https://example.com/after");
  first.expire_time = T0() + absl::Hours(48);
  first.redirect_status = 301;
  first.labels = Labels{{"campaign", "autumn"}, {"channel", "sms"}};
  absl::StatusOr<Link> updated = store->UpdateLink(first);
  REQUIRE_THAT(updated, IsOk());
  CHECK(updated->long_url == "https://example.com/after");
  CHECK(updated->expire_time == absl::FromUnixMicros(absl::ToUnixMicros(T0() + absl::Hours(48))));
  CHECK(updated->redirect_status == 301);
  CHECK(updated->labels == Labels{{"campaign", "autumn"}, {"channel", "sms"}});
  absl::StatusOr<Link> read = store->GetById(link.id);
  REQUIRE_THAT(read, IsOk());
  CheckSameLink(*read, *updated);
  // The new labels have ids of the tenant; a list by label finds the link.
  absl::StatusOr<int64_t> sms = store->FindLabelId(owner, "channel", "sms");
  REQUIRE_THAT(sms, IsOk());
  LinkListQuery query;
  query.owner = owner;
  query.label_ids = {*sms};
  absl::StatusOr<LinkPage> page = store->ListLinks(query);
  REQUIRE_THAT(page, IsOk());
  REQUIRE(page->links.size() == 1);
  CHECK(page->links[0].id == link.id);

  // Clearing: no expiry.
  LinkUpdate second = UpdateOf(link, T0() + absl::Hours(2));
  second.expire_time = std::optional<absl::Time>();
  second.labels = Labels{};
  REQUIRE_THAT(store->UpdateLink(second), IsOk());

  absl::StatusOr<std::vector<LinkChange>> history = store->LinkHistory(link.id);
  REQUIRE_THAT(history, IsOk());
  REQUIRE(history->size() == 2);
  CHECK((*history)[0].actor == "tester (api key 1)");
  CHECK((*history)[0].time == absl::FromUnixMicros(absl::ToUnixMicros(T0() + absl::Hours(1))));
  const std::string expiry =
      absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ", *updated->expire_time, absl::UTCTimeZone());
  CHECK((*history)[0].fields ==
        std::vector<FieldChange>{
            {"long_url", "https://example.com/before", "https://example.com/after"},
            {"expire_time", "", expiry},
            {"redirect_type", "302", "301"},
            {"labels", "campaign=spring", "campaign=autumn,channel=sms"}});
  CHECK((*history)[1].fields ==
        std::vector<FieldChange>{{"expire_time", expiry, ""},
                                 {"labels", "campaign=autumn,channel=sms", ""}});
  CHECK(store->GetById(link.id)->labels.empty());
}

TEST_CASE("UpdateLink that changes nothing records nothing; refusals write nothing",
          "[lib/store][update][contract]") {
  auto store = NewContractStore();
  NewLink link = MakeNewLink(UniqueName("idle"), "https://example.com/same");
  REQUIRE_THAT(CreateOne(*store, link), IsOk());
  LinkUpdate same = UpdateOf(link);
  SetUrl(same, "https://example.com/same");
  same.redirect_status = 302;
  REQUIRE_THAT(store->UpdateLink(same), IsOk());
  CHECK(store->LinkHistory(link.id)->empty());

  LinkUpdate bad = UpdateOf(link);
  bad.redirect_status = 303;
  CHECK_THAT(store->UpdateLink(bad),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "redirect_status"));
  bad = UpdateOf(link);
  bad.max_clicks = std::optional<int64_t>(0);
  CHECK_THAT(store->UpdateLink(bad),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "max_clicks"));
  bad = UpdateOf(link);
  bad.labels = Labels{{"Bad", "x"}};
  CHECK_THAT(store->UpdateLink(bad),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "labels"));
  bad = UpdateOf(link);
  bad.long_url = "https://example.com/no-hash";
  CHECK_THAT(store->UpdateLink(bad), HasCode(absl::StatusCode::kInvalidArgument));
  bad = UpdateOf(link);
  SetUrl(bad, std::string("https://example.com/\0nul", 24));
  CHECK_THAT(store->UpdateLink(bad), HasCode(absl::StatusCode::kInvalidArgument));
  bad = UpdateOf(link);
  bad.id = NextId();
  bad.redirect_status = 301;
  CHECK_THAT(store->UpdateLink(bad), HasCode(absl::StatusCode::kNotFound));
  CHECK(store->LinkHistory(link.id)->empty());
  CHECK(store->GetById(link.id)->redirect_status == 302);

  REQUIRE_THAT(store->Revoke(link.id, T0() + absl::Minutes(5), "code"), IsOk());
  LinkUpdate late = UpdateOf(link);
  late.redirect_status = 301;
  CHECK_THAT(store->UpdateLink(late),
             HasCodeAndMessage(absl::StatusCode::kFailedPrecondition, "revoked"));
  CHECK(store->LinkHistory(NextId())->empty());
}

TEST_CASE("UpdateLink moves the dedupe key with the URL and labels, unless another link holds it",
          "[lib/store][update][contract]") {
  auto store = NewContractStore();
  const std::string owner = UniqueName("dedupe-mover");
  NewLink link = MakeNewLink(owner, "https://example.com/old-target");
  REQUIRE_THAT(CreateOne(*store, link), IsOk());
  LinkUpdate move = UpdateOf(link);
  SetUrl(move, "https://example.com/new-target");
  REQUIRE_THAT(store->UpdateLink(move), IsOk());

  // The new URL de-duplicates to the link; the old one makes a new link.
  auto again = CreateOne(*store, MakeNewLink(owner, "https://example.com/new-target"));
  REQUIRE_THAT(again, IsOk());
  CHECK_FALSE(again->created);
  CHECK(again->link.id == link.id);
  auto old = CreateOne(*store, MakeNewLink(owner, "https://example.com/old-target"));
  REQUIRE_THAT(old, IsOk());
  CHECK(old->created);

  // Moving onto a URL another live link de-duplicates to: that one keeps
  // the key, this one has none (a new copy of its old URL is a new link).
  LinkUpdate onto = UpdateOf(link, T0() + absl::Hours(3));
  SetUrl(onto, "https://example.com/old-target");
  REQUIRE_THAT(store->UpdateLink(onto), IsOk());
  auto held = CreateOne(*store, MakeNewLink(owner, "https://example.com/old-target"));
  REQUIRE_THAT(held, IsOk());
  CHECK(held->link.id == old->link.id);
  auto released = CreateOne(*store, MakeNewLink(owner, "https://example.com/new-target"));
  REQUIRE_THAT(released, IsOk());
  CHECK(released->created);

  // New labels: the key follows them too.
  NewLink plain = MakeNewLink(owner, "https://example.com/labelled-later");
  REQUIRE_THAT(CreateOne(*store, plain), IsOk());
  LinkUpdate label = UpdateOf(plain);
  label.labels = Labels{{"campaign", "x"}};
  REQUIRE_THAT(store->UpdateLink(label), IsOk());
  NewLink with_label = MakeNewLink(owner, "https://example.com/labelled-later");
  with_label.labels = {{"campaign", "x"}};
  auto labelled = CreateOne(*store, with_label);
  REQUIRE_THAT(labelled, IsOk());
  CHECK(labelled->link.id == plain.id);
  // A budget ends its part in de-duplication.
  LinkUpdate budget = UpdateOf(plain, T0() + absl::Hours(4));
  budget.max_clicks = std::optional<int64_t>(10);
  REQUIRE_THAT(store->UpdateLink(budget), IsOk());
  auto after_budget = CreateOne(*store, with_label);
  REQUIRE_THAT(after_budget, IsOk());
  CHECK(after_budget->created);
}

TEST_CASE("UpdateLink judges a changed click budget against the clicks counted",
          "[lib/store][update][contract]") {
  auto store = NewContractStore();
  const std::string owner = UniqueName("budget");
  NewLink link = MakeNewLink(owner, "https://example.com/budget");
  link.max_clicks = 100;
  REQUIRE_THAT(CreateOne(*store, link), IsOk());
  SetCountedClicks(*store, link.id, 7);

  LinkUpdate lower = UpdateOf(link);
  lower.max_clicks = std::optional<int64_t>(5);
  absl::StatusOr<Link> exhausted = store->UpdateLink(lower);
  REQUIRE_THAT(exhausted, IsOk());
  REQUIRE(exhausted->clicks_exhausted_time.has_value());
  CHECK(*exhausted->clicks_exhausted_time ==
        absl::FromUnixMicros(absl::ToUnixMicros(T0() + absl::Hours(1))));
  // Still exhausted at 6: since the first time.
  LinkUpdate six = UpdateOf(link, T0() + absl::Hours(2));
  six.max_clicks = std::optional<int64_t>(6);
  absl::StatusOr<Link> still = store->UpdateLink(six);
  REQUIRE_THAT(still, IsOk());
  CHECK(still->clicks_exhausted_time == exhausted->clicks_exhausted_time);
  // Raised above the count: live again; unlimited likewise.
  LinkUpdate raise = UpdateOf(link, T0() + absl::Hours(3));
  raise.max_clicks = std::optional<int64_t>(8);
  absl::StatusOr<Link> live = store->UpdateLink(raise);
  REQUIRE_THAT(live, IsOk());
  CHECK_FALSE(live->clicks_exhausted_time.has_value());
  CHECK(store->GetById(link.id)->max_clicks == 8);
  LinkUpdate unlimited = UpdateOf(link, T0() + absl::Hours(4));
  unlimited.max_clicks = std::optional<int64_t>();
  absl::StatusOr<Link> free = store->UpdateLink(unlimited);
  REQUIRE_THAT(free, IsOk());
  CHECK_FALSE(free->max_clicks.has_value());
  CHECK_FALSE(free->clicks_exhausted_time.has_value());
  CHECK(store->LinkHistory(link.id)->size() == 4);
  CHECK(store->LinkHistory(link.id)->back().fields ==
        std::vector<FieldChange>{{"max_clicks", "8", ""}});
}

}  // namespace
}  // namespace shortener::store::testing
