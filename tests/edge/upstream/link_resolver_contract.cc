// The LinkResolver contract (link_resolver.h): every implementation passes
// these cases. Each builds its own upstream through NewContractUpstream().
#include "tests/edge/upstream/link_resolver_contract.h"

#include <catch2/catch.hpp>
#include <future>
#include <utility>

#include "absl/strings/str_cat.h"

namespace shortener::edge::testing {

using Clock = LinkResolver::Clock;

Answered ResolveAndWait(LinkResolver& resolver, const std::string& code,
                        Clock::time_point deadline) {
  std::promise<Answered> promise;
  std::future<Answered> answered = promise.get_future();
  resolver.Resolve(code, deadline, [&promise](ResolveReply reply) {
    promise.set_value(Answered{std::move(reply), std::this_thread::get_id()});
  });
  REQUIRE(answered.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  return answered.get();
}

Answered ResolveAndWait(LinkResolver& resolver, const std::string& code) {
  return ResolveAndWait(resolver, code, Clock::now() + std::chrono::seconds(10));
}

AnsweredBatch ResolveBatchAndWait(LinkResolver& resolver, std::vector<std::string> codes,
                                  Clock::time_point deadline) {
  std::promise<AnsweredBatch> promise;
  std::future<AnsweredBatch> answered = promise.get_future();
  resolver.ResolveBatch(std::move(codes), deadline, [&promise](std::vector<ResolveReply> replies) {
    promise.set_value(AnsweredBatch{std::move(replies), std::this_thread::get_id()});
  });
  REQUIRE(answered.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  return answered.get();
}

namespace {

// A URL the service keeps as it is (already normalised), distinct per call.
std::string Url(const std::string& name) {
  static int next = 0;
  return absl::StrCat("https://example.com/contract/", name, "-", ++next);
}

// A whole second (the service keeps microseconds; whole seconds compare
// exactly everywhere).
absl::Time WholeSecond(absl::Time t) { return absl::FromUnixSeconds(absl::ToUnixSeconds(t)); }

TEST_CASE("an active link resolves to its location and 302", "[edge/upstream][contract]") {
  auto upstream = NewContractUpstream();
  const std::string url = Url("plain");
  const std::string code = upstream->CreateLink(ContractLink(url));
  const Answered answered = ResolveAndWait(upstream->resolver(), code);
  CHECK(answered.reply.outcome == ResolveOutcome::kActive);
  CHECK(answered.reply.redirect_status == 302);
  CHECK(answered.reply.location == url);
  CHECK_FALSE(answered.reply.expire_time.has_value());
  CHECK(answered.reply.error.ok());
  CHECK(answered.reply.latency >= absl::ZeroDuration());
  // On the resolver's own thread, never the caller's.
  CHECK(answered.thread != std::this_thread::get_id());
}

TEST_CASE("each redirect status comes back as the link was created with",
          "[edge/upstream][contract]") {
  auto upstream = NewContractUpstream();
  for (int status : {301, 302, 307, 308}) {
    INFO("redirect status " << status);
    ContractLink link{Url(absl::StrCat("status", status))};
    link.redirect_status = status;
    const std::string code = upstream->CreateLink(link);
    const ResolveReply reply = ResolveAndWait(upstream->resolver(), code).reply;
    CHECK(reply.outcome == ResolveOutcome::kActive);
    CHECK(reply.redirect_status == status);
    CHECK(reply.location == link.long_url);
  }
}

TEST_CASE("an alias resolves like a generated code", "[edge/upstream][contract]") {
  auto upstream = NewContractUpstream();
  ContractLink link{Url("alias")};
  link.alias = "spring-sale_2";
  link.redirect_status = 307;
  REQUIRE(upstream->CreateLink(link) == "spring-sale_2");
  const ResolveReply reply = ResolveAndWait(upstream->resolver(), "spring-sale_2").reply;
  CHECK(reply.outcome == ResolveOutcome::kActive);
  CHECK(reply.redirect_status == 307);
  CHECK(reply.location == link.long_url);
}

TEST_CASE("a link that expires later is active and carries its expire_time",
          "[edge/upstream][contract]") {
  auto upstream = NewContractUpstream();
  ContractLink link{Url("expires")};
  link.expire_time = WholeSecond(upstream->Now()) + absl::Hours(1);
  const std::string code = upstream->CreateLink(link);
  const ResolveReply reply = ResolveAndWait(upstream->resolver(), code).reply;
  CHECK(reply.outcome == ResolveOutcome::kActive);
  REQUIRE(reply.expire_time.has_value());
  CHECK(*reply.expire_time == *link.expire_time);
}

TEST_CASE("a link past its expire_time is kExpired", "[edge/upstream][contract]") {
  auto upstream = NewContractUpstream();
  ContractLink link{Url("expired")};
  link.expire_time = upstream->Now() + absl::Seconds(1);
  const std::string code = upstream->CreateLink(link);
  upstream->Elapse(absl::Milliseconds(1500));
  const ResolveReply reply = ResolveAndWait(upstream->resolver(), code).reply;
  CHECK(reply.outcome == ResolveOutcome::kExpired);
  CHECK(reply.location.empty());
  CHECK(reply.error.ok());
}

TEST_CASE("a revoked link is kRevoked", "[edge/upstream][contract]") {
  auto upstream = NewContractUpstream();
  const std::string code = upstream->CreateLink(ContractLink(Url("revoked")));
  upstream->Revoke(code);
  const ResolveReply reply = ResolveAndWait(upstream->resolver(), code).reply;
  CHECK(reply.outcome == ResolveOutcome::kRevoked);
  CHECK(reply.location.empty());
  CHECK(reply.error.ok());
}

TEST_CASE("a code or alias no link has is kNotFound", "[edge/upstream][contract]") {
  auto upstream = NewContractUpstream();
  for (const std::string& code : {upstream->UnknownCode(), std::string("no-such-alias")}) {
    INFO(code);
    const ResolveReply reply = ResolveAndWait(upstream->resolver(), code).reply;
    CHECK(reply.outcome == ResolveOutcome::kNotFound);
    CHECK(reply.error.ok());
  }
}

TEST_CASE("a code that is neither a short code nor an alias is kInvalid",
          "[edge/upstream][contract]") {
  auto upstream = NewContractUpstream();
  for (const std::string& code :
       {std::string("bad.code"), std::string("a/b"), std::string(65, 'a'), std::string("")}) {
    INFO('"' << code << '"');
    const ResolveReply reply = ResolveAndWait(upstream->resolver(), code).reply;
    CHECK(reply.outcome == ResolveOutcome::kInvalid);
  }
}

TEST_CASE("ResolveBatch answers one reply per code, in order, as Resolve would",
          "[edge/upstream][contract]") {
  auto upstream = NewContractUpstream();
  const std::string active = upstream->CreateLink(ContractLink(Url("batch-a")));
  ContractLink permanent{Url("batch-p")};
  permanent.redirect_status = 308;
  const std::string moved = upstream->CreateLink(permanent);
  const std::string revoked = upstream->CreateLink(ContractLink(Url("batch-r")));
  upstream->Revoke(revoked);
  const std::vector<std::string> codes = {
      active, upstream->UnknownCode(), revoked, "bad.code", moved, active};
  const AnsweredBatch answered =
      ResolveBatchAndWait(upstream->resolver(), codes, Clock::now() + std::chrono::seconds(10));
  CHECK(answered.thread != std::this_thread::get_id());
  REQUIRE(answered.replies.size() == codes.size());
  for (size_t i = 0; i < codes.size(); ++i) {
    INFO("code " << i << ": " << codes[i]);
    const ResolveReply one = ResolveAndWait(upstream->resolver(), codes[i]).reply;
    CHECK(answered.replies[i].outcome == one.outcome);
    CHECK(answered.replies[i].location == one.location);
    CHECK(answered.replies[i].redirect_status == one.redirect_status);
  }
  CHECK(answered.replies[0].outcome == ResolveOutcome::kActive);
  CHECK(answered.replies[1].outcome == ResolveOutcome::kNotFound);
  CHECK(answered.replies[2].outcome == ResolveOutcome::kRevoked);
  CHECK(answered.replies[3].outcome == ResolveOutcome::kInvalid);
  CHECK(answered.replies[4].redirect_status == 308);
  CHECK(answered.replies[5].location == answered.replies[0].location);
}

TEST_CASE("a deadline already past is answered kUnavailable with DEADLINE_EXCEEDED",
          "[edge/upstream][contract]") {
  auto upstream = NewContractUpstream();
  const std::string code = upstream->CreateLink(ContractLink(Url("late")));
  const Clock::time_point past = Clock::now() - std::chrono::milliseconds(1);
  const ResolveReply one = ResolveAndWait(upstream->resolver(), code, past).reply;
  CHECK(one.outcome == ResolveOutcome::kUnavailable);
  CHECK(absl::IsDeadlineExceeded(one.error));
  const AnsweredBatch batch = ResolveBatchAndWait(upstream->resolver(), {code, code}, past);
  REQUIRE(batch.replies.size() == 2);
  for (const ResolveReply& reply : batch.replies) {
    CHECK(reply.outcome == ResolveOutcome::kUnavailable);
    CHECK(absl::IsDeadlineExceeded(reply.error));
  }
}

TEST_CASE("an upstream that stops is not ready and answers kUnavailable; back, it answers again",
          "[edge/upstream][contract]") {
  auto upstream = NewContractUpstream();
  const std::string url = Url("outage");
  const std::string code = upstream->CreateLink(ContractLink(url));
  // Readiness follows the connection, which the first ask may start.
  CHECK(Eventually([&] { return upstream->resolver().Ready(); }));
  CHECK(ResolveAndWait(upstream->resolver(), code).reply.outcome == ResolveOutcome::kActive);

  upstream->Stop();
  CHECK(Eventually([&] { return !upstream->resolver().Ready(); }));
  const ResolveReply down = ResolveAndWait(upstream->resolver(), code).reply;
  CHECK(down.outcome == ResolveOutcome::kUnavailable);
  CHECK_FALSE(down.error.ok());
  const AnsweredBatch batch = ResolveBatchAndWait(upstream->resolver(), {code, "other"},
                                                  Clock::now() + std::chrono::seconds(10));
  REQUIRE(batch.replies.size() == 2);
  CHECK(batch.replies[0].outcome == ResolveOutcome::kUnavailable);
  CHECK(batch.replies[1].outcome == ResolveOutcome::kUnavailable);

  upstream->Restart();
  CHECK(Eventually([&] { return upstream->resolver().Ready(); }));
  const ResolveReply back = ResolveAndWait(upstream->resolver(), code).reply;
  CHECK(back.outcome == ResolveOutcome::kActive);
  CHECK(back.location == url);
}

}  // namespace
}  // namespace shortener::edge::testing
