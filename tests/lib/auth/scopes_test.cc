// Scopes: parsing, canonical printing, admin implying every other scope, and
// which scopes tenant and infrastructure keys may hold.
#include "lib/auth/scopes.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/support/status_matchers.h"

namespace shortener::auth {
namespace {

using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

constexpr Scope kAll[] = {Scope::kShorten,
                          Scope::kResolve,
                          Scope::kRevoke,
                          Scope::kStats,
                          Scope::kRecordClicks,
                          Scope::kAdmin,
                          Scope::kWatchInvalidations,
                          Scope::kDelete};
static_assert(sizeof(kAll) / sizeof(kAll[0]) == kScopeCount);

using ::shortener::testing::HasCode;

TEST_CASE("scope names are the wire names", "[lib/auth]") {
  CHECK(ScopeName(Scope::kShorten) == "shorten");
  CHECK(ScopeName(Scope::kResolve) == "resolve");
  CHECK(ScopeName(Scope::kRevoke) == "revoke");
  CHECK(ScopeName(Scope::kStats) == "stats");
  CHECK(ScopeName(Scope::kRecordClicks) == "record_clicks");
  CHECK(ScopeName(Scope::kAdmin) == "admin");
  CHECK(ScopeName(Scope::kWatchInvalidations) == "watch_invalidations");
  CHECK(ScopeName(Scope::kDelete) == "delete");
}

TEST_CASE("scope lists parse and print canonically", "[lib/auth]") {
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
                                            Scope::kStats, Scope::kRecordClicks, Scope::kAdmin,
                                            Scope::kWatchInvalidations, Scope::kDelete});
  CHECK(all.ToString() ==
        "admin,delete,record_clicks,resolve,revoke,shorten,stats,watch_invalidations");
}

TEST_CASE("unknown or empty scope names are INVALID_ARGUMENT naming them", "[lib/auth]") {
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  CHECK_THAT(
      ScopeSet::Parse("shorten,erase"),
      HasCodeAndMessage(kInvalid, "scopes: unknown scope \"erase\" (known: admin, delete, "));
  CHECK_THAT(ScopeSet::Parse("Shorten"), HasCodeAndMessage(kInvalid, "unknown scope \"Shorten\""));
  CHECK_THAT(ScopeSet::Parse("shorten resolve"),
             HasCodeAndMessage(kInvalid, "unknown scope \"shorten resolve\""));
  CHECK_THAT(ScopeSet::Parse("shorten,,resolve"),
             HasCodeAndMessage(kInvalid, "empty scope name at position 2"));
  CHECK_THAT(ScopeSet::Parse("shorten,"), HasCodeAndMessage(kInvalid, "position 2"));
  CHECK_THAT(ScopeSet::Parse("\n\x01"), HasCodeAndMessage(kInvalid, "\\001"));
}

TEST_CASE("admin implies every other scope, the infrastructure ones included", "[lib/auth]") {
  // An admin can create an infrastructure key at will: refusing it
  // record_clicks or watch_invalidations would be no boundary.
  const ScopeSet admin{Scope::kAdmin};
  for (Scope s : kAll) {
    INFO(ScopeName(s));
    CHECK(admin.Has(s));
    CHECK_THAT(RequireScope(admin, s), IsOk());
    CHECK(admin.Granted(s) == (s == Scope::kAdmin));
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

TEST_CASE("resolve no longer implies watching invalidations", "[lib/auth]") {
  const ScopeSet resolver{Scope::kResolve};
  CHECK_FALSE(resolver.Has(Scope::kWatchInvalidations));
  CHECK_THAT(RequireScope(resolver, Scope::kWatchInvalidations),
             HasCodeAndMessage(absl::StatusCode::kPermissionDenied, "\"watch_invalidations\""));
}

TEST_CASE("only infrastructure keys hold record_clicks and watch_invalidations", "[lib/auth]") {
  CHECK(IsInfrastructureScope(Scope::kRecordClicks));
  CHECK(IsInfrastructureScope(Scope::kWatchInvalidations));
  const ScopeSet edge{Scope::kResolve, Scope::kRecordClicks, Scope::kWatchInvalidations};
  CHECK_THAT(ValidateKeyScopes(edge, /*infrastructure=*/true), IsOk());
  CHECK_THAT(ValidateKeyScopes(ScopeSet{Scope::kResolve}, true), IsOk());
  CHECK_THAT(ValidateKeyScopes(ScopeSet{Scope::kRecordClicks}, true), IsOk());
  // A tenant key: the message says why the scope is refused.
  CHECK_THAT(ValidateKeyScopes(ScopeSet{Scope::kResolve, Scope::kRecordClicks}, false),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "scopes: record_clicks is for infrastructure keys only"));
  CHECK_THAT(ValidateKeyScopes(ScopeSet{Scope::kRecordClicks}, false),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "spend another tenant's click budget and inflate its statistics"));
  CHECK_THAT(ValidateKeyScopes(ScopeSet{Scope::kResolve, Scope::kWatchInvalidations}, false),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "could watch every tenant's revocations"));
  // Every tenant scope on a tenant key is fine; none on an infrastructure key.
  for (Scope s : kAll) {
    INFO(ScopeName(s));
    const ScopeSet one{s};
    if (IsInfrastructureScope(s)) {
      CHECK_THAT(ValidateKeyScopes(one, false), HasCode(absl::StatusCode::kInvalidArgument));
      CHECK_THAT(ValidateKeyScopes(one, true), IsOk());
    } else if (s == Scope::kResolve) {
      CHECK_THAT(ValidateKeyScopes(one, false), IsOk());
      CHECK_THAT(ValidateKeyScopes(one, true), IsOk());
    } else {
      CHECK_THAT(ValidateKeyScopes(one, false), IsOk());
      CHECK_THAT(ValidateKeyScopes(one, true),
                 HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                   absl::StrCat("not \"", ScopeName(s), "\"")));
    }
  }
  // admin is a tenant key's scope: an infrastructure key cannot be an admin.
  CHECK_THAT(ValidateKeyScopes(ScopeSet{Scope::kAdmin, Scope::kResolve}, true),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "not \"admin\""));
  CHECK_THAT(ValidateKeyScopes(ScopeSet{Scope::kAdmin, Scope::kRecordClicks}, false),
             HasCode(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace shortener::auth
