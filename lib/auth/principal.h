// Principal: who an authenticated call acts as. Built from a stored API key
// by the service (services/shorten) and handed to the domain logic, which
// uses the tenant for ownership and the allowlist for target domains.
//
// Thread safety: a value type, shared as std::shared_ptr<const Principal>
// between threads once built.
#ifndef SHORTENER_LIB_AUTH_PRINCIPAL_H_
#define SHORTENER_LIB_AUTH_PRINCIPAL_H_

#include <cstdint>
#include <optional>
#include <string>

#include "lib/auth/domain_allowlist.h"
#include "lib/auth/scopes.h"

namespace shortener::auth {

struct Principal {
  int64_t key_id = 0;
  std::string key_name;         // for logs and messages
  std::string key_hash;         // rate-limit bucket and cache key
  std::string tenant;           // owner of the links this key creates; empty if infrastructure
  bool infrastructure = false;  // an edge's key: no tenant (lib/auth/scopes.h)
  ScopeSet scopes;
  DomainAllowlist allowed_domains;        // empty: every domain
  std::optional<double> rate_per_second;  // unset: no rate limit
  std::optional<int> burst;

  bool admin() const { return scopes.Has(Scope::kAdmin); }
};

}  // namespace shortener::auth

#endif  // SHORTENER_LIB_AUTH_PRINCIPAL_H_
