// The HTTP statuses a link may redirect with: the one rule for the service's
// validation, the click checks and the edge. (The contract's RedirectType
// maps onto exactly these: proto/redirect_type.h.)
//
// Pure, constexpr; thread-safe.
#ifndef SHORTENER_LIB_COMMON_REDIRECT_STATUS_H_
#define SHORTENER_LIB_COMMON_REDIRECT_STATUS_H_

#include <array>

namespace shortener {

inline constexpr std::array<int, 4> kRedirectStatuses = {301, 302, 307, 308};

// Whether `status` is one of kRedirectStatuses.
constexpr bool IsRedirectStatus(int status) {
  for (int s : kRedirectStatuses) {
    if (s == status) return true;
  }
  return false;
}

}  // namespace shortener

#endif  // SHORTENER_LIB_COMMON_REDIRECT_STATUS_H_
