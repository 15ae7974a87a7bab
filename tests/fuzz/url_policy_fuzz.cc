// Fuzzes lib/url/url_policy.h: UrlPolicy::Normalize, the long-URL policy
// every Shorten call passes through, and CanonicalDomain, which reads the
// operators' domain lists.
//
// Input: the raw long URL. Invariants, besides no memory error or UB:
//  - a refusal is INVALID_ARGUMENT with a message starting "long_url: ";
//  - an accepted URL is at most max_length bytes of printable ASCII (no
//    space, control or non-ASCII byte, none of "<>`{}|^\ and the double
//    quote), starts with an allowed scheme and "://", has a canonical host
//    that is neither one of our short domains nor on the deny list (nor
//    under one), which HostOfUrl reads as this harness does, and is a
//    fixed point: Normalize(result) == result;
//  - CanonicalDomain's result is canonical again (a fixed point) and has
//    no upper-case letter and no trailing dot.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "lib/url/host.h"
#include "lib/url/host_name.h"
#include "lib/url/url_policy.h"
#include "tests/fuzz/fuzz_check.h"

namespace shortener::url {
namespace {

constexpr size_t kMaxLength = 2048;
const std::vector<std::string> kShortDomains = {"sho.rt", "go.example"};
const std::vector<std::string> kDeniedDomains = {"evil.example", "xn--bcher-bse-67a3d.de", "[::2]",
                                                 "10.0.0.1"};

const UrlPolicy& Policy() {
  static const UrlPolicy* policy = [] {
    UrlPolicyOptions options;
    options.max_length = kMaxLength;
    options.short_domains = kShortDomains;
    options.denied_domains = kDeniedDomains;
    return new UrlPolicy(options);
  }();
  return *policy;
}

bool IsForbiddenByte(unsigned char c) {
  return c <= 0x20 || c >= 0x7f ||
         absl::string_view("\"<>\\`{}|^").find(static_cast<char>(c)) != absl::string_view::npos;
}

// The host of a normalised URL: between "://" and the first '/', '?' or
// '#', without the port (the brackets of an IPv6 address kept).
absl::string_view HostOf(absl::string_view url) {
  url.remove_prefix(url.find("://") + 3);
  url = url.substr(0, url.find_first_of("/?#"));
  const size_t colon = url.rfind(':');
  if (colon != absl::string_view::npos && url.find(']', colon) == absl::string_view::npos) {
    url = url.substr(0, colon);
  }
  return url;
}

void CheckAccepted(const std::string& url) {
  FUZZ_CHECK(!url.empty() && url.size() <= kMaxLength);
  for (char c : url) FUZZ_CHECK(!IsForbiddenByte(static_cast<unsigned char>(c)));
  FUZZ_CHECK(absl::StartsWith(url, "http://") || absl::StartsWith(url, "https://"));
  absl::string_view host = HostOf(url);
  FUZZ_CHECK(HostOfUrl(url) == host);  // the library's reading, the same
  FUZZ_CHECK(!host.empty() && host.back() != '.');
  absl::StatusOr<std::string> canonical = internal::CanonicalHost(host);
  FUZZ_CHECK(canonical.ok() && *canonical == host);
  for (const std::vector<std::string>* list : {&kShortDomains, &kDeniedDomains}) {
    for (const std::string& domain : *list) FUZZ_CHECK(!internal::IsSameOrSubdomain(host, domain));
  }
  absl::StatusOr<std::string> again = Policy().Normalize(url);
  FUZZ_CHECK(again.ok() && *again == url);
}

void CheckDomain(absl::string_view entry) {
  absl::StatusOr<std::string> domain = CanonicalDomain(entry);
  if (!domain.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(domain.status()));
    return;
  }
  FUZZ_CHECK(!domain->empty() && domain->back() != '.');
  for (char c : *domain) FUZZ_CHECK(!(c >= 'A' && c <= 'Z'));
  absl::StatusOr<std::string> again = CanonicalDomain(*domain);
  FUZZ_CHECK(again.ok() && *again == *domain);
}

}  // namespace
}  // namespace shortener::url

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shortener::url;
  const absl::string_view raw(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::string> url = Policy().Normalize(raw);
  if (url.ok()) {
    CheckAccepted(*url);
  } else {
    FUZZ_CHECK(absl::IsInvalidArgument(url.status()));
    FUZZ_CHECK(absl::StartsWith(url.status().message(), "long_url: "));
  }
  // Domain list entries are short; their parser sees the same bytes.
  if (size <= 300) CheckDomain(raw);
  return 0;
}
