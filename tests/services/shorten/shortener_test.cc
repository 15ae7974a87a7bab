// Unit tests of the service logic (Shortener) over the in-memory store and
// segment source: validation, codes, dedupe, idempotency, states, batches,
// batched resolves, revocation notices; and the RPC counters' log line.
#include "services/shorten/shortener.h"

#include <catch2/catch.hpp>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "lib/common/clock.h"
#include "lib/idalloc/segment_source.h"
#include "lib/store/in_memory_link_store.h"
#include "services/shorten/rpc_counters.h"
#include "tests/services/shorten/shortener_stack.h"
#include "tests/support/status_matchers.h"

namespace shortener::service {
namespace {

using shortener::testing::HasCode;
using shortener::testing::HasCodeAndMessage;
using shortener::testing::IsOk;

// BatchShorten's items: every input decoded.
std::vector<absl::StatusOr<ShortenInput>> Items(const std::vector<ShortenInput>& inputs) {
  return std::vector<absl::StatusOr<ShortenInput>>(inputs.begin(), inputs.end());
}

// Everything a Shortener needs, in memory, with a settable clock.
struct Fixture : ShortenerStack {
  absl::StatusOr<ShortenOutput> Shorten(const ShortenInput& in) {
    std::promise<absl::StatusOr<ShortenOutput>> p;
    shortener->Shorten(in, absl::Now() + absl::Seconds(5),
                       [&p](absl::StatusOr<ShortenOutput> out) { p.set_value(std::move(out)); });
    return p.get_future().get();
  }

  absl::StatusOr<ShortenOutput> Shorten(const std::string& url) {
    ShortenInput in;
    in.long_url = url;
    return Shorten(in);
  }

  store::InMemoryLinkStore& store = link_memory;
  ThreadPool& pool = *blocking_pool;
};

TEST_CASE("Shorten creates a link with a 7-character code that resolves to the normalised URL",
          "[services/shorten]") {
  Fixture f;
  absl::StatusOr<ShortenOutput> out = f.Shorten("HTTPS://Example.COM:443/a?b=c#d");
  REQUIRE_THAT(out, IsOk());
  CHECK(out->created);
  CHECK(out->link.code.size() == 7);
  CHECK(out->link.short_url == "https://sho.rt/" + out->link.code);
  CHECK(out->link.link.long_url == "https://example.com/a?b=c#d");
  CHECK(out->link.link.owner == "anonymous");
  absl::StatusOr<LinkView> resolved = f.shortener->Resolve(out->link.code);
  REQUIRE_THAT(resolved, IsOk());
  CHECK(resolved->state == LinkState::kActive);
  CHECK(resolved->link.long_url == "https://example.com/a?b=c#d");
  CHECK(resolved->link.redirect_status == 302);
}

TEST_CASE("Shorten returns the existing link for the same URL unless force_new",
          "[services/shorten]") {
  Fixture f;
  auto first = f.Shorten("https://example.com/x");
  auto again = f.Shorten("https://EXAMPLE.com/x");
  REQUIRE_THAT(again, IsOk());
  CHECK_FALSE(again->created);
  CHECK(again->link.code == first->link.code);
  ShortenInput in;
  in.long_url = "https://example.com/x";
  in.force_new = true;
  auto forced = f.Shorten(in);
  REQUIRE_THAT(forced, IsOk());
  CHECK(forced->created);
  CHECK(forced->link.code != first->link.code);
}

TEST_CASE(
    "Requests with their own expiry redirect type or click budget never get another link back",
    "[services/shorten]") {
  Fixture f;
  auto plain = f.Shorten("https://example.com/settings");
  REQUIRE_THAT(plain, IsOk());
  ShortenInput in;
  in.long_url = "https://example.com/settings";
  in.redirect_status = 301;
  auto permanent = f.Shorten(in);
  REQUIRE_THAT(permanent, IsOk());
  CHECK(permanent->created);
  CHECK(permanent->link.link.redirect_status == 301);
  in.redirect_status = 302;
  in.expire_time = f.clock.Now() + absl::Hours(1);
  auto expiring = f.Shorten(in);
  REQUIRE_THAT(expiring, IsOk());
  CHECK(expiring->created);
  CHECK(expiring->link.link.expire_time == f.clock.Now() + absl::Hours(1));
  in.expire_time.reset();
  in.max_clicks = 100;
  auto budgeted = f.Shorten(in);
  auto budgeted_again = f.Shorten(in);
  REQUIRE_THAT(budgeted, IsOk());
  REQUIRE_THAT(budgeted_again, IsOk());
  CHECK(budgeted->created);
  CHECK(budgeted_again->created);
  CHECK(budgeted->link.code != budgeted_again->link.code);
  CHECK(budgeted->link.link.max_clicks == 100);
  // ... and they do not replace the plain link for later plain requests.
  auto again = f.Shorten("https://example.com/settings");
  REQUIRE_THAT(again, IsOk());
  CHECK(again->link.code == plain->link.code);
}

TEST_CASE("A Shorten that must wait for an id segment gets one once the source is back",
          "[services/shorten]") {
  Fixture f;
  f.source.SetAvailable(false);
  f.ids = std::make_unique<idalloc::SegmentIdAllocator>(&f.source, idalloc::IdAllocatorOptions{});
  ShortenerOptions options;
  options.base_url = "https://sho.rt/";
  Shortener shortener(f.codec.get(), f.policy.get(), f.ids.get(), &f.store, f.committer.get(),
                      f.reads.get(), &f.pool, options, f.clock);
  ShortenInput in;
  in.long_url = "https://example.com/waited";
  std::promise<absl::StatusOr<ShortenOutput>> p;
  shortener.Shorten(in, absl::Now() + absl::Seconds(10),
                    [&p](absl::StatusOr<ShortenOutput> out) { p.set_value(std::move(out)); });
  // The call returned without an id (it waits on the pool, not here).
  absl::SleepFor(absl::Milliseconds(100));
  f.source.SetAvailable(true);
  auto out = p.get_future().get();
  REQUIRE_THAT(out, IsOk());
  CHECK(out->created);
}

TEST_CASE("request_id makes Shorten idempotent, even with force_new", "[services/shorten]") {
  Fixture f;
  ShortenInput in;
  in.long_url = "https://example.com/idem";
  in.force_new = true;
  in.request_id = "req-1";
  auto first = f.Shorten(in);
  auto retry = f.Shorten(in);
  REQUIRE_THAT(retry, IsOk());
  CHECK_FALSE(retry->created);
  CHECK(retry->link.code == first->link.code);
  in.long_url = "https://example.com/other";
  CHECK_THAT(f.Shorten(in), HasCodeAndMessage(absl::StatusCode::kAlreadyExists, "req-1"));
}

TEST_CASE("Bad input is refused with INVALID_ARGUMENT naming the field", "[services/shorten]") {
  Fixture f;
  CHECK_THAT(f.Shorten(""), HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "long_url"));
  CHECK_THAT(f.Shorten("javascript:alert(1)"),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "long_url"));
  CHECK_THAT(f.Shorten("https://sho.rt/abc"),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "sho.rt"));
  ShortenInput in;
  in.long_url = "https://example.com/";
  in.expire_time = f.clock.Now() - absl::Seconds(1);
  CHECK_THAT(f.Shorten(in), HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "expire_time"));
  in.expire_time.reset();
  in.redirect_status = 303;
  CHECK_THAT(f.Shorten(in), HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "redirect_type"));
  in.redirect_status = 302;
  in.custom_alias = "has space";
  CHECK_THAT(f.Shorten(in), HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "custom_alias"));
  in.custom_alias = "healthz";
  CHECK_THAT(f.Shorten(in), HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "custom_alias"));
  in.custom_alias = "";
  in.request_id = std::string(200, 'r');
  CHECK_THAT(f.Shorten(in), HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "request_id"));
  in.request_id.clear();
  in.max_clicks = -1;
  CHECK_THAT(f.Shorten(in), HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "max_clicks"));
}

TEST_CASE("Custom aliases resolve, are unique, and are never deduplicated", "[services/shorten]") {
  Fixture f;
  ShortenInput in;
  in.long_url = "https://example.com/sale";
  in.custom_alias = "spring-sale";
  in.redirect_status = 301;
  auto out = f.Shorten(in);
  REQUIRE_THAT(out, IsOk());
  CHECK(out->link.code == "spring-sale");
  CHECK(out->link.short_url == "https://sho.rt/spring-sale");
  auto resolved = f.shortener->Resolve("spring-sale");
  REQUIRE_THAT(resolved, IsOk());
  CHECK(resolved->link.redirect_status == 301);
  CHECK_THAT(f.Shorten(in), HasCodeAndMessage(absl::StatusCode::kAlreadyExists, "spring-sale"));
  // The same URL without an alias gets a generated code of its own.
  auto plain = f.Shorten("https://example.com/sale");
  REQUIRE_THAT(plain, IsOk());
  CHECK(plain->link.code != "spring-sale");
}

TEST_CASE("Resolve tells malformed codes from unknown ones", "[services/shorten]") {
  Fixture f;
  CHECK_THAT(f.shortener->Resolve("bad/code"), HasCode(absl::StatusCode::kInvalidArgument));
  CHECK_THAT(f.shortener->Resolve(""), HasCode(absl::StatusCode::kInvalidArgument));
  CHECK_THAT(f.shortener->Resolve(std::string(65, 'a')),
             HasCode(absl::StatusCode::kInvalidArgument));
  CHECK_THAT(f.shortener->Resolve("no-such-alias"), HasCode(absl::StatusCode::kNotFound));
  auto out = f.Shorten("https://example.com/");
  std::string code = out->link.code;
  // Flip the check character: a well-formed code that does not exist.
  code.back() = code.back() == 'a' ? 'b' : 'a';
  CHECK_THAT(f.shortener->Resolve(code), HasCode(absl::StatusCode::kNotFound));
  // A valid code for an id that was never stored.
  absl::StatusOr<LinkView> unknown = f.shortener->Resolve(*f.codec->Encode(999999));
  CHECK_THAT(unknown, HasCode(absl::StatusCode::kNotFound));
  // Not-found messages never reveal the id behind a code.
  CHECK_THAT(std::string(unknown.status().message()), !Catch::Contains("999999"));
  CHECK_THAT(std::string(f.shortener->Revoke(*f.codec->Encode(999999)).status().message()),
             !Catch::Contains("999999"));
}

TEST_CASE("Revoked and expired links resolve with their state", "[services/shorten]") {
  Fixture f;
  ShortenInput in;
  in.long_url = "https://example.com/soon";
  in.expire_time = f.clock.Now() + absl::Hours(1);
  auto expiring = f.Shorten(in);
  REQUIRE_THAT(expiring, IsOk());
  auto revocable = f.Shorten("https://example.com/revoke-me");
  REQUIRE_THAT(revocable, IsOk());

  auto revoked = f.shortener->Revoke(revocable->link.code);
  REQUIRE_THAT(revoked, IsOk());
  CHECK(revoked->state == LinkState::kRevoked);
  CHECK(revoked->link.revoke_time == f.clock.Now());
  CHECK(f.shortener->Resolve(revocable->link.code)->state == LinkState::kRevoked);

  CHECK(f.shortener->Resolve(expiring->link.code)->state == LinkState::kActive);
  f.clock.Advance(absl::Hours(2));
  CHECK(f.shortener->Resolve(expiring->link.code)->state == LinkState::kExpired);
  // A dead link is not handed out again by dedupe.
  auto fresh = f.Shorten("https://example.com/revoke-me");
  REQUIRE_THAT(fresh, IsOk());
  CHECK(fresh->created);
  CHECK_THAT(f.shortener->Revoke("unknown-alias"), HasCode(absl::StatusCode::kNotFound));
}

TEST_CASE("BatchShorten answers every item in order and a bad item fails only itself",
          "[services/shorten]") {
  Fixture f;
  std::vector<ShortenInput> inputs(4);
  inputs[0].long_url = "https://example.com/1";
  inputs[1].long_url = "ftp://example.com/2";
  inputs[2].long_url = "https://example.com/3";
  inputs[3].long_url = "https://example.com/1";
  std::promise<absl::StatusOr<std::vector<absl::StatusOr<ShortenOutput>>>> p;
  f.shortener->BatchShorten(Items(inputs), absl::Now() + absl::Seconds(5),
                            [&p](auto results) { p.set_value(std::move(results)); });
  auto results = p.get_future().get();
  REQUIRE_THAT(results, IsOk());
  REQUIRE(results->size() == 4);
  CHECK_THAT((*results)[0], IsOk());
  CHECK_THAT((*results)[1], HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "ftp"));
  CHECK_THAT((*results)[2], IsOk());
  REQUIRE_THAT((*results)[3], IsOk());
  CHECK((*results)[3]->link.code == (*results)[0]->link.code);
  CHECK_FALSE((*results)[3]->created);

  std::promise<absl::StatusOr<std::vector<absl::StatusOr<ShortenOutput>>>> too_many;
  f.shortener->BatchShorten(Items(std::vector<ShortenInput>(1001)), absl::Now() + absl::Seconds(5),
                            [&too_many](auto r) { too_many.set_value(std::move(r)); });
  CHECK_THAT(too_many.get_future().get(),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "1001"));
}

TEST_CASE("a BatchShorten item that holds a decode error is answered with it and takes no id",
          "[services/shorten]") {
  Fixture f;
  std::vector<absl::StatusOr<ShortenInput>> items(3);
  items[0] = ShortenInput{};
  items[0]->long_url = "https://example.com/before";
  items[1] = absl::InvalidArgumentError("redirect_type: unknown value 99");
  items[2] = ShortenInput{};
  items[2]->long_url = "https://example.com/after";
  std::promise<absl::StatusOr<std::vector<absl::StatusOr<ShortenOutput>>>> p;
  f.shortener->BatchShorten(std::move(items), absl::Now() + absl::Seconds(5),
                            [&p](auto results) { p.set_value(std::move(results)); });
  auto results = p.get_future().get();
  REQUIRE_THAT(results, IsOk());
  REQUIRE(results->size() == 3);
  REQUIRE_THAT((*results)[0], IsOk());
  CHECK_THAT((*results)[1], HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                              "redirect_type: unknown value 99"));
  REQUIRE_THAT((*results)[2], IsOk());
  // Ids are consecutive: the undecodable item between them took none.
  CHECK((*results)[2]->link.link.id == (*results)[0]->link.link.id + 1);
}

// Shortener::BatchResolve, waiting for its answer.
absl::StatusOr<std::vector<absl::StatusOr<LinkView>>> BatchResolve(Fixture& f,
                                                                   std::vector<std::string> codes) {
  std::promise<absl::StatusOr<std::vector<absl::StatusOr<LinkView>>>> p;
  f.shortener->BatchResolve(std::move(codes), [&p](auto views) { p.set_value(std::move(views)); });
  return p.get_future().get();
}

TEST_CASE("BatchResolve answers every code in order as Resolve would, each failing alone",
          "[services/shorten]") {
  Fixture f;
  auto generated = f.Shorten("https://example.com/generated");
  ShortenInput aliased;
  aliased.long_url = "https://example.com/aliased";
  aliased.custom_alias = "summer-sale";
  auto alias = f.Shorten(aliased);
  auto revoked = f.Shorten("https://example.com/revoked");
  REQUIRE_THAT(generated, IsOk());
  REQUIRE_THAT(alias, IsOk());
  REQUIRE_THAT(revoked, IsOk());
  REQUIRE_THAT(f.shortener->Revoke(revoked->link.code), IsOk());

  auto views = BatchResolve(f, {"no-such-alias", generated->link.code, "bad/code", "summer-sale",
                                revoked->link.code, generated->link.code});
  REQUIRE_THAT(views, IsOk());
  REQUIRE(views->size() == 6);
  CHECK_THAT((*views)[0], HasCodeAndMessage(absl::StatusCode::kNotFound,
                                            "code \"no-such-alias\" does not exist"));
  REQUIRE_THAT((*views)[1], IsOk());
  CHECK((*views)[1]->code == generated->link.code);
  CHECK((*views)[1]->link.long_url == "https://example.com/generated");
  CHECK_THAT((*views)[2], HasCode(absl::StatusCode::kInvalidArgument));
  REQUIRE_THAT((*views)[3], IsOk());
  CHECK((*views)[3]->link.long_url == "https://example.com/aliased");
  REQUIRE_THAT((*views)[4], IsOk());
  CHECK((*views)[4]->state == LinkState::kRevoked);
  REQUIRE_THAT((*views)[5], IsOk());
  CHECK((*views)[5]->link.id == generated->link.link.id);
}

TEST_CASE("BatchResolve's codes reach the store together: one batch, one statement per key kind",
          "[services/shorten]") {
  Fixture f;
  std::vector<std::string> codes;
  for (int i = 0; i < 200; ++i) {
    auto out = f.Shorten(absl::StrCat("https://example.com/together/", i));
    REQUIRE_THAT(out, IsOk());
    codes.push_back(out->link.code);
  }
  for (int i = 0; i < 50; ++i) {
    ShortenInput aliased;
    aliased.long_url = absl::StrCat("https://example.com/together/alias/", i);
    aliased.custom_alias = absl::StrCat("together-", i);
    REQUIRE_THAT(f.Shorten(aliased), IsOk());
    codes.push_back(aliased.custom_alias);
  }
  const store::ReadBatcher::Stats before = f.reads->GetStats();
  auto views = BatchResolve(f, codes);
  REQUIRE_THAT(views, IsOk());
  REQUIRE(views->size() == codes.size());
  for (size_t i = 0; i < codes.size(); ++i) {
    REQUIRE_THAT((*views)[i], IsOk());
    CHECK((*views)[i]->code == codes[i]);
  }
  const store::ReadBatcher::Stats after = f.reads->GetStats();
  // Code by code, an idle read batcher would send the first code alone and
  // the rest in at least one more batch.
  CHECK(after.batches - before.batches == 1);
  CHECK(after.lookups - before.lookups == 250);
  CHECK(after.queries - before.queries == 2);  // one GetByIds, one GetByAliases
}

TEST_CASE("BatchResolve takes 1 to 1000 codes", "[services/shorten]") {
  Fixture f;
  CHECK_THAT(BatchResolve(f, {}),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "codes: BatchResolve takes 1 to 1000 codes, got 0"));
  CHECK_THAT(BatchResolve(f, std::vector<std::string>(1001, "spring-sale")),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "codes: BatchResolve takes 1 to 1000 codes, got 1001"));
  auto full = BatchResolve(f, std::vector<std::string>(1000, "spring-sale"));
  REQUIRE_THAT(full, IsOk());
  CHECK(full->size() == 1000);
  for (const auto& view : *full) CHECK_THAT(view, HasCode(absl::StatusCode::kNotFound));
}

TEST_CASE("Shorten fails UNAVAILABLE when no id segment can be leased", "[services/shorten]") {
  Fixture f;
  f.source.SetAvailable(false);
  // A fresh allocator has no segment yet, so it must ask the (dead) source.
  f.ids = std::make_unique<idalloc::SegmentIdAllocator>(&f.source, idalloc::IdAllocatorOptions{});
  ShortenerOptions options;
  options.base_url = "https://sho.rt/";
  options.id_wait = absl::Milliseconds(200);
  Shortener shortener(f.codec.get(), f.policy.get(), f.ids.get(), &f.store, f.committer.get(),
                      f.reads.get(), &f.pool, options, f.clock);
  ShortenInput in;
  in.long_url = "https://example.com/";
  std::promise<absl::StatusOr<ShortenOutput>> p;
  absl::Time start = absl::Now();
  shortener.Shorten(in, absl::Now() + absl::Seconds(5),
                    [&p](absl::StatusOr<ShortenOutput> out) { p.set_value(std::move(out)); });
  CHECK_THAT(p.get_future().get(), HasCode(absl::StatusCode::kUnavailable));
  CHECK(absl::Now() - start < absl::Seconds(2));
}

TEST_CASE("Concurrent resolves go through the read batcher and each gets its own link",
          "[services/shorten][concurrent]") {
  Fixture f;
  std::vector<ShortenInput> inputs(100);
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i].long_url = absl::StrCat("https://example.com/many/", i);
  }
  std::promise<absl::StatusOr<std::vector<absl::StatusOr<ShortenOutput>>>> p;
  f.shortener->BatchShorten(Items(inputs), absl::Now() + absl::Seconds(5),
                            [&p](auto results) { p.set_value(std::move(results)); });
  auto created = p.get_future().get();
  REQUIRE_THAT(created, IsOk());
  std::vector<std::string> codes;
  for (const auto& r : *created) {
    REQUIRE_THAT(r, IsOk());
    codes.push_back(r->link.code);
  }
  // Answers land on reader threads; they are checked here, on the test thread.
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> wrong;
  size_t answered = 0;
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < codes.size(); ++i) {
      std::string want = inputs[i].long_url;
      f.shortener->Resolve(codes[i], [&, want](absl::StatusOr<LinkView> view) {
        std::lock_guard<std::mutex> lock(mu);
        if (!view.ok() || view->link.long_url != want) wrong.push_back(want);
        answered += 1;
        cv.notify_all();
      });
    }
  }
  std::unique_lock<std::mutex> lock(mu);
  REQUIRE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return answered == 200; }));
  CHECK(wrong.empty());
  store::ReadBatcher::Stats stats = f.reads->GetStats();
  CHECK(stats.lookups == 200);
  CHECK(stats.batches <= 200);
}

TEST_CASE("Resolve answers malformed codes at once and aliases through the batcher",
          "[services/shorten]") {
  Fixture f;
  ShortenInput in;
  in.long_url = "https://example.com/aliased";
  in.custom_alias = "my-alias";
  REQUIRE_THAT(f.Shorten(in), IsOk());
  bool called_inline = false;
  f.shortener->Resolve("bad/code", [&](absl::StatusOr<LinkView> view) {
    called_inline = absl::IsInvalidArgument(view.status());
  });
  CHECK(called_inline);
  absl::StatusOr<LinkView> alias = f.shortener->Resolve("my-alias");
  REQUIRE_THAT(alias, IsOk());
  CHECK(alias->code == "my-alias");
  CHECK(alias->link.long_url == "https://example.com/aliased");
  CHECK(f.reads->GetStats().lookups == 1);
  CHECK_THAT(
      f.shortener->Resolve("no-such-alias"),
      HasCodeAndMessage(absl::StatusCode::kNotFound, "code \"no-such-alias\" does not exist"));
  CHECK(f.reads->GetStats().lookups == 2);
}

TEST_CASE("LinkIdsOf decodes codes, looks aliases up together, and names what it cannot find",
          "[services/shorten]") {
  Fixture f;
  std::vector<std::string> codes;
  std::vector<int64_t> want;
  for (int i = 0; i < 3; ++i) {
    ShortenInput in;
    in.long_url = absl::StrCat("https://example.com/ids/", i);
    if (i > 0) in.custom_alias = absl::StrCat("ids-alias-", i);
    absl::StatusOr<ShortenOutput> out = f.Shorten(in);
    REQUIRE_THAT(out, IsOk());
    codes.push_back(out->link.code);
    want.push_back(out->link.link.id);
  }
  codes.push_back("no-such-alias");
  codes.push_back("bad/code");
  std::vector<absl::StatusOr<int64_t>> ids = f.shortener->LinkIdsOf(codes);
  REQUIRE(ids.size() == 5);
  for (int i = 0; i < 3; ++i) {
    REQUIRE_THAT(ids[i], IsOk());
    CHECK(*ids[i] == want[i]);
  }
  CHECK_THAT(ids[3], HasCode(absl::StatusCode::kNotFound));
  CHECK_THAT(ids[4], HasCode(absl::StatusCode::kInvalidArgument));
  // Only the aliases were looked up (the generated code is decoded).
  CHECK(f.reads->GetStats().lookups == 3);
  CHECK(*f.shortener->LinkIdOf(codes[1]) == want[1]);
}

TEST_CASE("a full blocking pool fails BatchShorten with RESOURCE_EXHAUSTED, at once",
          "[services/shorten]") {
  Fixture f;
  // A pool of its own: one thread held busy, no room to queue.
  ThreadPool tiny(ThreadPoolOptions{"blocking pool", 1, 1});
  Shortener shortener(f.codec.get(), f.policy.get(), f.ids.get(), &f.store, f.committer.get(),
                      f.reads.get(), &tiny, ShortenerOptions{});
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  REQUIRE(tiny.Schedule([released] { released.wait(); }).ok());
  // Once the worker holds the blocker, the first waits in the queue and the
  // second finds it full. (Before, the first could be refused with the
  // blocker still queued, and the second then find the queue empty.)
  while (tiny.GetStats().queued != 0) absl::SleepFor(absl::Milliseconds(1));
  std::vector<ShortenInput> inputs(1);
  inputs[0].long_url = "https://example.com/full";
  auto first = std::make_shared<std::promise<absl::Status>>();
  absl::Status second;
  shortener.BatchShorten(Items(inputs), absl::Now() + absl::Seconds(5),
                         [first](absl::StatusOr<std::vector<absl::StatusOr<ShortenOutput>>> r) {
                           first->set_value(r.status());
                         });
  shortener.BatchShorten(
      Items(inputs), absl::Now() + absl::Seconds(5),
      [&](absl::StatusOr<std::vector<absl::StatusOr<ShortenOutput>>> r) { second = r.status(); });
  CHECK_THAT(second, HasCodeAndMessage(absl::StatusCode::kResourceExhausted,
                                       "blocking pool is full: 1 tasks are waiting; retry later"));
  // Once the pool moves again, so does everything it had accepted.
  release.set_value();
  CHECK_THAT(first->get_future().get(), IsOk());
}

TEST_CASE("Revoke publishes the link's code once, not for a repeated revoke",
          "[services/shorten]") {
  Fixture f;
  std::mutex mu;
  std::vector<std::string> published;
  f.store.SetRevocationObserver([&](const std::string& code) {
    std::lock_guard<std::mutex> lock(mu);
    published.push_back(code);
  });
  auto generated = f.Shorten("https://example.com/to-revoke");
  REQUIRE_THAT(generated, IsOk());
  ShortenInput in;
  in.long_url = "https://example.com/to-revoke-alias";
  in.custom_alias = "revoke-me";
  REQUIRE_THAT(f.Shorten(in), IsOk());
  REQUIRE_THAT(f.shortener->Revoke(generated->link.code), IsOk());
  REQUIRE_THAT(f.shortener->Revoke(generated->link.code), IsOk());
  REQUIRE_THAT(f.shortener->Revoke("revoke-me"), IsOk());
  std::lock_guard<std::mutex> lock(mu);
  CHECK(published == std::vector<std::string>{generated->link.code, "revoke-me"});
}

TEST_CASE("RpcCounters sums up every method in one stable line", "[services/shorten]") {
  RpcCounters counters;
  CHECK(counters.Summary() ==
        "served: Shorten=0 BatchShorten=0 Resolve=0 BatchResolve=0 GetLink=0 ListLinks=0 "
        "GetQrCode=0 Revoke=0 UpdateLink=0 DeleteLink=0 RevokeLinks=0 DeleteLinks=0 "
        "RecordClicks=0 GetClickStats=0 WatchInvalidations=0 "
        "CreateApiKey=0 ListApiKeys=0 RevokeApiKey=0");
  counters.Count(Rpc::kResolve);
  counters.Count(Rpc::kResolve);
  counters.Count(Rpc::kShorten);
  counters.Count(Rpc::kWatchInvalidations);
  CHECK(counters.Get(Rpc::kResolve) == 2);
  CHECK(counters.Summary() ==
        "served: Shorten=1 BatchShorten=0 Resolve=2 BatchResolve=0 GetLink=0 ListLinks=0 "
        "GetQrCode=0 Revoke=0 UpdateLink=0 DeleteLink=0 RevokeLinks=0 DeleteLinks=0 "
        "RecordClicks=0 GetClickStats=0 WatchInvalidations=1 "
        "CreateApiKey=0 ListApiKeys=0 RevokeApiKey=0");
}

}  // namespace
}  // namespace shortener::service
