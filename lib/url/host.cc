#include "lib/url/host.h"

#include <arpa/inet.h>
#include <idn2.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/common/status_macros.h"
#include "lib/url/url_scan.h"

namespace shortener::url::internal {
namespace {

struct Idn2Free {
  void operator()(uint8_t* p) const { idn2_free(p); }
};

bool IsAscii(absl::string_view s) {
  for (char c : s) {
    if (static_cast<uint8_t>(c) >= 0x80) return false;
  }
  return true;
}

// UTS #46 non-transitional processing first; names it disallows get a
// second chance with transitional processing, exactly as libcurl does.
absl::StatusOr<std::string> ToPunycode(absl::string_view host) {
  const std::string input(host);  // idn2 wants a NUL-terminated string
  const auto lookup = [&input](int flags, std::unique_ptr<uint8_t, Idn2Free>& out) {
    uint8_t* result = nullptr;
    const int rc = idn2_lookup_u8(reinterpret_cast<const uint8_t*>(input.c_str()), &result, flags);
    out.reset(result);
    return rc;
  };
  std::unique_ptr<uint8_t, Idn2Free> ascii;
  int rc = lookup(IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL, ascii);
  if (rc == IDN2_DISALLOWED) rc = lookup(IDN2_NFC_INPUT | IDN2_TRANSITIONAL, ascii);
  if (rc != IDN2_OK) {
    return absl::InvalidArgumentError(
        absl::StrCat("host ", QuoteForMessage(host),
                     " is not a valid internationalised domain name (", idn2_strerror(rc), ")"));
  }
  return std::string(reinterpret_cast<const char*>(ascii.get()));
}

absl::Status Malformed(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("has a malformed host (", why, ")"));
}

bool IsDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
}

// WHATWG's "ends in a number": a last label of decimal digits or "0x" and
// hex digits makes browsers read the whole host as an IPv4 address
// ("a.0x1f" is then no address at all).
bool EndsInNumber(absl::string_view last_label) {
  if (absl::StartsWith(last_label, "0x")) {
    return std::all_of(last_label.begin() + 2, last_label.end(),
                       [](char c) { return absl::ascii_isxdigit(static_cast<unsigned char>(c)); });
  }
  return IsDigits(last_label);
}

// libcurl rewrites every IPv4 spelling it accepts ("0x7f.1", "2130706433",
// "01.2.3.4") as a plain dotted quad, so a host that ends in a number must
// be one: whatever is left is a spelling libcurl did not read as an address
// (with a trailing dot, "0x7f000001." stays a name, which browsers and
// libcurl open as 127.0.0.1 once the dot is gone) or no address at all.
bool IsDottedQuad(absl::string_view host) {
  const std::vector<absl::string_view> parts = absl::StrSplit(host, '.');
  if (parts.size() != 4) return false;
  for (absl::string_view part : parts) {
    if (!IsDigits(part) || part.size() > 3 || (part.size() > 1 && part.front() == '0') ||
        std::stoi(std::string(part)) > 255) {
      return false;
    }
  }
  return true;
}

bool IsHostChar(char c) {
  return absl::ascii_isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'z') || c == '-' ||
         c == '_';
}

// The canonical host must read back the same: libcurl percent-decodes the
// host and lets some decoded bytes through ("exa%25mple" becomes
// "exa%mple"), so we accept only what DNS names and IP literals are made of.
absl::Status CheckHostSyntax(absl::string_view host) {
  if (host.size() > 253) return Malformed("longer than 253 bytes");
  const std::vector<absl::string_view> labels = absl::StrSplit(host, '.');
  for (absl::string_view label : labels) {
    if (label.empty()) return Malformed("empty label");
    if (label.size() > 63) return Malformed("label longer than 63 bytes");
    if (!std::all_of(label.begin(), label.end(), IsHostChar)) {
      return Malformed(absl::StrCat("bad character in ", QuoteForMessage(label)));
    }
  }
  if (EndsInNumber(labels.back()) && !IsDottedQuad(host)) {
    return Malformed("not a valid IPv4 address");
  }
  return absl::OkStatus();
}

// A bracketed IPv6 literal in the spelling libcurl gives the hosts it
// parses (inet_ntop's: lower case, the longest run of zeros as "::", an
// IPv4-mapped tail dotted), so that list entries compare equal to them.
absl::StatusOr<std::string> CanonicalIpv6(absl::string_view host) {
  if (host.size() < 3 || host.back() != ']') return Malformed("bad IPv6 literal");
  const std::string address(host.substr(1, host.size() - 2));
  in6_addr binary;
  if (inet_pton(AF_INET6, address.c_str(), &binary) != 1) return Malformed("bad IPv6 literal");
  char text[INET6_ADDRSTRLEN];
  if (inet_ntop(AF_INET6, &binary, text, sizeof(text)) == nullptr) {
    return Malformed("bad IPv6 literal");
  }
  return absl::StrCat("[", text, "]");
}

}  // namespace

absl::StatusOr<std::string> CanonicalHost(absl::string_view host) {
  // libcurl has percent-decoded the host: "%80" or "%0A" arrive raw here.
  if (!CheckCharacters(host).ok()) return Malformed("forbidden bytes once percent-decoded");
  std::string ascii;
  if (IsAscii(host)) {
    ascii = absl::AsciiStrToLower(host);
  } else {
    absl::StatusOr<std::string> converted = ToPunycode(host);
    if (!converted.ok()) return converted.status();
    ascii = absl::AsciiStrToLower(*converted);
  }
  if (absl::StartsWith(ascii, "[")) return CanonicalIpv6(ascii);
  // "example.com." and "example.com" name the same host; keep one spelling
  // so that the deny list cannot be dodged with a dot.
  while (!ascii.empty() && ascii.back() == '.') ascii.pop_back();
  if (ascii.empty()) return absl::InvalidArgumentError("has no host");
  SHORTENER_RETURN_IF_ERROR(CheckHostSyntax(ascii));
  return ascii;
}

bool IsSameOrSubdomain(absl::string_view host, absl::string_view domain) {
  if (domain.empty()) return false;
  if (host == domain) return true;
  return host.size() > domain.size() && absl::EndsWith(host, domain) &&
         host[host.size() - domain.size() - 1] == '.';
}

}  // namespace shortener::url::internal
