// The target domains one API key may shorten links to.
//
// Entries:
//   "example.com"    exactly that host.
//   "*.example.com"  any subdomain at any depth (a.example.com,
//                    a.b.example.com) but NOT example.com itself. This is
//                    what the wildcard means in Content-Security-Policy and
//                    (one level deep) in TLS certificates, so a tenant who
//                    writes it has seen it mean this before; one who also
//                    wants the apex lists "example.com" too. Keeping the two
//                    separate lets a tenant allow user subdomains without the
//                    main site, or the reverse.
// Matching is case-insensitive and ignores one trailing dot on either side.
// Internationalised names must already be punycode ("xn--..."): entries are
// letters, digits, '-' and '.', and a host with anything else ('_', '*',
// '%', non-ASCII bytes) never matches a non-empty list.
// An empty list allows every domain (a key without a domain restriction).
// Hosts are compared by suffix on label boundaries, so look-alikes such as
// "evil-example.com" or "example.com.evil.net" never match "example.com".
//
// Thread safety: immutable after Parse; safe to share between threads.
#ifndef SHORTENER_LIB_AUTH_DOMAIN_ALLOWLIST_H_
#define SHORTENER_LIB_AUTH_DOMAIN_ALLOWLIST_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shortener::auth {

class DomainAllowlist {
 public:
  DomainAllowlist() = default;  // empty: allows every domain

  // Parses comma-separated entries ("example.com,*.example.org"; spaces
  // around an entry ignored; "" is the empty list). INVALID_ARGUMENT with a
  // message starting `allowed domains: entry "<entry>": ` naming the rule:
  // empty entry, empty label, '*' not the whole leftmost label, '*' alone,
  // a wildcard over a single label ("*.com"), a character other than
  // [a-z0-9-.] (IDN must be punycode), a label over 63 or a name over 253
  // characters.
  static absl::StatusOr<DomainAllowlist> Parse(absl::string_view comma_separated);
  // The same rules for entries already split (e.g. a text[] column).
  static absl::StatusOr<DomainAllowlist> FromEntries(const std::vector<std::string>& entries);

  // True if the list is empty or `host` (a bare host name: no port, no
  // brackets, no userinfo) matches an entry as described above. A host with
  // an empty label ("a..example.com") never matches a non-empty list.
  bool Allows(absl::string_view host) const;

  bool empty() const { return exact_.empty() && wildcard_parents_.empty(); }

  // The normalised entries (lower case, no trailing dot), sorted and
  // deduplicated, comma-separated: what to store or show.
  std::string ToString() const;

 private:
  absl::flat_hash_set<std::string> exact_;             // "example.com"
  absl::flat_hash_set<std::string> wildcard_parents_;  // "*.example.com" -> "example.com"
};

}  // namespace shortener::auth

#endif  // SHORTENER_LIB_AUTH_DOMAIN_ALLOWLIST_H_
