#include "lib/url/host_name.h"

#include "lib/url/url_scan.h"

namespace shortener::url {

absl::string_view HostOfUrl(absl::string_view url) {
  // scheme "://" [ userinfo "@" ] host [ ":" port ] [ "/" | "?" | "#" ... ]
  const size_t separator = url.find("://");
  if (separator == absl::string_view::npos || !internal::IsValidScheme(url.substr(0, separator))) {
    return {};
  }
  absl::string_view authority = url.substr(separator + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  // Userinfo cannot hold "@" unencoded, so the last one ends it.
  const size_t at = authority.rfind('@');
  if (at != absl::string_view::npos) authority.remove_prefix(at + 1);
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == absl::string_view::npos) return {};
    const absl::string_view after = authority.substr(close + 1);
    if (!after.empty() && after.front() != ':') return {};
    return authority.substr(0, close + 1);
  }
  return authority.substr(0, authority.find(':'));
}

}  // namespace shortener::url
