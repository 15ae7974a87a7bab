// Scopes: parsing, canonical printing, admin implying every other scope.
#include "lib/auth/scopes.h"

#include <catch2/catch.hpp>
#include <string>

#include "tests/support/status_matchers.h"

namespace shortener::auth {
namespace {

using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

constexpr Scope kAll[] = {Scope::kShorten, Scope::kResolve,      Scope::kRevoke,
                          Scope::kStats,   Scope::kRecordClicks, Scope::kAdmin};

TEST_CASE("scope names are the wire names", "[auth]") {
  CHECK(ScopeName(Scope::kShorten) == "shorten");
  CHECK(ScopeName(Scope::kResolve) == "resolve");
  CHECK(ScopeName(Scope::kRevoke) == "revoke");
  CHECK(ScopeName(Scope::kStats) == "stats");
  CHECK(ScopeName(Scope::kRecordClicks) == "record_clicks");
  CHECK(ScopeName(Scope::kAdmin) == "admin");
}

TEST_CASE("scope lists parse and print canonically", "[auth]") {
  auto set = ScopeSet::Parse("shorten,resolve");
  REQUIRE_THAT(set, IsOk());
  CHECK(set->Has(Scope::kShorten));
  CHECK(set->Has(Scope::kResolve));
  CHECK_FALSE(set->Has(Scope::kRevoke));
  CHECK_FALSE(set->Has(Scope::kStats));
  CHECK_FALSE(set->Has(Scope::kRecordClicks));
  CHECK_FALSE(set->Has(Scope::kAdmin));
  CHECK(set->ToString() == "resolve,shorten");
  CHECK(*set == (ScopeSet{Scope::kResolve, Scope::kShorten}));

  auto spaced = ScopeSet::Parse(" stats , record_clicks,stats ");
  REQUIRE_THAT(spaced, IsOk());
  CHECK(spaced->ToString() == "record_clicks,stats");

  auto empty = ScopeSet::Parse("");
  REQUIRE_THAT(empty, IsOk());
  CHECK(empty->empty());
  CHECK(empty->ToString().empty());

  // Every subset round-trips through its canonical form.
  for (int mask = 0; mask < (1 << kScopeCount); ++mask) {
    ScopeSet s;
    for (int i = 0; i < kScopeCount; ++i) {
      if (mask & (1 << i)) s.Add(kAll[i]);
    }
    auto again = ScopeSet::Parse(s.ToString());
    REQUIRE_THAT(again, IsOk());
    CHECK(*again == s);
  }
  ScopeSet all(std::initializer_list<Scope>{Scope::kShorten, Scope::kResolve, Scope::kRevoke,
                                            Scope::kStats, Scope::kRecordClicks, Scope::kAdmin});
  CHECK(all.ToString() == "admin,record_clicks,resolve,revoke,shorten,stats");
}

TEST_CASE("unknown or empty scope names are INVALID_ARGUMENT naming them", "[auth]") {
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  CHECK_THAT(ScopeSet::Parse("shorten,delete"),
             HasCodeAndMessage(kInvalid, "scopes: unknown scope \"delete\" (known: admin, "));
  CHECK_THAT(ScopeSet::Parse("Shorten"), HasCodeAndMessage(kInvalid, "unknown scope \"Shorten\""));
  CHECK_THAT(ScopeSet::Parse("shorten resolve"),
             HasCodeAndMessage(kInvalid, "unknown scope \"shorten resolve\""));
  CHECK_THAT(ScopeSet::Parse("shorten,,resolve"),
             HasCodeAndMessage(kInvalid, "empty scope name at position 2"));
  CHECK_THAT(ScopeSet::Parse("shorten,"), HasCodeAndMessage(kInvalid, "position 2"));
  CHECK_THAT(ScopeSet::Parse("\n\x01"), HasCodeAndMessage(kInvalid, "\\001"));
}

TEST_CASE("admin implies every other scope", "[auth]") {
  const ScopeSet admin{Scope::kAdmin};
  for (Scope s : kAll) {
    INFO(ScopeName(s));
    CHECK(admin.Has(s));
    CHECK_THAT(RequireScope(admin, s), IsOk());
  }
  CHECK(admin.ToString() == "admin");  // printed as granted, not expanded
  const ScopeSet edge{Scope::kResolve, Scope::kRecordClicks};
  CHECK_FALSE(edge.Has(Scope::kAdmin));
  CHECK_THAT(RequireScope(edge, Scope::kResolve), IsOk());
  CHECK_THAT(
      RequireScope(edge, Scope::kRevoke),
      HasCodeAndMessage(absl::StatusCode::kPermissionDenied, "api key lacks scope \"revoke\""));
  CHECK_THAT(RequireScope(ScopeSet(), Scope::kShorten),
             HasCodeAndMessage(absl::StatusCode::kPermissionDenied, "\"shorten\""));
}

}  // namespace
}  // namespace shortener::auth
