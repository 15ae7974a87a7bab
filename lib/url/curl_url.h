// Parsing of an absolute URL with libcurl's URL API (CURLU), and the one
// place where libcurl's CURLUcode errors become absl::Status. Internal to
// lib/url; keeps <curl/curl.h> out of every other header.
// Thread-safe: each call uses its own CURLU handle, and the URL API needs no
// curl_global_init().
#ifndef SHORTENER_LIB_URL_CURL_URL_H_
#define SHORTENER_LIB_URL_CURL_URL_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shortener::url::internal {

// The components of a parsed URL as libcurl returns them: never
// percent-decoded, except the host, which libcurl decodes.
struct UrlParts {
  std::string scheme;                   // lower case
  std::string host;                     // UTF-8 as written; an IPv6 address in brackets
  std::string port;                     // empty when absent or the scheme's default port
  std::string path;                     // starts with "/"; dot segments removed
  std::optional<std::string> query;     // after "?"; may be present and empty
  std::optional<std::string> fragment;  // after "#"; never empty
  bool has_zone_id = false;             // IPv6 "%25eth0" suffix
};

// Parses `url` with any scheme, refusing user names and passwords.
// INVALID_ARGUMENT with a "long_url: " message on a parse error; INTERNAL
// if libcurl runs out of memory.
absl::StatusOr<UrlParts> ParseWithCurl(absl::string_view url);

}  // namespace shortener::url::internal

#endif  // SHORTENER_LIB_URL_CURL_URL_H_
