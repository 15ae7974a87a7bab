#include "lib/auth/scopes.h"

#include <array>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace shortener::auth {
namespace {

struct ScopeEntry {
  absl::string_view name;
  Scope scope;
};
// Sorted by name: ToString walks this table, so its output is canonical.
constexpr std::array<ScopeEntry, kScopeCount> kScopesByName = {{
    {"admin", Scope::kAdmin},
    {"delete", Scope::kDelete},
    {"record_clicks", Scope::kRecordClicks},
    {"resolve", Scope::kResolve},
    {"revoke", Scope::kRevoke},
    {"shorten", Scope::kShorten},
    {"stats", Scope::kStats},
    {"watch_invalidations", Scope::kWatchInvalidations},
}};

std::string KnownScopes() {
  std::vector<absl::string_view> names;
  for (const ScopeEntry& e : kScopesByName) names.push_back(e.name);
  return absl::StrJoin(names, ", ");
}

}  // namespace

absl::string_view ScopeName(Scope scope) {
  for (const ScopeEntry& e : kScopesByName) {
    if (e.scope == scope) return e.name;
  }
  return "unknown";
}

bool IsInfrastructureScope(Scope scope) {
  return scope == Scope::kRecordClicks || scope == Scope::kWatchInvalidations;
}

ScopeSet::ScopeSet(std::initializer_list<Scope> scopes) {
  for (Scope s : scopes) Add(s);
}

absl::StatusOr<ScopeSet> ScopeSet::Parse(absl::string_view comma_separated) {
  ScopeSet set;
  if (absl::StripAsciiWhitespace(comma_separated).empty()) return set;
  int position = 0;
  for (absl::string_view part : absl::StrSplit(comma_separated, ',')) {
    ++position;
    const absl::string_view name = absl::StripAsciiWhitespace(part);
    if (name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("scopes: empty scope name at position ", position));
    }
    bool found = false;
    for (const ScopeEntry& e : kScopesByName) {
      if (e.name == name) {
        set.Add(e.scope);
        found = true;
        break;
      }
    }
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat(
          "scopes: unknown scope \"", absl::CEscape(name), "\" (known: ", KnownScopes(), ")"));
    }
  }
  return set;
}

std::string ScopeSet::ToString() const {
  std::string out;
  for (const ScopeEntry& e : kScopesByName) {
    if (!bits_.test(static_cast<size_t>(e.scope))) continue;
    if (!out.empty()) out.push_back(',');
    absl::StrAppend(&out, e.name);
  }
  return out;
}

absl::Status ValidateKeyScopes(const ScopeSet& scopes, bool infrastructure) {
  for (const ScopeEntry& e : kScopesByName) {
    if (!scopes.Granted(e.scope)) continue;
    if (infrastructure && !IsInfrastructureScope(e.scope) && e.scope != Scope::kResolve) {
      return absl::InvalidArgumentError(absl::StrCat(
          "scopes: an infrastructure key may hold only resolve, record_clicks and "
          "watch_invalidations, not \"",
          e.name, "\" (it has no tenant to own links or act for; make a tenant key for that)"));
    }
    if (!infrastructure && e.scope == Scope::kRecordClicks) {
      return absl::InvalidArgumentError(
          "scopes: record_clicks is for infrastructure keys only (infrastructure = true, "
          "no tenant): a tenant key holding it could spend another tenant's click budget "
          "and inflate its statistics");
    }
    if (!infrastructure && e.scope == Scope::kWatchInvalidations) {
      return absl::InvalidArgumentError(
          "scopes: watch_invalidations is for infrastructure keys only (infrastructure = "
          "true, no tenant): a tenant key holding it could watch every tenant's revocations");
    }
  }
  return absl::OkStatus();
}

absl::Status RequireScope(const ScopeSet& granted, Scope needed) {
  if (granted.Has(needed)) return absl::OkStatus();
  return absl::PermissionDeniedError(
      absl::StrCat("api key lacks scope \"", ScopeName(needed), "\""));
}

}  // namespace shortener::auth
