// ValidateAlias(): the custom-alias rules (declared in alias.h).
#include "lib/codec/alias.h"

#include <array>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/codec/short_codec.h"

namespace shortener::codec {
namespace {

// Paths the edge serves itself or may serve later; compared
// case-insensitively. Entries with '.' are also excluded by the character
// rule but are listed so the message names the real reason.
constexpr std::array<absl::string_view, 24> kReservedPaths = {
    "healthz",    "readyz",      "livez",       "metrics",  "api",    "favicon.ico",
    "robots.txt", "sitemap.xml", ".well-known", "static",   "assets", "admin",
    "login",      "logout",      "signup",      "register", "auth",   "oauth",
    "debug",      "status",      "health",      "shorten",  "docs",   "www",
};

std::string Quote(absl::string_view alias) {
  return absl::StrCat("\"", absl::CHexEscape(alias.substr(0, 80)), "\"");
}

}  // namespace

absl::Status ValidateAlias(absl::string_view alias, const ShortCodec& codec) {
  if (alias.empty()) {
    return absl::InvalidArgumentError("custom_alias: must not be empty");
  }
  if (alias.size() > kMaxAliasLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("custom_alias: at most ", kMaxAliasLength, " characters, got ", alias.size()));
  }
  for (absl::string_view reserved : kReservedPaths) {
    if (absl::EqualsIgnoreCase(alias, reserved)) {
      return absl::InvalidArgumentError(
          absl::StrCat("custom_alias: ", Quote(alias), " is a reserved path"));
    }
  }
  for (char c : alias) {
    if (!IsAliasChar(c)) {
      return absl::InvalidArgumentError(
          absl::StrCat("custom_alias: only [A-Za-z0-9_-] allowed, got ",
                       Quote(absl::string_view(&c, 1)), " in ", Quote(alias)));
    }
  }
  if (codec.IsGeneratedShape(alias)) {
    return absl::InvalidArgumentError(
        absl::StrCat("custom_alias: ", Quote(alias), " has the shape of a generated code (",
                     codec.min_body_length() + 1, "..", ShortCodec::kMaxBodyLength + 1,
                     " letters and digits); add '-' or '_' or change its length"));
  }
  return absl::OkStatus();
}

}  // namespace shortener::codec
