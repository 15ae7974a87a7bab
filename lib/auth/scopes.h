// What an API key may do: a set of scopes, parsed from and printed as a
// comma-separated list ("shorten,resolve"), with `admin` implying all others,
// and which scopes a key of each kind may hold (ValidateKeyScopes).
//
// Two kinds of key. A tenant key belongs to a tenant (the owner of the links
// it creates) and is what people and campaign tools hold. An infrastructure
// key has no tenant and is what redirect edges hold. Only infrastructure keys
// may hold the infrastructure scopes, record_clicks and watch_invalidations,
// which act on every tenant at once: a tenant holding record_clicks could
// spend another tenant's click budget and inflate its statistics, and one
// holding watch_invalidations could watch every tenant's revocations.
// Infrastructure keys hold nothing else but resolve: they own no links.
//
// `admin` implies every scope, the infrastructure ones included: an admin
// can create an infrastructure key at any time, so refusing it
// record_clicks would add a step, not a boundary. Admin keys are operators'
// keys, never given to tenants.
//
// Thread safety: ScopeSet is a value type; const methods are safe to call
// concurrently.
#ifndef SHORTENER_LIB_AUTH_SCOPES_H_
#define SHORTENER_LIB_AUTH_SCOPES_H_

#include <bitset>
#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shortener::auth {

enum class Scope {
  kShorten,       // "shorten": create links
  kResolve,       // "resolve": look up a code (the edge)
  kRevoke,        // "revoke": revoke own links
  kStats,         // "stats": read own links and their click statistics
  kRecordClicks,  // "record_clicks": report clicks (edges; infrastructure keys only)
  kAdmin,         // "admin": everything, any owner's links, key management
  // "watch_invalidations": the stream of every tenant's revoked codes
  // (edges; infrastructure keys only).
  kWatchInvalidations,
  // "delete": delete own links, their visits and their clicks' statistics
  // (DeleteLink, DeleteLinks): apart from revoke, which undoes nothing a
  // person cannot see again, because it cannot be undone.
  kDelete,
};
inline constexpr int kScopeCount = 8;

// The lower-case wire name: "shorten", "resolve", "revoke", "stats",
// "record_clicks", "admin", "watch_invalidations", "delete".
absl::string_view ScopeName(Scope scope);

// True for record_clicks and watch_invalidations: the scopes only an
// infrastructure key may hold.
bool IsInfrastructureScope(Scope scope);

class ScopeSet {
 public:
  ScopeSet() = default;  // no scopes
  ScopeSet(std::initializer_list<Scope> scopes);

  // Parses comma-separated scope names (exact lower-case names; spaces around
  // a name are ignored; duplicates are harmless; "" is the empty set).
  // INVALID_ARGUMENT with a message starting "scopes: " naming an unknown
  // scope (and listing the known ones) or an empty element ("a,,b").
  static absl::StatusOr<ScopeSet> Parse(absl::string_view comma_separated);

  void Add(Scope scope) { bits_.set(static_cast<size_t>(scope)); }

  // True if `scope` was granted or `admin` was.
  bool Has(Scope scope) const {
    return bits_.test(static_cast<size_t>(scope)) || bits_.test(static_cast<size_t>(Scope::kAdmin));
  }
  // True if `scope` itself was granted (admin aside).
  bool Granted(Scope scope) const { return bits_.test(static_cast<size_t>(scope)); }
  bool empty() const { return bits_.none(); }

  // The granted scopes (not expanded by admin), names sorted alphabetically,
  // comma-separated without spaces: canonical, so Parse(ToString()) == *this
  // and equal sets print the same. "" for the empty set.
  std::string ToString() const;

  friend bool operator==(const ScopeSet& a, const ScopeSet& b) { return a.bits_ == b.bits_; }
  friend bool operator!=(const ScopeSet& a, const ScopeSet& b) { return !(a == b); }

 private:
  std::bitset<kScopeCount> bits_;
};

// OK if a key of this kind may hold `scopes`. INVALID_ARGUMENT, message
// starting "scopes: " and saying why, for a tenant key (infrastructure
// false) holding record_clicks or watch_invalidations, or an infrastructure
// key holding anything but resolve, record_clicks and watch_invalidations.
// KeyAdmin and PgApiKeyStore check with this; the api_keys table's CHECK
// constraints (migration 0008) hold the same rule.
absl::Status ValidateKeyScopes(const ScopeSet& scopes, bool infrastructure);

// OK if `granted` has `needed`, else PERMISSION_DENIED
// `api key lacks scope "revoke"`: the one message every RPC uses.
absl::Status RequireScope(const ScopeSet& granted, Scope needed);

}  // namespace shortener::auth

#endif  // SHORTENER_LIB_AUTH_SCOPES_H_
