// Validation and normalisation of the long URLs we are asked to shorten.
//
// A long URL is parsed by libcurl's URL API (never by our own grammar); this
// library adds the checks a public shortener needs around it: allowed
// schemes, no credentials, no whitespace or control characters, bounded
// length, host names that are RFC 1123 host names label by label, no links
// back to our own short domains (redirect loops), a deny list, and no
// private or local targets (loopback, private and link-local addresses in
// any spelling, localhost; unless allowed). The result is one canonical
// spelling, so that equal targets compare
// equal and Normalize(Normalize(x)) == Normalize(x).
//
// Thread safety: everything but the deny list is fixed at construction. The
// deny list can be replaced (SetDeniedDomains, e.g. when its file is
// reloaded) while Normalize runs on any number of threads: each call uses
// the whole old list or the whole new one, never a mix.
#ifndef SHORTENER_LIB_URL_URL_POLICY_H_
#define SHORTENER_LIB_URL_URL_POLICY_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
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
  // Deny list, subdomains included; replaceable later with
  // UrlPolicy::SetDeniedDomains. Default empty.
  std::vector<std::string> denied_domains;
  // Whether hosts that are not public targets may be shortened: loopback,
  // private, link-local, unspecified, multicast and reserved addresses (in
  // every spelling, IPv4 inside IPv6 included), localhost and other local
  // names, names of one label (internal::NonPublicHostReason). A short link
  // to one sends every clicker's browser, and every link-preview fetcher, to
  // a machine on their own network or to the fetcher itself. Default false
  // (refused); true for a shortener that serves an intranet.
  bool allow_private_targets = false;
};

// OK if `schemes` (for UrlPolicyOptions::allowed_schemes) names at least one
// scheme and each has RFC 3986 syntax (a letter, then letters, digits, "+",
// "-" or "."). Otherwise INVALID_ARGUMENT naming the bad entry, e.g.
//   scheme "http:" is not a scheme name (a letter, then letters, digits, "+", "-", ".")
absl::Status ValidateSchemes(const std::vector<std::string>& schemes);

// Returns a domain list entry in the form domain lists compare: leading dots
// dropped (".example.com" is accepted, with the same meaning as
// "example.com"), lower case, IDN in punycode, no trailing dot, a bare IPv6
// address put in brackets. INVALID_ARGUMENT if `entry` is not a host name,
// an IPv4 or an IPv6 address (a URL, "*.example.com", a name with a space),
// with a message that quotes it. UrlPolicy itself accepts any entry (one
// that is not a name can match no host); callers that read lists from
// operators check each entry with this first.
absl::StatusOr<std::string> CanonicalDomain(absl::string_view entry);

// Validates and normalises long URLs. Thread-safe (see the file comment).
// Domain entries are compared case-insensitively, after IDN conversion to
// punycode and without a trailing dot; "sho.rt" covers "a.sho.rt" but not
// "notsho.rt". Checking a host costs one hash look-up per label, however
// long the lists.
class UrlPolicy {
 public:
  explicit UrlPolicy(UrlPolicyOptions options);

  UrlPolicy(const UrlPolicy&) = delete;
  UrlPolicy& operator=(const UrlPolicy&) = delete;

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
  //   long_url: host "127.0.0.1" is a loopback address: private and local
  //     targets are refused (shorten-service --allow_private_targets allows
  //     them)
  // Positions are 0-based byte offsets into `raw`. Fails with INTERNAL only
  // if libcurl runs out of memory.
  absl::StatusOr<std::string> Normalize(absl::string_view raw) const;

  // Replaces the whole deny list (entries as in
  // UrlPolicyOptions::denied_domains). Calls of Normalize already running
  // finish with the list they started with; calls starting after this
  // returns use the new one.
  void SetDeniedDomains(const std::vector<std::string>& domains);

  // The number of distinct entries on the deny list now.
  size_t DeniedDomainCount() const;

 private:
  using DomainSet = absl::flat_hash_set<std::string>;  // canonical hosts

  // Checks the parsed, normalised host against both domain lists.
  absl::Status CheckHost(const std::string& host) const;

  const size_t max_length_;
  const bool allow_private_targets_;
  const std::vector<std::string> allowed_schemes_;  // lower-case
  const DomainSet short_domains_;
  // Read with std::atomic_load and replaced with std::atomic_store (never
  // null): a reader holds its own reference to the snapshot it checks, so a
  // swap cannot free a list in use. (A std::mutex would do too; abseil's
  // Mutex would not be seen by TSan in this build.)
  std::shared_ptr<const DomainSet> denied_domains_;
};

}  // namespace shortener::url

#endif  // SHORTENER_LIB_URL_URL_POLICY_H_
