// InMemoryLinkStore: the contract suite, plus what only it has (the
// availability switch), plus the planner's text validation.
#include "lib/store/in_memory_link_store.h"

#include <catch2/catch.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lib/store/create_planner.h"
#include "tests/lib/store/link_store_contract.h"
#include "tests/support/status_matchers.h"

namespace shortener::store::testing {

namespace {

// The ranking every contract store reads: link id -> clicks.
std::mutex ranking_mu;
absl::flat_hash_map<int64_t, int64_t>& Ranking() {
  static auto* ranking = new absl::flat_hash_map<int64_t, int64_t>();
  return *ranking;
}

}  // namespace

std::unique_ptr<LinkStore> NewContractStore() {
  auto store = std::make_unique<InMemoryLinkStore>();
  store->SetClickRanking([](int64_t link_id) -> int64_t {
    std::lock_guard<std::mutex> lock(ranking_mu);
    auto it = Ranking().find(link_id);
    return it == Ranking().end() ? 0 : it->second;
  });
  return store;
}

void SetRankedClicks(LinkStore&, int64_t link_id, const std::string&, int64_t human) {
  std::lock_guard<std::mutex> lock(ranking_mu);
  Ranking()[link_id] = human;
}

// InMemoryLinkStore judges budgets by its click ranking too.
void SetCountedClicks(LinkStore& store, int64_t link_id, int64_t human) {
  SetRankedClicks(store, link_id, "", human);
}

namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::IsOk;

TEST_CASE("SetAvailable(false) fails every call with UNAVAILABLE until switched back",
          "[lib/store]") {
  InMemoryLinkStore store;
  NewLink link = MakeNewLink(UniqueName("owner"), "https://example.com/u");
  store.SetAvailable(false);
  std::vector<NewLink> batch = {link, MakeNewLink(UniqueName("owner"), "https://example.com/v")};
  auto results = store.CreateLinks(batch);
  REQUIRE(results.size() == 2);
  CHECK_THAT(results[0], HasCode(absl::StatusCode::kUnavailable));
  CHECK_THAT(results[1], HasCode(absl::StatusCode::kUnavailable));
  CHECK_THAT(store.GetById(link.id), HasCode(absl::StatusCode::kUnavailable));
  CHECK_THAT(store.GetByAlias("x"), HasCode(absl::StatusCode::kUnavailable));
  CHECK_THAT(store.GetByIds(std::vector<int64_t>{link.id}),
             HasCode(absl::StatusCode::kUnavailable));
  CHECK_THAT(store.Revoke(link.id, T0(), "code"), HasCode(absl::StatusCode::kUnavailable));
  CHECK(store.LinkCount() == 0);

  store.SetAvailable(true);
  REQUIRE_THAT(store.CreateLinks({&link, 1})[0], IsOk());
  CHECK_THAT(store.GetById(link.id), IsOk());
  CHECK(store.LinkCount() == 1);
}

TEST_CASE("Revoke tells the revocation observer the code once, not for a repeated revoke",
          "[lib/store]") {
  InMemoryLinkStore store;
  std::vector<std::string> notified;
  store.SetRevocationObserver([&notified](const std::string& code) { notified.push_back(code); });
  NewLink link = MakeNewLink(UniqueName("owner"), "https://example.com/observed");
  REQUIRE_THAT(store.CreateLinks({&link, 1})[0], IsOk());
  REQUIRE_THAT(store.Revoke(link.id, T0(), "Abc1234"), IsOk());
  REQUIRE_THAT(store.Revoke(link.id, T0() + absl::Seconds(1), "Abc1234"), IsOk());
  CHECK_THAT(store.Revoke(NextId(), T0(), "nope"), HasCode(absl::StatusCode::kNotFound));
  CHECK(notified == std::vector<std::string>{"Abc1234"});
}

TEST_CASE("IsStorableText accepts valid UTF-8 and rejects NUL and malformed sequences",
          "[lib/store]") {
  CHECK(IsStorableText(""));
  CHECK(IsStorableText("plain ascii"));
  CHECK(IsStorableText("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));  // é € 😀
  CHECK_FALSE(IsStorableText(std::string("a\0b", 3)));
  CHECK_FALSE(IsStorableText("\xff"));
  CHECK_FALSE(IsStorableText("\xc3"));              // truncated
  CHECK_FALSE(IsStorableText("\xe2\x82"));          // truncated
  CHECK_FALSE(IsStorableText("\xc0\xaf"));          // overlong '/'
  CHECK_FALSE(IsStorableText("\xed\xa0\x80"));      // surrogate
  CHECK_FALSE(IsStorableText("\xf4\x90\x80\x80"));  // above U+10FFFF
  CHECK_FALSE(IsStorableText("\x80"));              // lone continuation
}

TEST_CASE("IsStorableText finds a bad byte at any position of long ASCII text", "[lib/store]") {
  // Long ASCII runs are checked eight bytes at a time: every offset and
  // every length around the chunk edges.
  for (size_t length = 1; length <= 40; ++length) {
    const std::string ascii(length, 'a');
    CHECK(IsStorableText(ascii));
    for (size_t at = 0; at < length; ++at) {
      for (char bad : {'\0', '\xff', '\x80', '\xc3'}) {
        std::string text = ascii;
        text[at] = bad;
        INFO("length " << length << ", offset " << at << ", byte "
                       << int{static_cast<unsigned char>(bad)});
        CHECK_FALSE(IsStorableText(text));
      }
      std::string two_bytes = ascii;  // é: valid UTF-8 after any ASCII prefix
      two_bytes.replace(at, 1, "\xc3\xa9");
      CHECK(IsStorableText(two_bytes));
    }
  }
}

TEST_CASE("PlanCreate lists the rows to write, keys sorted, dead targets repointed",
          "[lib/store]") {
  std::string owner = "o";
  NewLink b = MakeNewLink(owner, "https://example.com/b");
  NewLink a = MakeNewLink(owner, "https://example.com/a");
  b.request_id = "r2";
  a.request_id = "r1";
  KeyState state;
  Link dead;
  dead.id = 7;
  dead.owner = owner;
  dead.revoke_time = T0();
  state.dedupe[DedupeKey(owner, a.long_url_sha256)] = StoredDedupe{7, dead, a.long_url_sha256};

  std::vector<NewLink> batch = {b, a};
  CreatePlan plan = PlanCreate(batch, state);
  REQUIRE(plan.new_links == std::vector<size_t>{0, 1});
  REQUIRE(plan.requests.size() == 2);
  CHECK(plan.requests[0].key.second == "r1");
  CHECK(plan.requests[0].link_id == a.id);
  REQUIRE(plan.dedupe.size() == 2);
  CHECK(plan.dedupe[0].key < plan.dedupe[1].key);
  for (const DedupeWrite& w : plan.dedupe) {
    if (w.key == DedupeKey(owner, a.long_url_sha256)) {
      CHECK(w.replaces == std::optional<int64_t>(7));
      CHECK(w.link_id == a.id);
    } else {
      CHECK_FALSE(w.replaces.has_value());
    }
  }
}

TEST_CASE("DedupeKey depends on the owner and the URL hash and on nothing else", "[lib/store]") {
  NewLink a = MakeNewLink("o", "https://example.com/a");
  NewLink b = MakeNewLink("o", "https://example.com/b");
  CHECK(DedupeKey("o", a.long_url_sha256) == DedupeKey("o", a.long_url_sha256));
  CHECK(DedupeKey("o", a.long_url_sha256) != DedupeKey("o", b.long_url_sha256));
  CHECK(DedupeKey("o", a.long_url_sha256) != DedupeKey("p", a.long_url_sha256));
  // The separator: ("ab", h) and ("a", "b" + h) hash different bytes.
  CHECK(DedupeKey("ab", a.long_url_sha256) != DedupeKey("a", "b" + a.long_url_sha256));
  // A known value, so that a change of the formula (which would orphan every
  // stored key: migration 0006 computes it in SQL) fails here first.
  CHECK(DedupeKey("anonymous", std::string(32, '\0')) == int64_t{4806346287186927360});
}

TEST_CASE("DedupeKey with labels: none keeps the old key, each set of labels its own",
          "[lib/store]") {
  const std::string h(32, '\0');
  // Links stored before labels existed keep de-duplicating.
  CHECK(DedupeKey("anonymous", h, {}) == int64_t{4806346287186927360});
  const int64_t spring = DedupeKey("o", h, {{"campaign", "spring"}});
  CHECK(spring != DedupeKey("o", h));
  CHECK(spring == DedupeKey("o", h, {{"campaign", "spring"}}));
  CHECK(spring != DedupeKey("o", h, {{"campaign", "summer"}}));
  CHECK(spring != DedupeKey("o", h, {{"campaign", "spring"}, {"channel", "sms"}}));
  // The separators: ("ab", "") and ("a", "b") hash different bytes.
  CHECK(DedupeKey("o", h, {{"ab", ""}}) != DedupeKey("o", h, {{"a", "b"}}));
}

TEST_CASE("A dedupe key held by a link of another owner or URL is never used nor taken over",
          "[lib/store]") {
  // A 64-bit key collision, staged: the key of (o, a) names link 9, which
  // belongs to another URL (or owner). `a` must get a link of its own, and
  // link 9 must keep the key, live or dead.
  NewLink a = MakeNewLink("o", "https://example.com/a");
  NewLink other_url = MakeNewLink("o", "https://example.com/other");
  for (bool dead : {false, true}) {
    for (const std::string& holder_owner : {std::string("o"), std::string("p")}) {
      INFO("dead " << dead << ", holder owner " << holder_owner);
      Link holder;
      holder.id = 9;
      holder.owner = holder_owner;
      holder.long_url = other_url.long_url;
      if (dead) holder.revoke_time = T0();
      KeyState state;
      const std::string holder_sha =
          holder_owner == "o" ? other_url.long_url_sha256 : a.long_url_sha256;
      state.dedupe[DedupeKey("o", a.long_url_sha256)] = StoredDedupe{9, holder, holder_sha};
      // Twice in one batch: no dedupe between them either (the key is taken).
      std::vector<NewLink> batch = {a, a};
      batch[1].id = a.id + 1;
      CreatePlan plan = PlanCreate(batch, state);
      REQUIRE(plan.results.size() == 2);
      for (const auto& r : plan.results) {
        REQUIRE(r.ok());
        CHECK(r->created);
        CHECK(r->link.id != 9);
        CHECK(r->link.long_url == a.long_url);
      }
      CHECK(plan.new_links == std::vector<size_t>{0, 1});
      CHECK(plan.dedupe.empty());
    }
  }
}

TEST_CASE("A dedupe key whose link is missing is repointed to the new link", "[lib/store]") {
  NewLink a = MakeNewLink("o", "https://example.com/a");
  KeyState state;
  state.dedupe[DedupeKey("o", a.long_url_sha256)] = StoredDedupe{5, std::nullopt, ""};
  std::vector<NewLink> batch = {a};
  CreatePlan plan = PlanCreate(batch, state);
  REQUIRE(plan.results[0].ok());
  CHECK(plan.results[0]->created);
  REQUIRE(plan.dedupe.size() == 1);
  CHECK(plan.dedupe[0].replaces == std::optional<int64_t>(5));
  CHECK(plan.dedupe[0].link_id == a.id);
}

}  // namespace
}  // namespace shortener::store::testing
