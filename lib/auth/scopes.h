// What an API key may do: a set of scopes, parsed from and printed as a
// comma-separated list ("shorten,resolve"), with `admin` implying all others.
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
  kRecordClicks,  // "record_clicks": report clicks (the edge)
  kAdmin,         // "admin": everything, any owner's links, key management
};
inline constexpr int kScopeCount = 6;

// The lower-case wire name: "shorten", "resolve", "revoke", "stats",
// "record_clicks", "admin".
absl::string_view ScopeName(Scope scope);

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

// OK if `granted` has `needed`, else PERMISSION_DENIED
// `api key lacks scope "revoke"`: the one message every RPC uses.
absl::Status RequireScope(const ScopeSet& granted, Scope needed);

}  // namespace shortener::auth

#endif  // SHORTENER_LIB_AUTH_SCOPES_H_
