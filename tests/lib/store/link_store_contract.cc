// The LinkStore contract, part 1: test data helpers; creation, reads and
// dedupe. Every implementation passes these cases.
#include "tests/lib/store/link_store_contract.h"

#include <openssl/sha.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/support/status_matchers.h"

namespace shortener::store::testing {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

absl::Time T0() { return absl::FromUnixNanos(1'700'000'000'123'456'789); }

int64_t NextId() {
  static std::atomic<int64_t> next{1'000'000};
  return next.fetch_add(1);
}

std::string UniqueName(absl::string_view prefix) {
  static std::atomic<int64_t> next{1};
  return absl::StrCat(prefix, "-", next.fetch_add(1));
}

std::string Sha256(absl::string_view text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  return std::string(reinterpret_cast<const char*>(digest), sizeof(digest));
}

NewLink MakeNewLink(const std::string& owner, const std::string& long_url) {
  NewLink link;
  link.id = NextId();
  link.long_url = long_url;
  link.long_url_sha256 = Sha256(long_url);
  link.owner = owner;
  link.create_time = T0();
  return link;
}

std::vector<absl::StatusOr<CreateOutcome>> Create(LinkStore& store, std::vector<NewLink> links) {
  return store.CreateLinks(links);
}

absl::StatusOr<CreateOutcome> CreateOne(LinkStore& store, NewLink link) {
  auto r = store.CreateLinks({&link, 1});
  REQUIRE(r.size() == 1);
  return r[0];
}

void CheckSameLink(const Link& got, const Link& want) {
  CHECK(got.id == want.id);
  CHECK(got.alias == want.alias);
  CHECK(got.long_url == want.long_url);
  CHECK(got.owner == want.owner);
  CHECK(got.redirect_status == want.redirect_status);
  CHECK(got.create_time == want.create_time);
  CHECK(got.expire_time == want.expire_time);
  CHECK(got.revoke_time == want.revoke_time);
  CHECK(got.max_clicks == want.max_clicks);
  CHECK(got.clicks_exhausted_time == want.clicks_exhausted_time);
  CHECK(got.labels == want.labels);
}

namespace {

TEST_CASE("created links read back by id and by alias", "[lib/store][contract]") {
  auto store = NewContractStore();
  std::string owner = UniqueName("owner");
  NewLink plain = MakeNewLink(owner, "https://example.com/plain");
  NewLink vanity = MakeNewLink(owner, "https://example.com/vanity");
  vanity.alias = UniqueName("spring-sale");
  vanity.redirect_status = 301;
  vanity.expire_time = T0() + absl::Hours(24);

  auto r = Create(*store, {plain, vanity});
  REQUIRE(r.size() == 2);
  REQUIRE_THAT(r[0], IsOk());
  REQUIRE_THAT(r[1], IsOk());
  CHECK(r[0]->created);
  CHECK(r[1]->created);
  CHECK(r[0]->link.id == plain.id);
  CHECK_FALSE(r[0]->link.alias.has_value());
  CHECK(r[1]->link.alias == vanity.alias);
  CHECK(r[1]->link.redirect_status == 301);

  absl::StatusOr<Link> by_id = store->GetById(plain.id);
  REQUIRE_THAT(by_id, IsOk());
  CheckSameLink(*by_id, r[0]->link);
  absl::StatusOr<Link> by_alias = store->GetByAlias(*vanity.alias);
  REQUIRE_THAT(by_alias, IsOk());
  CheckSameLink(*by_alias, r[1]->link);
}

TEST_CASE("times round-trip at microsecond precision and no expire_time stays none",
          "[lib/store][contract]") {
  auto store = NewContractStore();
  NewLink a = MakeNewLink(UniqueName("owner"), "https://example.com/t");
  a.expire_time = T0() + absl::Hours(24);
  NewLink b = MakeNewLink(UniqueName("owner"), "https://example.com/t");
  auto r = Create(*store, {a, b});
  REQUIRE_THAT(r[0], IsOk());
  REQUIRE_THAT(r[1], IsOk());

  absl::StatusOr<Link> got = store->GetById(a.id);
  REQUIRE_THAT(got, IsOk());
  CHECK(got->create_time == absl::FromUnixMicros(1'700'000'000'123'456));
  CHECK(got->expire_time == absl::FromUnixMicros(1'700'086'400'123'456));
  CHECK_FALSE(got->revoke_time.has_value());
  CheckSameLink(*got, r[0]->link);
  absl::StatusOr<Link> none = store->GetById(b.id);
  REQUIRE_THAT(none, IsOk());
  CHECK_FALSE(none->expire_time.has_value());
}

TEST_CASE("dedupe returns the owner's live link and another owner gets a new one",
          "[lib/store][contract]") {
  auto store = NewContractStore();
  std::string alice = UniqueName("alice"), bob = UniqueName("bob");
  auto first = CreateOne(*store, MakeNewLink(alice, "https://example.com/d"));
  auto again = CreateOne(*store, MakeNewLink(alice, "https://example.com/d"));
  auto other = CreateOne(*store, MakeNewLink(bob, "https://example.com/d"));
  REQUIRE_THAT(first, IsOk());
  REQUIRE_THAT(again, IsOk());
  REQUIRE_THAT(other, IsOk());
  CHECK(first->created);
  CHECK_FALSE(again->created);
  CHECK(again->link.id == first->link.id);
  CHECK(other->created);
  CHECK(other->link.id != first->link.id);
}

TEST_CASE("dedupe=false (force_new) makes a new link every time", "[lib/store][contract]") {
  auto store = NewContractStore();
  std::string owner = UniqueName("owner");
  auto first = CreateOne(*store, MakeNewLink(owner, "https://example.com/f"));
  NewLink forced = MakeNewLink(owner, "https://example.com/f");
  forced.dedupe = false;
  auto second = CreateOne(*store, forced);
  REQUIRE_THAT(first, IsOk());
  REQUIRE_THAT(second, IsOk());
  CHECK(second->created);
  CHECK(second->link.id == forced.id);
  // A forced link does not replace the dedupe target.
  auto third = CreateOne(*store, MakeNewLink(owner, "https://example.com/f"));
  REQUIRE_THAT(third, IsOk());
  CHECK(third->link.id == first->link.id);
}

TEST_CASE("dedupe skips a revoked link and then returns its replacement", "[lib/store][contract]") {
  auto store = NewContractStore();
  std::string owner = UniqueName("owner");
  auto first = CreateOne(*store, MakeNewLink(owner, "https://example.com/r"));
  REQUIRE_THAT(first, IsOk());
  REQUIRE_THAT(store->Revoke(first->link.id, T0() + absl::Minutes(1), "code"), IsOk());
  NewLink next = MakeNewLink(owner, "https://example.com/r");
  auto second = CreateOne(*store, next);
  REQUIRE_THAT(second, IsOk());
  CHECK(second->created);
  CHECK(second->link.id == next.id);
  auto third = CreateOne(*store, MakeNewLink(owner, "https://example.com/r"));
  REQUIRE_THAT(third, IsOk());
  CHECK_FALSE(third->created);
  CHECK(third->link.id == next.id);
}

TEST_CASE("dedupe skips a link expired at the new item's create_time", "[lib/store][contract]") {
  auto store = NewContractStore();
  std::string owner = UniqueName("owner");
  NewLink short_lived = MakeNewLink(owner, "https://example.com/e");
  short_lived.expire_time = T0() + absl::Hours(1);
  REQUIRE_THAT(CreateOne(*store, short_lived), IsOk());

  NewLink before = MakeNewLink(owner, "https://example.com/e");
  before.create_time = T0() + absl::Minutes(59);
  auto still_live = CreateOne(*store, before);
  REQUIRE_THAT(still_live, IsOk());
  CHECK(still_live->link.id == short_lived.id);

  NewLink at_expiry = MakeNewLink(owner, "https://example.com/e");
  at_expiry.create_time = T0() + absl::Hours(1);
  auto expired = CreateOne(*store, at_expiry);
  REQUIRE_THAT(expired, IsOk());
  CHECK(expired->created);
  CHECK(expired->link.id == at_expiry.id);
}

TEST_CASE("within one batch a target expired at a later item's create_time is replaced",
          "[lib/store][contract]") {
  auto store = NewContractStore();
  std::string owner = UniqueName("owner");
  const std::string url = "https://example.com/eb";
  NewLink short_lived = MakeNewLink(owner, url);
  short_lived.expire_time = T0() + absl::Hours(1);
  NewLink live_copy = MakeNewLink(owner, url);
  live_copy.create_time = T0() + absl::Minutes(59);
  NewLink at_expiry = MakeNewLink(owner, url);
  at_expiry.create_time = T0() + absl::Hours(1);
  NewLink after = MakeNewLink(owner, url);
  after.create_time = T0() + absl::Hours(2);

  auto r = Create(*store, {short_lived, live_copy, at_expiry, after});
  REQUIRE(r.size() == 4);
  for (const auto& result : r) REQUIRE_THAT(result, IsOk());
  CHECK(r[0]->created);
  CHECK_FALSE(r[1]->created);
  CHECK(r[1]->link.id == short_lived.id);
  CHECK(r[2]->created);
  CHECK(r[2]->link.id == at_expiry.id);
  CHECK_FALSE(r[3]->created);
  CHECK(r[3]->link.id == at_expiry.id);
  CHECK_THAT(store->GetById(live_copy.id), HasCode(absl::StatusCode::kNotFound));

  // The stored key names the replacement, not the expired link.
  NewLink next_batch = MakeNewLink(owner, url);
  next_batch.create_time = T0() + absl::Hours(3);
  auto again = CreateOne(*store, next_batch);
  REQUIRE_THAT(again, IsOk());
  CHECK_FALSE(again->created);
  CHECK(again->link.id == at_expiry.id);
}

TEST_CASE("links with an alias neither dedupe nor are returned by dedupe",
          "[lib/store][contract]") {
  auto store = NewContractStore();
  std::string owner = UniqueName("owner");
  auto plain = CreateOne(*store, MakeNewLink(owner, "https://example.com/a"));
  NewLink vanity = MakeNewLink(owner, "https://example.com/a");
  vanity.alias = UniqueName("vanity");
  auto aliased = CreateOne(*store, vanity);
  REQUIRE_THAT(plain, IsOk());
  REQUIRE_THAT(aliased, IsOk());
  CHECK(aliased->created);
  CHECK(aliased->link.alias == vanity.alias);

  std::string owner2 = UniqueName("owner");
  NewLink vanity2 = MakeNewLink(owner2, "https://example.com/a");
  vanity2.alias = UniqueName("vanity");
  REQUIRE_THAT(CreateOne(*store, vanity2), IsOk());
  auto plain2 = CreateOne(*store, MakeNewLink(owner2, "https://example.com/a"));
  REQUIRE_THAT(plain2, IsOk());
  CHECK(plain2->created);
}

TEST_CASE("a click budget round-trips and such links neither dedupe nor are returned by dedupe",
          "[lib/store][contract]") {
  auto store = NewContractStore();
  std::string owner = UniqueName("owner");
  auto plain = CreateOne(*store, MakeNewLink(owner, "https://example.com/budget"));
  NewLink limited = MakeNewLink(owner, "https://example.com/budget");
  limited.max_clicks = 1000;
  NewLink other_limit = limited;
  other_limit.id = NextId();
  other_limit.max_clicks = 5;
  auto r = Create(*store, {limited, other_limit});
  REQUIRE_THAT(plain, IsOk());
  REQUIRE_THAT(r[0], IsOk());
  REQUIRE_THAT(r[1], IsOk());
  // Neither takes the plain link, nor each other's: every budget is its own.
  CHECK(r[0]->created);
  CHECK(r[1]->created);
  CHECK(r[0]->link.max_clicks == 1000);
  CHECK(r[1]->link.max_clicks == 5);
  CHECK_FALSE(plain->link.max_clicks.has_value());
  absl::StatusOr<Link> got = store->GetById(limited.id);
  REQUIRE_THAT(got, IsOk());
  CHECK(got->max_clicks == 1000);
  CHECK_FALSE(got->clicks_exhausted_time.has_value());
  CheckSameLink(*got, r[0]->link);

  // A plain request still gets the plain link, not a limited one.
  std::string owner2 = UniqueName("owner");
  NewLink first_limited = MakeNewLink(owner2, "https://example.com/budget2");
  first_limited.max_clicks = 3;
  REQUIRE_THAT(CreateOne(*store, first_limited), IsOk());
  auto plain2 = CreateOne(*store, MakeNewLink(owner2, "https://example.com/budget2"));
  REQUIRE_THAT(plain2, IsOk());
  CHECK(plain2->created);
  CHECK_FALSE(plain2->link.max_clicks.has_value());
}

}  // namespace
}  // namespace shortener::store::testing
