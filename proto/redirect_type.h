// The one mapping between the contract's RedirectType and the HTTP status a
// link redirects with (lib/common/redirect_status.h), for the service, the
// edge and shortenctl.
//
// Pure; thread-safe.
#ifndef SHORTENER_PROTO_REDIRECT_TYPE_H_
#define SHORTENER_PROTO_REDIRECT_TYPE_H_

#include <optional>

#include "shortener/v1/shortener.pb.h"

namespace shortener {

// 301 MOVED_PERMANENTLY, 302 FOUND (and UNSPECIFIED, which means FOUND), 307
// TEMPORARY, 308 PERMANENT; nullopt for a value this build does not know (a
// newer peer's).
std::optional<int> RedirectStatusOf(v1::RedirectType type);

// The type of a redirect status (IsRedirectStatus); FOUND for any other
// number.
v1::RedirectType RedirectTypeOf(int status);

}  // namespace shortener

#endif  // SHORTENER_PROTO_REDIRECT_TYPE_H_
