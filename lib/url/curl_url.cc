#include "lib/url/curl_url.h"

#include <curl/curl.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lib/common/status_macros.h"

namespace shortener::url::internal {
namespace {

struct CurluDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
struct CurlFree {
  void operator()(char* p) const { curl_free(p); }
};

// What a CURLUcode means for the person who sent the URL. Every libcurl
// URL error is translated here and nowhere else.
absl::Status CurlUrlError(CURLUcode code) {
  const auto invalid = [](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("long_url: ", what));
  };
  switch (code) {
    case CURLUE_OUT_OF_MEMORY:
      return absl::InternalError("long_url: out of memory while parsing");
    case CURLUE_BAD_PORT_NUMBER:
      return invalid("bad port number (must be 1 to 65535)");
    case CURLUE_USER_NOT_ALLOWED:
    case CURLUE_BAD_LOGIN:
    case CURLUE_BAD_USER:
    case CURLUE_BAD_PASSWORD:
      return invalid("must not contain credentials");
    case CURLUE_NO_HOST:
      return invalid("has no host");
    case CURLUE_BAD_HOSTNAME:
      return invalid("has a malformed host");
    case CURLUE_BAD_IPV6:
      return invalid("has a malformed IPv6 address");
    case CURLUE_NO_SCHEME:
    case CURLUE_BAD_SCHEME:
      return invalid("has no valid scheme");
    case CURLUE_UNSUPPORTED_SCHEME:
      return invalid("scheme is not supported");
    case CURLUE_BAD_SLASHES:
      return invalid("must have \"//\" after the scheme");
    case CURLUE_URLDECODE:
      return invalid("broken percent-encoding");
    case CURLUE_BAD_PATH:
      return invalid("has a malformed path");
    case CURLUE_BAD_QUERY:
      return invalid("has a malformed query");
    case CURLUE_BAD_FRAGMENT:
      return invalid("has a malformed fragment");
    case CURLUE_LACKS_IDN:
      return invalid("internationalised host names are not supported");
    default:
      return invalid(absl::StrCat("is malformed (", curl_url_strerror(code), ")"));
  }
}

// The codes with which curl_url_get() says that a part is absent.
bool IsMissingPart(CURLUcode code) {
  switch (code) {
    case CURLUE_NO_SCHEME:
    case CURLUE_NO_USER:
    case CURLUE_NO_PASSWORD:
    case CURLUE_NO_OPTIONS:
    case CURLUE_NO_HOST:
    case CURLUE_NO_PORT:
    case CURLUE_NO_QUERY:
    case CURLUE_NO_FRAGMENT:
    case CURLUE_NO_ZONEID:
      return true;
    default:
      return false;
  }
}

// One part of the URL, std::nullopt when it is absent. Flags 0 means "as
// stored": libcurl never percent-decodes on get unless asked to.
absl::StatusOr<std::optional<std::string>> GetPart(CURLU* u, CURLUPart part,
                                                   unsigned int flags = 0) {
  char* raw_value = nullptr;
  const CURLUcode code = curl_url_get(u, part, &raw_value, flags);
  const std::unique_ptr<char, CurlFree> value(raw_value);
  if (code == CURLUE_OK) return std::optional<std::string>(value.get());
  if (IsMissingPart(code)) return std::optional<std::string>();
  return CurlUrlError(code);
}

absl::StatusOr<UrlParts> ReadParts(CURLU* u) {
  UrlParts parts;
  SHORTENER_ASSIGN_OR_RETURN(std::optional<std::string> scheme, GetPart(u, CURLUPART_SCHEME));
  SHORTENER_ASSIGN_OR_RETURN(std::optional<std::string> host, GetPart(u, CURLUPART_HOST));
  if (!scheme || !host || host->empty()) return CurlUrlError(CURLUE_NO_HOST);
  parts.scheme = *std::move(scheme);
  parts.host = *std::move(host);
  // CURLU_NO_DEFAULT_PORT: a port equal to the scheme's default reads as
  // absent, which is how we drop ":80" from http and ":443" from https.
  SHORTENER_ASSIGN_OR_RETURN(std::optional<std::string> port,
                             GetPart(u, CURLUPART_PORT, CURLU_NO_DEFAULT_PORT));
  parts.port = port.value_or("");
  SHORTENER_ASSIGN_OR_RETURN(std::optional<std::string> path, GetPart(u, CURLUPART_PATH));
  parts.path = path.value_or("/");
  if (parts.path.empty()) parts.path = "/";
  SHORTENER_ASSIGN_OR_RETURN(parts.query, GetPart(u, CURLUPART_QUERY));
  SHORTENER_ASSIGN_OR_RETURN(parts.fragment, GetPart(u, CURLUPART_FRAGMENT));
  SHORTENER_ASSIGN_OR_RETURN(std::optional<std::string> zone_id, GetPart(u, CURLUPART_ZONEID));
  parts.has_zone_id = zone_id.has_value();
  return parts;
}

}  // namespace

absl::StatusOr<UrlParts> ParseWithCurl(absl::string_view url) {
  const std::unique_ptr<CURLU, CurluDeleter> handle(curl_url());
  if (handle == nullptr) return CurlUrlError(CURLUE_OUT_OF_MEMORY);
  // The allow list, not libcurl's protocol table, decides which schemes we
  // take; no CURLU_URLENCODE because we encode path, query and fragment
  // ourselves (libcurl 7.88 leaves the fragment raw).
  const std::string terminated(url);
  const CURLUcode code = curl_url_set(handle.get(), CURLUPART_URL, terminated.c_str(),
                                      CURLU_NON_SUPPORT_SCHEME | CURLU_DISALLOW_USER);
  if (code != CURLUE_OK) return CurlUrlError(code);
  return ReadParts(handle.get());
}

}  // namespace shortener::url::internal
