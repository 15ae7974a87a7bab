#include "lib/store/link_deletion.h"

#include "absl/strings/str_cat.h"
#include "lib/store/create_planner.h"

namespace shortener::store {

absl::Status ValidateLinkRefs(absl::Span<const LinkRef> links, const char* what) {
  if (links.size() > kMaxLinksPerChange) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ", links.size(), " links, more than one call takes (", kMaxLinksPerChange, ")"));
  }
  for (const LinkRef& link : links) {
    // NOTIFY payloads are text shorter than 8000 bytes.
    if (!IsStorableText(link.code) || link.code.size() >= 7999) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": the code of link ", link.id, " is not text a NOTIFY can carry"));
    }
  }
  return absl::OkStatus();
}

}  // namespace shortener::store
