// The precision at which every store keeps times: whole microseconds, as
// PostgreSQL's timestamptz does. The Postgres stores get it from the
// database; the in-memory twins round with StoreTime, so that the contract
// suites cannot tell the two apart. The one owner of that rule.
//
// Thread safety: a pure function.
#ifndef SHORTENER_LIB_COMMON_STORE_TIME_H_
#define SHORTENER_LIB_COMMON_STORE_TIME_H_

#include "absl/time/time.h"

namespace shortener {

// `t` rounded down (towards the past, before 1970 too) to a whole
// microsecond.
inline absl::Time StoreTime(absl::Time t) { return absl::FromUnixMicros(absl::ToUnixMicros(t)); }

}  // namespace shortener

#endif  // SHORTENER_LIB_COMMON_STORE_TIME_H_
