#include "lib/url/url_policy.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/common/status_macros.h"
#include "lib/url/curl_url.h"
#include "lib/url/host.h"
#include "lib/url/url_scan.h"

namespace shortener::url {
namespace {

absl::Status Invalid(absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("long_url: ", message));
}

std::vector<std::string> LowerAll(std::vector<std::string> values) {
  for (std::string& value : values) absl::AsciiStrToLower(&value);
  return values;
}

// Domain list entries get the spelling hosts get, so that "Sho.RT.",
// "bücher.de" and "::1" match what Normalize sees. An entry that is not a
// valid name cannot match a valid host; it is kept lower-cased, not dropped,
// so that nothing silently widens.
std::vector<std::string> CanonicalDomains(const std::vector<std::string>& domains) {
  std::vector<std::string> result;
  for (absl::string_view domain : domains) {
    while (!domain.empty() && domain.front() == '.') domain.remove_prefix(1);
    if (domain.empty()) continue;
    std::string entry(domain);
    if (entry.find(':') != std::string::npos && entry.front() != '[') {
      entry = absl::StrCat("[", entry, "]");
    }
    absl::StatusOr<std::string> canonical = internal::CanonicalHost(entry);
    result.push_back(canonical.ok() ? *std::move(canonical) : absl::AsciiStrToLower(entry));
  }
  return result;
}

// The one domain of `domains` that covers `host`, or nullptr.
const std::string* FindCovering(const std::vector<std::string>& domains, absl::string_view host) {
  for (const std::string& domain : domains) {
    if (internal::IsSameOrSubdomain(host, domain)) return &domain;
  }
  return nullptr;
}

std::string SubdomainNote(absl::string_view host, const std::string& domain) {
  if (host == domain) return "";
  return absl::StrCat(" (a subdomain of ", internal::QuoteForMessage(domain), ")");
}

absl::Status CheckLength(size_t length, size_t max_length, absl::string_view when) {
  if (length <= max_length) return absl::OkStatus();
  return Invalid(
      absl::StrFormat("is %d bytes%s, longer than the limit of %d", length, when, max_length));
}

// Port 0 is valid syntax (libcurl takes it) but no server listens there.
absl::Status CheckPort(absl::string_view port) {
  if (port == "0") return Invalid("bad port number 0 (must be 1 to 65535)");
  return absl::OkStatus();
}

std::string Assemble(const internal::UrlParts& parts, absl::string_view host) {
  std::string url = absl::StrCat(parts.scheme, "://", host);
  if (!parts.port.empty()) absl::StrAppend(&url, ":", parts.port);
  absl::StrAppend(&url, internal::EncodeDisallowedBytes(parts.path));
  if (parts.query) {
    absl::StrAppend(&url, "?", internal::EncodeDisallowedBytes(*parts.query));
  }
  if (parts.fragment) {
    absl::StrAppend(&url, "#", internal::EncodeDisallowedBytes(*parts.fragment));
  }
  return url;
}

}  // namespace

UrlPolicy::UrlPolicy(UrlPolicyOptions options)
    : max_length_(options.max_length),
      allowed_schemes_(LowerAll(std::move(options.allowed_schemes))),
      short_domains_(CanonicalDomains(options.short_domains)),
      denied_domains_(CanonicalDomains(options.denied_domains)) {}

absl::StatusOr<std::string> UrlPolicy::Normalize(absl::string_view raw) const {
  if (raw.empty()) return Invalid("is empty");
  // Length first: every later step costs time proportional to it.
  SHORTENER_RETURN_IF_ERROR(CheckLength(raw.size(), max_length_, ""));
  SHORTENER_RETURN_IF_ERROR(internal::CheckCharacters(raw));
  SHORTENER_ASSIGN_OR_RETURN(const std::string scheme, internal::ExtractScheme(raw));
  if (std::find(allowed_schemes_.begin(), allowed_schemes_.end(), scheme) ==
      allowed_schemes_.end()) {
    return Invalid(absl::StrFormat("scheme %s is not allowed (allowed: %s)",
                                   internal::QuoteForMessage(scheme),
                                   absl::StrJoin(allowed_schemes_, ", ")));
  }
  SHORTENER_RETURN_IF_ERROR(internal::CheckAuthorityPresent(raw, scheme.size()));
  SHORTENER_ASSIGN_OR_RETURN(const internal::UrlParts parts, internal::ParseWithCurl(raw));
  // Our scan and libcurl must agree on the scheme; if they do not, the two
  // parsers read the string differently and we trust neither.
  if (parts.scheme != scheme) return Invalid("is malformed (ambiguous scheme)");
  if (parts.has_zone_id) return Invalid("must not have an IPv6 zone id");
  absl::StatusOr<std::string> host = internal::CanonicalHost(parts.host);
  if (!host.ok()) return Invalid(host.status().message());
  SHORTENER_RETURN_IF_ERROR(CheckHost(*host));
  SHORTENER_RETURN_IF_ERROR(CheckPort(parts.port));
  std::string normalized = Assemble(parts, *host);
  // Punycode and percent-encoding make a URL longer.
  SHORTENER_RETURN_IF_ERROR(CheckLength(normalized.size(), max_length_, " once normalised"));
  return normalized;
}

absl::Status UrlPolicy::CheckHost(const std::string& host) const {
  if (const std::string* domain = FindCovering(short_domains_, host)) {
    return Invalid(absl::StrCat("host ", internal::QuoteForMessage(host),
                                " is one of our own short domains", SubdomainNote(host, *domain)));
  }
  if (const std::string* domain = FindCovering(denied_domains_, host)) {
    return Invalid(absl::StrCat("host ", internal::QuoteForMessage(host), " is on the deny list",
                                SubdomainNote(host, *domain)));
  }
  return absl::OkStatus();
}

}  // namespace shortener::url
