// The LinkStore contract, part 2: idempotency keys, aliases, duplicates
// within a batch, revocation, look-ups, invalid input, atomicity.
#include <catch2/catch.hpp>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/lib/store/link_store_contract.h"
#include "tests/support/status_matchers.h"

namespace shortener::store::testing {
namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;
using Results = std::vector<absl::StatusOr<CreateOutcome>>;

TEST_CASE("a request_id replay returns the first link, even with dedupe=false",
          "[lib/store][contract]") {
  auto store = NewContractStore();
  std::string owner = UniqueName("owner");
  NewLink first = MakeNewLink(owner, "https://example.com/q");
  first.request_id = "req-1";
  first.dedupe = false;
  NewLink retry = MakeNewLink(owner, "https://example.com/q");
  retry.request_id = "req-1";
  retry.dedupe = false;
  auto a = CreateOne(*store, first);
  auto b = CreateOne(*store, retry);
  REQUIRE_THAT(a, IsOk());
  REQUIRE_THAT(b, IsOk());
  CHECK(a->created);
  CHECK_FALSE(b->created);
  CHECK(b->link.id == first.id);
  REQUIRE_THAT(store->GetById(retry.id), HasCode(absl::StatusCode::kNotFound));
}

TEST_CASE("a request_id answered by dedupe replays to the deduped link", "[lib/store][contract]") {
  auto store = NewContractStore();
  std::string owner = UniqueName("owner");
  auto existing = CreateOne(*store, MakeNewLink(owner, "https://example.com/x"));
  NewLink req = MakeNewLink(owner, "https://example.com/x");
  req.request_id = "req-x";
  auto deduped = CreateOne(*store, req);
  REQUIRE_THAT(existing, IsOk());
  REQUIRE_THAT(deduped, IsOk());
  CHECK(deduped->link.id == existing->link.id);
  REQUIRE_THAT(store->Revoke(existing->link.id, T0(), "code"), IsOk());
  NewLink retry = MakeNewLink(owner, "https://example.com/x");
  retry.request_id = "req-x";
  auto replay = CreateOne(*store, retry);
  REQUIRE_THAT(replay, IsOk());
  CHECK_FALSE(replay->created);
  CHECK(replay->link.id == existing->link.id);  // the replay wins over dedupe
  CHECK(replay->link.revoke_time.has_value());
}

TEST_CASE("a request_id reused with a different long_url is ALREADY_EXISTS",
          "[lib/store][contract]") {
  auto store = NewContractStore();
  std::string owner = UniqueName("owner");
  NewLink first = MakeNewLink(owner, "https://example.com/1");
  first.request_id = "req-2";
  NewLink other = MakeNewLink(owner, "https://example.com/2");
  other.request_id = "req-2";
  REQUIRE_THAT(CreateOne(*store, first), IsOk());
  REQUIRE_THAT(
      CreateOne(*store, other),
      HasCodeAndMessage(absl::StatusCode::kAlreadyExists,
                        "request_id \"req-2\" was already used with a different long_url"));
}

TEST_CASE("different owners may use the same request_id", "[lib/store][contract]") {
  auto store = NewContractStore();
  NewLink a = MakeNewLink(UniqueName("owner"), "https://example.com/1");
  NewLink b = MakeNewLink(UniqueName("owner"), "https://example.com/2");
  a.request_id = b.request_id = "shared";
  auto ra = CreateOne(*store, a);
  auto rb = CreateOne(*store, b);
  REQUIRE_THAT(ra, IsOk());
  REQUIRE_THAT(rb, IsOk());
  CHECK(ra->created);
  CHECK(rb->created);
  CHECK(rb->link.id == b.id);
}

TEST_CASE("a taken alias is ALREADY_EXISTS naming it while the rest of the batch succeeds",
          "[lib/store][contract]") {
  auto store = NewContractStore();
  std::string owner = UniqueName("owner");
  std::string alias = UniqueName("taken");
  NewLink first = MakeNewLink(owner, "https://example.com/1");
  first.alias = alias;
  REQUIRE_THAT(CreateOne(*store, first), IsOk());

  NewLink clash = MakeNewLink(UniqueName("owner"), "https://example.com/2");
  clash.alias = alias;
  clash.request_id = "req-clash";
  NewLink fine = MakeNewLink(owner, "https://example.com/3");
  Results r = Create(*store, {fine, clash, MakeNewLink(owner, "https://example.com/4")});
  REQUIRE(r.size() == 3);
  CHECK_THAT(r[0], IsOk());
  CHECK_THAT(r[1],
             HasCodeAndMessage(absl::StatusCode::kAlreadyExists,
                               absl::StrCat("custom_alias \"", alias, "\" is already taken")));
  CHECK_THAT(r[2], IsOk());
  CHECK_THAT(store->GetById(clash.id), HasCode(absl::StatusCode::kNotFound));
  // The failed item's request_id was not recorded: a retry may succeed.
  clash.alias = UniqueName("free");
  auto retry = CreateOne(*store, clash);
  REQUIRE_THAT(retry, IsOk());
  CHECK(retry->created);
}

TEST_CASE("duplicates within one batch behave as if created one after the other",
          "[lib/store][contract]") {
  auto store = NewContractStore();
  std::string owner = UniqueName("owner");
  std::string alias = UniqueName("twice");
  NewLink alias1 = MakeNewLink(owner, "https://example.com/a1");
  NewLink alias2 = MakeNewLink(owner, "https://example.com/a2");
  alias1.alias = alias2.alias = alias;
  NewLink dedupe1 = MakeNewLink(owner, "https://example.com/d");
  NewLink dedupe2 = MakeNewLink(owner, "https://example.com/d");
  NewLink req1 = MakeNewLink(owner, "https://example.com/r");
  NewLink req2 = MakeNewLink(owner, "https://example.com/r");
  NewLink req3 = MakeNewLink(owner, "https://example.com/other");
  req1.request_id = req2.request_id = req3.request_id = "req-dup";
  req1.dedupe = req2.dedupe = false;

  Results r = Create(*store, {alias1, dedupe1, req1, alias2, dedupe2, req2, req3});
  REQUIRE(r.size() == 7);
  REQUIRE_THAT(r[0], IsOk());
  CHECK(r[0]->created);
  CHECK_THAT(r[3], HasCode(absl::StatusCode::kAlreadyExists));
  REQUIRE_THAT(r[1], IsOk());
  REQUIRE_THAT(r[4], IsOk());
  CHECK(r[1]->created);
  CHECK_FALSE(r[4]->created);
  CHECK(r[4]->link.id == dedupe1.id);
  REQUIRE_THAT(r[2], IsOk());
  REQUIRE_THAT(r[5], IsOk());
  CHECK(r[2]->created);
  CHECK_FALSE(r[5]->created);
  CHECK(r[5]->link.id == req1.id);
  CHECK_THAT(r[6], HasCode(absl::StatusCode::kAlreadyExists));
  CHECK_THAT(store->GetById(dedupe2.id), HasCode(absl::StatusCode::kNotFound));
}

TEST_CASE("Revoke is idempotent and keeps the first revoke_time", "[lib/store][contract]") {
  auto store = NewContractStore();
  NewLink link = MakeNewLink(UniqueName("owner"), "https://example.com/rv");
  REQUIRE_THAT(CreateOne(*store, link), IsOk());
  absl::StatusOr<Link> first = store->Revoke(link.id, T0() + absl::Seconds(10), "code");
  REQUIRE_THAT(first, IsOk());
  CHECK(first->revoke_time == absl::FromUnixMicros(1'700'000'010'123'456));
  absl::StatusOr<Link> second = store->Revoke(link.id, T0() + absl::Hours(5), "code");
  REQUIRE_THAT(second, IsOk());
  CHECK(second->revoke_time == first->revoke_time);
  absl::StatusOr<Link> read = store->GetById(link.id);
  REQUIRE_THAT(read, IsOk());
  CHECK(read->revoke_time == first->revoke_time);
}

TEST_CASE("unknown ids and aliases are NOT_FOUND", "[lib/store][contract]") {
  auto store = NewContractStore();
  int64_t id = NextId();
  CHECK_THAT(store->GetById(id),
             HasCodeAndMessage(absl::StatusCode::kNotFound, absl::StrCat("no link with id ", id)));
  CHECK_THAT(store->Revoke(id, T0(), "code"), HasCode(absl::StatusCode::kNotFound));
  CHECK_THAT(
      store->GetByAlias("no-such-alias"),
      HasCodeAndMessage(absl::StatusCode::kNotFound, "no link with alias \"no-such-alias\""));
}

TEST_CASE("GetByIds answers present and absent ids in input order", "[lib/store][contract]") {
  auto store = NewContractStore();
  std::string owner = UniqueName("owner");
  NewLink a = MakeNewLink(owner, "https://example.com/g1");
  NewLink b = MakeNewLink(owner, "https://example.com/g2");
  REQUIRE_THAT(Create(*store, {a, b})[1], IsOk());
  int64_t missing = NextId();
  std::vector<int64_t> ids = {b.id, missing, a.id, b.id};
  auto got = store->GetByIds(ids);
  REQUIRE_THAT(got, IsOk());
  REQUIRE(got->size() == 4);
  REQUIRE_THAT((*got)[0], IsOk());
  CHECK((*got)[0]->id == b.id);
  CHECK_THAT((*got)[1], HasCode(absl::StatusCode::kNotFound));
  REQUIRE_THAT((*got)[2], IsOk());
  CHECK((*got)[2]->long_url == a.long_url);
  REQUIRE_THAT((*got)[3], IsOk());
  auto empty = store->GetByIds({});
  REQUIRE_THAT(empty, IsOk());
  CHECK(empty->empty());
}

TEST_CASE("GetByAliases answers present, absent and impossible aliases in input order",
          "[lib/store][contract]") {
  auto store = NewContractStore();
  std::string owner = UniqueName("owner");
  NewLink a = MakeNewLink(owner, "https://example.com/ga1");
  a.alias = UniqueName("ga-one");
  NewLink b = MakeNewLink(owner, "https://example.com/ga2");
  b.alias = UniqueName("ga-two");
  // An array element's quoting must not matter to the look-up.
  NewLink odd = MakeNewLink(owner, "https://example.com/ga3");
  odd.alias = UniqueName("ga,\"{odd}\\ NULL");
  NewLink plain = MakeNewLink(owner, "https://example.com/ga4");
  auto created = Create(*store, {a, b, odd, plain});
  for (const auto& r : created) REQUIRE_THAT(r, IsOk());
  const std::string missing = UniqueName("ga-missing");
  // Text no alias can be (invalid UTF-8, a NUL byte) is NOT_FOUND like any
  // other unknown alias, and fails nothing else of the call.
  const std::string not_utf8 = "ga-\xff";
  const std::string nul("ga\0x", 4);
  std::vector<std::string> aliases = {*b.alias,   missing, *a.alias, not_utf8,
                                      *odd.alias, nul,     *b.alias};
  auto got = store->GetByAliases(aliases);
  REQUIRE_THAT(got, IsOk());
  REQUIRE(got->size() == aliases.size());
  REQUIRE_THAT((*got)[0], IsOk());
  CheckSameLink(*(*got)[0], created[1]->link);
  CHECK_THAT((*got)[1], HasCodeAndMessage(absl::StatusCode::kNotFound,
                                          absl::StrCat("no link with alias \"", missing, "\"")));
  REQUIRE_THAT((*got)[2], IsOk());
  CheckSameLink(*(*got)[2], created[0]->link);
  CHECK_THAT((*got)[3],
             HasCodeAndMessage(absl::StatusCode::kNotFound, "no link with alias \"ga-\\xff\""));
  REQUIRE_THAT((*got)[4], IsOk());
  CHECK((*got)[4]->id == odd.id);
  CHECK_THAT((*got)[5], HasCode(absl::StatusCode::kNotFound));
  REQUIRE_THAT((*got)[6], IsOk());
  CHECK((*got)[6]->id == b.id);
  // A link's id is not its alias, nor is a link without one found by any.
  auto none = store->GetByAliases({std::to_string(plain.id)});
  REQUIRE_THAT(none, IsOk());
  CHECK_THAT((*none)[0], HasCode(absl::StatusCode::kNotFound));
  auto empty = store->GetByAliases({});
  REQUIRE_THAT(empty, IsOk());
  CHECK(empty->empty());
}

TEST_CASE("invalid items are INVALID_ARGUMENT without failing the batch", "[lib/store][contract]") {
  auto store = NewContractStore();
  std::string owner = UniqueName("owner");
  NewLink bad_hash = MakeNewLink(owner, "https://example.com/1");
  bad_hash.long_url_sha256 = "short";
  NewLink bad_status = MakeNewLink(owner, "https://example.com/2");
  bad_status.redirect_status = 200;
  NewLink nul = MakeNewLink(owner, "https://example.com/3");
  nul.request_id = std::string("a\0b", 3);
  NewLink bad_utf8 = MakeNewLink(owner, "https://example.com/\xff");
  NewLink no_budget = MakeNewLink(owner, "https://example.com/6");
  no_budget.max_clicks = 0;
  NewLink good = MakeNewLink(owner, "https://example.com/5");
  Results r = Create(*store, {bad_hash, bad_status, nul, bad_utf8, no_budget, good});
  CHECK_THAT(r[0], HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "long_url_sha256"));
  CHECK_THAT(r[1], HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "redirect_status"));
  CHECK_THAT(r[2], HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "request_id"));
  CHECK_THAT(r[3], HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "long_url"));
  CHECK_THAT(r[4], HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "max_clicks"));
  CHECK_THAT(r[5], IsOk());
}

TEST_CASE("a link id that exists already fails the whole batch and stores nothing",
          "[lib/store][contract]") {
  auto store = NewContractStore();
  std::string owner = UniqueName("owner");
  NewLink first = MakeNewLink(owner, "https://example.com/1");
  REQUIRE_THAT(CreateOne(*store, first), IsOk());
  NewLink innocent = MakeNewLink(owner, "https://example.com/2");
  NewLink reused = MakeNewLink(owner, "https://example.com/3");
  reused.id = first.id;
  Results r = Create(*store, {innocent, reused});
  CHECK_THAT(r[0], HasCode(absl::StatusCode::kInternal));
  CHECK_THAT(r[1], HasCode(absl::StatusCode::kInternal));
  CHECK_THAT(store->GetById(innocent.id), HasCode(absl::StatusCode::kNotFound));
  CHECK(store->CreateLinks({}).empty());
}

TEST_CASE(
    "text with quotes and backslashes and braces and tabs and newlines and non-ASCII round-trips",
    "[lib/store][contract]") {
  auto store = NewContractStore();
  // Array literals quote '"', '\\', ',' and braces; COPY's text format
  // escapes '\\', tab, newline and carriage return, and reads \N as NULL.
  std::string owner = UniqueName("o\"w,n{e}r\\ NULL\t\\N\r\n");
  NewLink odd = MakeNewLink(owner, "https://example.com/p?q=\"a,b\"&r={c}\\d \xc3\xa9\xe2\x82\xac");
  odd.request_id = "NULL\t\\N\n";
  NewLink empty_req = MakeNewLink(owner, "https://example.com/");
  empty_req.request_id = "";
  Results r = Create(*store, {odd, empty_req});
  REQUIRE_THAT(r[0], IsOk());
  REQUIRE_THAT(r[1], IsOk());
  absl::StatusOr<Link> got = store->GetById(odd.id);
  REQUIRE_THAT(got, IsOk());
  CHECK(got->owner == owner);
  CHECK(got->long_url == odd.long_url);
  auto replay = CreateOne(*store, odd);
  REQUIRE_THAT(replay, IsOk());
  CHECK_FALSE(replay->created);
  CHECK(replay->link.id == odd.id);
}

}  // namespace
}  // namespace shortener::store::testing
