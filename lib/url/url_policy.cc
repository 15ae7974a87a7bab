#include "lib/url/url_policy.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
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

// `entry` without its leading dots, a bare IPv6 address in brackets.
std::string DomainText(absl::string_view entry) {
  while (!entry.empty() && entry.front() == '.') entry.remove_prefix(1);
  std::string text(entry);
  if (text.find(':') != std::string::npos && text.front() != '[') {
    text = absl::StrCat("[", text, "]");
  }
  return text;
}

// Domain list entries get the spelling hosts get, so that "Sho.RT.",
// "bücher.de" and "::1" match what Normalize sees. An entry that is not a
// valid name cannot match a valid host; it is kept lower-cased, not dropped,
// so that nothing silently widens.
absl::flat_hash_set<std::string> CanonicalDomains(const std::vector<std::string>& domains) {
  absl::flat_hash_set<std::string> result;
  for (const std::string& domain : domains) {
    std::string text = DomainText(domain);
    if (text.empty()) continue;
    absl::StatusOr<std::string> canonical = internal::CanonicalHost(text);
    result.insert(canonical.ok() ? *std::move(canonical) : absl::AsciiStrToLower(text));
  }
  return result;
}

// The entry of `domains` that covers `host`, or nullptr: `host` itself, then
// each parent domain ("a.b.c", "b.c", "c"), the most specific first. The
// same matching as internal::IsSameOrSubdomain, one look-up per label.
const std::string* FindCovering(const absl::flat_hash_set<std::string>& domains,
                                absl::string_view host) {
  while (true) {
    const auto it = domains.find(host);
    if (it != domains.end()) return &*it;
    const size_t dot = host.find('.');
    if (dot == absl::string_view::npos) return nullptr;
    host.remove_prefix(dot + 1);
  }
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

absl::Status ValidateSchemes(const std::vector<std::string>& schemes) {
  if (schemes.empty()) return absl::InvalidArgumentError("must name at least one scheme");
  for (const std::string& scheme : schemes) {
    if (!internal::IsValidScheme(scheme)) {
      return absl::InvalidArgumentError(
          absl::StrCat("scheme ", internal::QuoteForMessage(scheme),
                       R"( is not a scheme name (a letter, then letters, digits, "+", "-", "."))"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> CanonicalDomain(absl::string_view entry) {
  const std::string quoted = internal::QuoteForMessage(entry);
  // The two mistakes an operator is likely to make get a hint of their own.
  if (absl::StrContains(entry, "/")) {
    return absl::InvalidArgumentError(
        absl::StrCat(quoted, " is not a domain name (write the host alone, not a URL)"));
  }
  if (std::any_of(entry.begin(), entry.end(), [](char c) {
        return absl::ascii_isspace(static_cast<unsigned char>(c)) ||
               absl::ascii_iscntrl(static_cast<unsigned char>(c));
      })) {
    return absl::InvalidArgumentError(
        absl::StrCat(quoted, " is not a domain name (it contains a space or control character)"));
  }
  if (absl::StartsWith(entry, "*")) {
    return absl::InvalidArgumentError(absl::StrCat(
        quoted, " is not a domain name (no wildcards: subdomains are always included)"));
  }
  const std::string text = DomainText(entry);
  if (text.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(quoted, " is not a domain name"));
  }
  absl::StatusOr<std::string> canonical = internal::CanonicalHost(text);
  if (!canonical.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(quoted, " is not a domain name or IP address (",
                                                   canonical.status().message(), ")"));
  }
  return canonical;
}

UrlPolicy::UrlPolicy(UrlPolicyOptions options)
    : max_length_(options.max_length),
      allow_private_targets_(options.allow_private_targets),
      allowed_schemes_(LowerAll(std::move(options.allowed_schemes))),
      short_domains_(CanonicalDomains(options.short_domains)),
      denied_domains_(std::make_shared<const DomainSet>(CanonicalDomains(options.denied_domains))) {
}

void UrlPolicy::SetDeniedDomains(const std::vector<std::string>& domains) {
  // Built before the swap: readers never wait for the canonicalisation.
  std::shared_ptr<const DomainSet> next =
      std::make_shared<const DomainSet>(CanonicalDomains(domains));
  std::atomic_store(&denied_domains_, std::move(next));
}

size_t UrlPolicy::DeniedDomainCount() const { return std::atomic_load(&denied_domains_)->size(); }

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
  // Our own reference: the list cannot be freed by a swap while we read it.
  const std::shared_ptr<const DomainSet> denied = std::atomic_load(&denied_domains_);
  if (const std::string* domain = FindCovering(*denied, host)) {
    return Invalid(absl::StrCat("host ", internal::QuoteForMessage(host), " is on the deny list",
                                SubdomainNote(host, *domain)));
  }
  if (!allow_private_targets_) {
    const std::string reason = internal::NonPublicHostReason(host);
    if (!reason.empty()) {
      return Invalid(absl::StrCat("host ", internal::QuoteForMessage(host), " is ", reason,
                                  ": private and local targets are refused (shorten-service "
                                  "--allow_private_targets allows them)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace shortener::url
