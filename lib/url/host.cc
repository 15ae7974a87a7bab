#include "lib/url/host.h"

#include <idn2.h>

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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
    const int rc = idn2_lookup_u8(reinterpret_cast<const uint8_t*>(input.c_str()),
                                  &result, flags);
    out.reset(result);
    return rc;
  };
  std::unique_ptr<uint8_t, Idn2Free> ascii;
  int rc = lookup(IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL, ascii);
  if (rc == IDN2_DISALLOWED) rc = lookup(IDN2_NFC_INPUT | IDN2_TRANSITIONAL, ascii);
  if (rc != IDN2_OK) {
    return absl::InvalidArgumentError(
        absl::StrCat("host ", QuoteForMessage(host),
                     " is not a valid internationalised domain name (",
                     idn2_strerror(rc), ")"));
  }
  return std::string(reinterpret_cast<const char*>(ascii.get()));
}

}  // namespace

absl::StatusOr<std::string> CanonicalHost(absl::string_view host) {
  std::string ascii;
  if (IsAscii(host)) {
    ascii = absl::AsciiStrToLower(host);
  } else {
    absl::StatusOr<std::string> converted = ToPunycode(host);
    if (!converted.ok()) return converted.status();
    ascii = absl::AsciiStrToLower(*converted);
  }
  // "example.com." and "example.com" name the same host; keep one spelling
  // so that the deny list cannot be dodged with a dot.
  if (!absl::StartsWith(ascii, "[")) {
    while (!ascii.empty() && ascii.back() == '.') ascii.pop_back();
  }
  if (ascii.empty()) return absl::InvalidArgumentError("has no host");
  return ascii;
}

bool IsSameOrSubdomain(absl::string_view host, absl::string_view domain) {
  if (domain.empty()) return false;
  if (host == domain) return true;
  return host.size() > domain.size() && absl::EndsWith(host, domain) &&
         host[host.size() - domain.size() - 1] == '.';
}

}  // namespace shortener::url::internal
