#include "proto/redirect_type.h"

namespace shortener {

std::optional<int> RedirectStatusOf(v1::RedirectType type) {
  switch (type) {
    case v1::REDIRECT_TYPE_UNSPECIFIED:
    case v1::REDIRECT_TYPE_FOUND:
      return 302;
    case v1::REDIRECT_TYPE_MOVED_PERMANENTLY:
      return 301;
    case v1::REDIRECT_TYPE_TEMPORARY:
      return 307;
    case v1::REDIRECT_TYPE_PERMANENT:
      return 308;
    default:
      return std::nullopt;
  }
}

v1::RedirectType RedirectTypeOf(int status) {
  switch (status) {
    case 301:
      return v1::REDIRECT_TYPE_MOVED_PERMANENTLY;
    case 307:
      return v1::REDIRECT_TYPE_TEMPORARY;
    case 308:
      return v1::REDIRECT_TYPE_PERMANENT;
    default:
      return v1::REDIRECT_TYPE_FOUND;
  }
}

}  // namespace shortener
