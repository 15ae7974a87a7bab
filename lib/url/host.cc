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
#include "lib/url/host_name.h"
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

// One label of a (lower-case, ASCII) host name, RFC 1123 and RFC 5890: 1 to
// 63 letters, digits and hyphens (IsHostNameChar), no hyphen first or last,
// and hyphens in the third and fourth place ("ab--c", RFC 5890's reserved
// LDH labels) only in an A-label ("xn--", checked by ValidateALabels).
//
// Not "_": DNS allows it in other records (_dmarc, _sip._tcp service
// labels), and browsers take it in URLs for compatibility, but it is no part
// of a host name, no web server lives at a service label, and since 2019 no
// publicly trusted certificate may name a host with one (CA/Browser Forum
// ballot SC12), so a URL with one is either a mistake or a disguise.
absl::Status CheckLabel(absl::string_view label) {
  if (label.empty()) return Malformed("empty label");
  if (label.size() > kMaxHostLabelLength) {
    return Malformed(absl::StrCat("label longer than ", kMaxHostLabelLength, " bytes"));
  }
  if (!std::all_of(label.begin(), label.end(), IsHostNameChar)) {
    return Malformed(absl::StrCat("bad character in ", QuoteForMessage(label),
                                  ": host names are letters, digits and hyphens"));
  }
  if (label.front() == '-' || label.back() == '-') {
    return Malformed(
        absl::StrCat("label ", QuoteForMessage(label), " starts or ends with a hyphen"));
  }
  if (label.size() >= 4 && label.substr(2, 2) == "--" && !absl::StartsWith(label, "xn--")) {
    return Malformed(absl::StrCat("label ", QuoteForMessage(label),
                                  " has \"--\" in the third and fourth place, reserved for "
                                  "internationalised names (\"xn--\")"));
  }
  return absl::OkStatus();
}

// An ASCII host with "xn--" labels is an internationalised name already in
// punycode: it must decode to a name the IDN rules accept, as the same name
// typed in Unicode would have to ("xn--zz" decodes to nothing, "xn--ls8h"
// to a symbol UTS #46 disallows).
absl::Status ValidateALabels(absl::string_view host) {
  if (!absl::StartsWith(host, "xn--") && !absl::StrContains(host, ".xn--")) {
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> checked = ToPunycode(host);
  if (!checked.ok()) return Malformed(checked.status().message());
  if (*checked != host) return Malformed("an A-label that is not in canonical form");
  return absl::OkStatus();
}

// The canonical host must read back the same: libcurl percent-decodes the
// host and lets some decoded bytes through ("exa%25mple" becomes
// "exa%mple"), so we accept only what host names and IP literals are made
// of, label by label; at most 253 bytes (RFC 1035's 255 for the wire form,
// less the length bytes); a last label that is a number only as part of a
// dotted-quad IPv4 address (no top-level domain is all digits).
absl::Status CheckHostSyntax(absl::string_view host) {
  if (host.size() > kMaxHostNameLength) {
    return Malformed(absl::StrCat("longer than ", kMaxHostNameLength, " bytes"));
  }
  const std::vector<absl::string_view> labels = absl::StrSplit(host, '.');
  for (absl::string_view label : labels) SHORTENER_RETURN_IF_ERROR(CheckLabel(label));
  if (EndsInNumber(labels.back())) {
    if (!IsDottedQuad(host)) return Malformed("not a valid IPv4 address");
    return absl::OkStatus();
  }
  return ValidateALabels(host);
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

// Why an IPv4 address is not public, or "".
absl::string_view Ipv4Reason(const uint8_t* a) {
  if (a[0] == 0) return "an unspecified address (0.0.0.0/8, which reaches this host)";
  if (a[0] == 127) return "a loopback address";
  if (a[0] == 10 || (a[0] == 172 && (a[1] & 0xF0) == 16) || (a[0] == 192 && a[1] == 168)) {
    return "a private address (RFC 1918)";
  }
  if (a[0] == 100 && (a[1] & 0xC0) == 64) {
    return "a shared address (100.64.0.0/10, carrier-grade NAT)";
  }
  if (a[0] == 169 && a[1] == 254) return "a link-local address (169.254.0.0/16: cloud metadata)";
  if (a[0] >= 224 && a[0] <= 239) return "a multicast address";
  if (a[0] >= 240) return "a reserved or broadcast address";
  return "";
}

bool AllZero(const uint8_t* bytes, size_t n) {
  return std::all_of(bytes, bytes + n, [](uint8_t b) { return b == 0; });
}

// The IPv4 address an IPv6 address carries (`form` names how), if any.
const uint8_t* EmbeddedIpv4(const uint8_t* a, absl::string_view* form) {
  static constexpr uint8_t kNat64[12] = {0x00, 0x64, 0xff, 0x9b};
  if (AllZero(a, 10) && a[10] == 0xff && a[11] == 0xff) {
    *form = "IPv4-mapped";
    return a + 12;
  }
  if (AllZero(a, 12)) {
    *form = "IPv4-compatible";
    return a + 12;
  }
  if (AllZero(a, 8) && a[8] == 0xff && a[9] == 0xff && a[10] == 0 && a[11] == 0) {
    *form = "IPv4-translated";
    return a + 12;
  }
  if (std::equal(kNat64, kNat64 + 12, a)) {
    *form = "NAT64";
    return a + 12;
  }
  if (a[0] == 0x20 && a[1] == 0x02) {
    *form = "6to4";
    return a + 2;
  }
  return nullptr;
}

std::string Ipv6Reason(absl::string_view bracketed) {
  const std::string text(bracketed.substr(1, bracketed.size() - 2));
  in6_addr binary;
  if (inet_pton(AF_INET6, text.c_str(), &binary) != 1) return "";  // CanonicalHost refuses it
  const uint8_t* a = binary.s6_addr;
  if (AllZero(a, 16)) return "the unspecified address";
  if (AllZero(a, 15) && a[15] == 1) return "a loopback address";
  if ((a[0] & 0xFE) == 0xFC) return "a unique local address (fc00::/7, private)";
  if (a[0] == 0xFE && (a[1] & 0xC0) == 0x80) return "a link-local address";
  if (a[0] == 0xFE && (a[1] & 0xC0) == 0xC0) return "a site-local address (private)";
  if (a[0] == 0xFF) return "a multicast address";
  if (a[0] == 0x00 && a[1] == 0x64 && a[2] == 0xff && a[3] == 0x9b && a[4] == 0 && a[5] == 1) {
    return "a local-use NAT64 address (64:ff9b:1::/48)";
  }
  absl::string_view form;
  const uint8_t* v4 = EmbeddedIpv4(a, &form);
  if (v4 == nullptr) return "";
  const absl::string_view reason = Ipv4Reason(v4);
  if (reason.empty()) return "";
  return absl::StrCat(reason, " (", form, ", ", static_cast<int>(v4[0]), ".",
                      static_cast<int>(v4[1]), ".", static_cast<int>(v4[2]), ".",
                      static_cast<int>(v4[3]), ")");
}

// Names that never reach a public host, whatever DNS says elsewhere.
absl::string_view NameReason(absl::string_view host) {
  const auto is_or_under = [host](absl::string_view domain) {
    return host == domain || (host.size() > domain.size() && absl::EndsWith(host, domain) &&
                              host[host.size() - domain.size() - 1] == '.');
  };
  if (is_or_under("localhost") || host == "localhost.localdomain" || host == "ip6-localhost" ||
      host == "ip6-loopback") {
    return "a name of the machine that opens it (localhost)";
  }
  if (is_or_under("localdomain")) return "a name of the local network (.localdomain)";
  if (is_or_under("local")) return "a multicast DNS name of the local network (.local)";
  if (is_or_under("internal")) return "a name of a private network (.internal)";
  if (is_or_under("home.arpa")) return "a name of a home network (home.arpa)";
  if (host.find('.') == absl::string_view::npos) {
    return "a name of one label, which resolvers complete with their local search domains";
  }
  return "";
}

}  // namespace

std::string NonPublicHostReason(absl::string_view host) {
  if (absl::StartsWith(host, "[")) return Ipv6Reason(host);
  if (!host.empty() && absl::ascii_isdigit(static_cast<unsigned char>(host.back()))) {
    // A canonical host ending in a digit is a dotted quad (CanonicalHost).
    in_addr binary;
    const std::string text(host);
    if (inet_pton(AF_INET, text.c_str(), &binary) == 1) {
      return std::string(Ipv4Reason(reinterpret_cast<const uint8_t*>(&binary.s_addr)));
    }
  }
  return std::string(NameReason(host));
}

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
