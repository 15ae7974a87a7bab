// What RevokeLinks and DeleteLinks (lib/store/link_store.h) take, and the
// checks every LinkStore applies to it.
#ifndef SHORTENER_LIB_STORE_LINK_DELETION_H_
#define SHORTENER_LIB_STORE_LINK_DELETION_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace shortener::store {

// A link an operation names: its id, and its code as clients and edges
// know it (its alias or its generated code), which the store publishes as
// an invalidation when the operation changes the link.
struct LinkRef {
  int64_t id = 0;
  std::string code;
};

// Links per RevokeLinks or DeleteLinks call at most (a transaction's worth).
inline constexpr size_t kMaxLinksPerChange = 1000;

// What DeleteLinks deletes, when, and for whom.
struct LinkDeletion {
  std::vector<LinkRef> links;  // at most kMaxLinksPerChange
  absl::Time when;
  // Who asked, as UpdateLink's actor ("campaign tool (api key 7)").
  std::string actor;
  // A deleted link's alias stays taken until then: no link created meanwhile
  // can be given it (ALREADY_EXISTS, as for a live link's), so nobody can
  // take it over to catch the stale copies of the old link.
  absl::Time alias_release_time;
};

// INVALID_ARGUMENT "`what`: ..." for more than kMaxLinksPerChange links or
// a code that is not text a NOTIFY can carry (not UTF-8, a NUL byte, 7999
// bytes or more); OK otherwise.
absl::Status ValidateLinkRefs(absl::Span<const LinkRef> links, const char* what);

}  // namespace shortener::store

#endif  // SHORTENER_LIB_STORE_LINK_DELETION_H_
