// Validation and normalisation of the long URLs we are asked to shorten.
//
// A long URL is parsed by libcurl's URL API (never by our own grammar); this
// library adds the checks a public shortener needs around it: allowed
// schemes, no credentials, no whitespace or control characters, bounded
// length, no links back to our own short domains (redirect loops) and a deny
// list. The result is one canonical spelling, so that equal targets compare
// equal and Normalize(Normalize(x)) == Normalize(x).
//
// Thread safety: UrlPolicy is immutable after construction; Normalize may be
// called concurrently from any number of threads.
#ifndef SHORTENER_LIB_URL_URL_POLICY_H_
#define SHORTENER_LIB_URL_URL_POLICY_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shortener::url {

struct UrlPolicyOptions {
  // Upper bound, in bytes, of the input and of the normalised result.
  // Default 2048.
  size_t max_length = 2048;
  // Schemes accepted, compared case-insensitively. Default {"http", "https"}.
  std::vector<std::string> allowed_schemes = {"http", "https"};
  // Hosts serving our short links: refused, subdomains too, so that a short
  // link can never redirect to another short link. Default empty.
  std::vector<std::string> short_domains;
  // Deny list, subdomains included. Default empty.
  std::vector<std::string> denied_domains;
};

// Validates and normalises long URLs. Immutable after construction;
// thread-safe. Domain entries are compared case-insensitively, after IDN
// conversion to punycode and without a trailing dot; "sho.rt" covers
// "a.sho.rt" but not "notsho.rt".
class UrlPolicy {
 public:
  explicit UrlPolicy(UrlPolicyOptions options);

  // Returns the normalised absolute URL:
  //   scheme and host lower-cased, IDN host in punycode, trailing dot of the
  //   host removed, default port (80 for http, 443 for https) removed, empty
  //   path as "/", dot segments removed, non-ASCII bytes and the ASCII
  //   characters RFC 3986 never allows ("<>`{}|^ and the double quote) in
  //   path, query and fragment percent-encoded, existing percent-encoding
  //   kept byte for byte (never decoded), query and fragment otherwise
  //   unchanged (an empty fragment "#" is dropped; an empty query "?" kept).
  // Fails with INVALID_ARGUMENT whose message starts with "long_url: " and
  // names the problem, e.g.
  //   long_url: scheme "javascript" is not allowed (allowed: http, https)
  //   long_url: contains a control character at position 12 (0x0A, LF)
  //   long_url: host "sho.rt" is one of our own short domains
  // Positions are 0-based byte offsets into `raw`. Fails with INTERNAL only
  // if libcurl runs out of memory.
  absl::StatusOr<std::string> Normalize(absl::string_view raw) const;

 private:
  // Checks the parsed, normalised host against both domain lists.
  absl::Status CheckHost(const std::string& host) const;

  const size_t max_length_;
  const std::vector<std::string> allowed_schemes_;  // lower-case
  const std::vector<std::string> short_domains_;    // canonical hosts
  const std::vector<std::string> denied_domains_;   // canonical hosts
};

}  // namespace shortener::url

#endif  // SHORTENER_LIB_URL_URL_POLICY_H_
