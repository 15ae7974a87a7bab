// The LinkStore contract, part 6: DeleteLinks, RevokeLinks and the erasure
// bookkeeping (issue 21, item 3). Every implementation passes these cases.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "lib/store/link_deletion.h"
#include "lib/store/link_list.h"
#include "tests/lib/store/link_store_contract.h"
#include "tests/support/status_matchers.h"

namespace shortener::store::testing {
namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

LinkRef RefOf(const NewLink& link) { return LinkRef{link.id, "code-" + std::to_string(link.id)}; }

LinkDeletion DeletionOf(std::vector<NewLink> links, absl::Time when = T0() + absl::Hours(1)) {
  LinkDeletion deletion;
  for (const NewLink& link : links) deletion.links.push_back(RefOf(link));
  deletion.when = when;
  deletion.actor = "tester (api key 1)";
  deletion.alias_release_time = when + absl::Hours(24);
  return deletion;
}

std::vector<int64_t> IdsOf(const std::vector<Link>& links) {
  std::vector<int64_t> ids;
  for (const Link& link : links) ids.push_back(link.id);
  return ids;
}

bool Contains(const std::vector<int64_t>& ids, int64_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

TEST_CASE("DeleteLinks removes links from every read and returns them once",
          "[lib/store][delete][contract]") {
  auto store = NewContractStore();
  const std::string owner = UniqueName("deleter");
  NewLink plain = MakeNewLink(owner, "https://example.com/delete/plain");
  plain.labels = {{"campaign", "gone"}};
  NewLink vanity = MakeNewLink(owner, "https://example.com/delete/vanity");
  vanity.alias = UniqueName("doomed");
  NewLink kept = MakeNewLink(owner, "https://example.com/delete/kept");
  kept.labels = {{"campaign", "gone"}};
  for (const auto& r : Create(*store, {plain, vanity, kept})) REQUIRE_THAT(r, IsOk());
  LinkUpdate change;
  change.id = plain.id;
  change.code = "code";
  change.actor = "tester (api key 1)";
  change.when = T0() + absl::Minutes(1);
  change.redirect_status = 301;
  REQUIRE_THAT(store->UpdateLink(change), IsOk());

  // In the order asked, an unknown id skipped.
  LinkDeletion deletion = DeletionOf({vanity, plain});
  deletion.links.push_back(LinkRef{NextId(), "never-made"});
  absl::StatusOr<std::vector<Link>> deleted = store->DeleteLinks(deletion);
  REQUIRE_THAT(deleted, IsOk());
  CHECK(IdsOf(*deleted) == std::vector<int64_t>{vanity.id, plain.id});
  CHECK((*deleted)[0].alias == vanity.alias);
  CHECK((*deleted)[1].redirect_status == 301);

  CHECK_THAT(store->GetById(plain.id), HasCode(absl::StatusCode::kNotFound));
  CHECK_THAT(store->GetById(vanity.id), HasCode(absl::StatusCode::kNotFound));
  CHECK_THAT(store->GetByAlias(*vanity.alias), HasCode(absl::StatusCode::kNotFound));
  absl::StatusOr<std::vector<absl::StatusOr<Link>>> by_alias = store->GetByAliases({*vanity.alias});
  REQUIRE_THAT(by_alias, IsOk());
  CHECK_THAT((*by_alias)[0], HasCode(absl::StatusCode::kNotFound));
  absl::StatusOr<std::vector<absl::StatusOr<Link>>> by_id = store->GetByIds({plain.id, kept.id});
  REQUIRE_THAT(by_id, IsOk());
  CHECK_THAT((*by_id)[0], HasCode(absl::StatusCode::kNotFound));
  CHECK_THAT((*by_id)[1], IsOk());
  absl::StatusOr<std::vector<LinkChange>> history = store->LinkHistory(plain.id);
  REQUIRE_THAT(history, IsOk());
  CHECK(history->empty());

  // Listed neither among the owner's links nor under its label.
  LinkListQuery query;
  query.owner = owner;
  absl::StatusOr<LinkPage> page = store->ListLinks(query);
  REQUIRE_THAT(page, IsOk());
  REQUIRE(page->links.size() == 1);
  CHECK(page->links[0].id == kept.id);
  absl::StatusOr<int64_t> label = store->FindLabelId(owner, "campaign", "gone");
  REQUIRE_THAT(label, IsOk());
  query.label_ids = {*label};
  page = store->ListLinks(query);
  REQUIRE_THAT(page, IsOk());
  REQUIRE(page->links.size() == 1);
  CHECK(page->links[0].id == kept.id);

  // Deleting again deletes nothing.
  deleted = store->DeleteLinks(DeletionOf({plain, vanity}));
  REQUIRE_THAT(deleted, IsOk());
  CHECK(deleted->empty());
  deleted = store->DeleteLinks(LinkDeletion{});
  REQUIRE_THAT(deleted, IsOk());
  CHECK(deleted->empty());
}

TEST_CASE("a deleted alias stays taken until its release time, then a new link may have it",
          "[lib/store][delete][contract]") {
  auto store = NewContractStore();
  const std::string owner = UniqueName("alias-keeper");
  NewLink old_link = MakeNewLink(owner, "https://example.com/delete/old-alias");
  old_link.alias = UniqueName("stale");
  REQUIRE_THAT(CreateOne(*store, old_link), IsOk());
  LinkDeletion deletion = DeletionOf({old_link});
  REQUIRE_THAT(store->DeleteLinks(deletion), IsOk());

  // Another tenant cannot take it over, nor the owner itself.
  NewLink thief = MakeNewLink(UniqueName("thief"), "https://evil.example/catch");
  thief.alias = old_link.alias;
  CHECK_THAT(CreateOne(*store, thief),
             HasCodeAndMessage(absl::StatusCode::kAlreadyExists,
                               "custom_alias \"" + *old_link.alias + "\" is already taken"));
  // Released only once its time has come, and once erased it is forgotten.
  absl::StatusOr<int64_t> forgotten =
      store->ReleaseDeletedLinks(deletion.alias_release_time - absl::Seconds(1));
  REQUIRE_THAT(forgotten, IsOk());
  thief.id = NextId();
  CHECK_THAT(CreateOne(*store, thief), HasCode(absl::StatusCode::kAlreadyExists));
  REQUIRE_THAT(store->MarkErased({old_link.id}, T0() + absl::Hours(2)), IsOk());
  forgotten = store->ReleaseDeletedLinks(deletion.alias_release_time);
  REQUIRE_THAT(forgotten, IsOk());
  CHECK(*forgotten >= 1);

  NewLink successor = MakeNewLink(owner, "https://example.com/delete/successor");
  successor.alias = old_link.alias;
  absl::StatusOr<CreateOutcome> made = CreateOne(*store, successor);
  REQUIRE_THAT(made, IsOk());
  CHECK(made->created);
  absl::StatusOr<Link> read = store->GetByAlias(*old_link.alias);
  REQUIRE_THAT(read, IsOk());
  CHECK(read->id == successor.id);
  CHECK(read->long_url == "https://example.com/delete/successor");
  // A later release leaves the new link's alias alone.
  REQUIRE_THAT(store->ReleaseDeletedLinks(deletion.alias_release_time + absl::Hours(1)), IsOk());
  CHECK_THAT(store->GetByAlias(*old_link.alias), IsOk());
}

TEST_CASE("after a deletion the same URL makes a new link, and its request_id cannot replay",
          "[lib/store][delete][contract]") {
  auto store = NewContractStore();
  const std::string owner = UniqueName("redo");
  NewLink first = MakeNewLink(owner, "https://example.com/delete/dedupe");
  first.request_id = UniqueName("request");
  REQUIRE_THAT(CreateOne(*store, first), IsOk());
  REQUIRE_THAT(store->DeleteLinks(DeletionOf({first})), IsOk());

  NewLink again = MakeNewLink(owner, first.long_url);
  absl::StatusOr<CreateOutcome> made = CreateOne(*store, again);
  REQUIRE_THAT(made, IsOk());
  CHECK(made->created);
  CHECK(made->link.id == again.id);
  CHECK(made->link.id != first.id);

  NewLink retry = MakeNewLink(owner, first.long_url);
  retry.request_id = first.request_id;
  CHECK_THAT(CreateOne(*store, retry),
             HasCodeAndMessage(absl::StatusCode::kFailedPrecondition,
                               "request_id \"" + *first.request_id +
                                   "\" was used for a link that has since been deleted"));
}

TEST_CASE("deleted links wait to be erased, oldest first, until marked erased",
          "[lib/store][delete][contract]") {
  auto store = NewContractStore();
  const std::string owner = UniqueName("eraser");
  NewLink early = MakeNewLink(owner, "https://example.com/delete/early");
  NewLink late = MakeNewLink(owner, "https://example.com/delete/late");
  for (const auto& r : Create(*store, {early, late})) REQUIRE_THAT(r, IsOk());
  // Deleted long ago, so that they come before other tests' deletions.
  REQUIRE_THAT(store->DeleteLinks(DeletionOf({late}, absl::UnixEpoch() + absl::Hours(2))), IsOk());
  REQUIRE_THAT(store->DeleteLinks(DeletionOf({early}, absl::UnixEpoch() + absl::Hours(1))), IsOk());
  absl::StatusOr<std::vector<int64_t>> waiting = store->LinksToErase(1000000);
  REQUIRE_THAT(waiting, IsOk());
  auto early_at = std::find(waiting->begin(), waiting->end(), early.id);
  auto late_at = std::find(waiting->begin(), waiting->end(), late.id);
  REQUIRE(early_at != waiting->end());
  REQUIRE(late_at != waiting->end());
  CHECK(early_at < late_at);
  absl::StatusOr<std::vector<int64_t>> first = store->LinksToErase(1);
  REQUIRE_THAT(first, IsOk());
  CHECK(first->size() == 1);

  REQUIRE_THAT(store->MarkErased({early.id, NextId()}, T0()), IsOk());
  waiting = store->LinksToErase(1000000);
  REQUIRE_THAT(waiting, IsOk());
  CHECK_FALSE(Contains(*waiting, early.id));
  CHECK(Contains(*waiting, late.id));
  // Erased and without an alias: forgotten; the other stays until erased.
  REQUIRE_THAT(store->ReleaseDeletedLinks(T0()), IsOk());
  waiting = store->LinksToErase(1000000);
  REQUIRE_THAT(waiting, IsOk());
  CHECK(Contains(*waiting, late.id));
  REQUIRE_THAT(store->MarkErased({late.id}, T0()), IsOk());
  waiting = store->LinksToErase(1000000);
  REQUIRE_THAT(waiting, IsOk());
  CHECK_FALSE(Contains(*waiting, late.id));
}

TEST_CASE("RevokeLinks revokes the live links asked for and leaves the others as they were",
          "[lib/store][delete][contract]") {
  auto store = NewContractStore();
  const std::string owner = UniqueName("bulk-revoker");
  std::vector<NewLink> links;
  for (int i = 0; i < 3; ++i) {
    links.push_back(MakeNewLink(owner, "https://example.com/revoke/" + std::to_string(i)));
  }
  for (const auto& r : Create(*store, links)) REQUIRE_THAT(r, IsOk());
  const absl::Time first_time = T0() + absl::Hours(1);
  REQUIRE_THAT(store->Revoke(links[1].id, first_time, "code"), IsOk());

  const absl::Time when = T0() + absl::Hours(2);
  std::vector<LinkRef> refs = {RefOf(links[2]), RefOf(links[1]), LinkRef{NextId(), "absent"},
                               RefOf(links[0])};
  absl::StatusOr<std::vector<Link>> revoked = store->RevokeLinks(refs, when);
  REQUIRE_THAT(revoked, IsOk());
  CHECK(IdsOf(*revoked) == std::vector<int64_t>{links[2].id, links[0].id});
  const absl::Time stored_when = absl::FromUnixMicros(absl::ToUnixMicros(when));
  for (const Link& link : *revoked) CHECK(link.revoke_time == stored_when);
  absl::StatusOr<Link> earlier = store->GetById(links[1].id);
  REQUIRE_THAT(earlier, IsOk());
  CHECK(earlier->revoke_time == absl::FromUnixMicros(absl::ToUnixMicros(first_time)));
  absl::StatusOr<Link> read = store->GetById(links[0].id);
  REQUIRE_THAT(read, IsOk());
  CHECK(read->revoke_time == stored_when);

  revoked = store->RevokeLinks(refs, when + absl::Hours(1));
  REQUIRE_THAT(revoked, IsOk());
  CHECK(revoked->empty());
}

TEST_CASE("RevokeLinks and DeleteLinks refuse more links than one call takes",
          "[lib/store][delete][contract]") {
  auto store = NewContractStore();
  std::vector<LinkRef> refs(kMaxLinksPerChange + 1, LinkRef{NextId(), "c"});
  CHECK_THAT(store->RevokeLinks(refs, T0()),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "revoke links: 1001 links, more than one call takes (1000)"));
  LinkDeletion deletion;
  deletion.links = refs;
  CHECK_THAT(store->DeleteLinks(deletion), HasCode(absl::StatusCode::kInvalidArgument));
  deletion.links = {LinkRef{NextId(), std::string("a\0b", 3)}};
  CHECK_THAT(store->DeleteLinks(deletion), HasCode(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace shortener::store::testing
