#include "services/shorten/link_eraser.h"

#include <vector>

#include "lib/common/status_macros.h"

namespace shortener::service {

LinkEraser::LinkEraser(store::LinkStore* links, clicks::ClickStore* clicks, const Clock& clock)
    : links_(links), clicks_(clicks), clock_(clock) {}

absl::StatusOr<int64_t> LinkEraser::EraseDue(int64_t max_links) {
  int64_t erased = 0;
  while (erased < max_links) {
    SHORTENER_ASSIGN_OR_RETURN(std::vector<int64_t> ids, links_->LinksToErase(kEraseChunk));
    if (ids.empty()) break;
    const absl::Time now = clock_.Now();
    SHORTENER_RETURN_IF_ERROR(clicks_->EraseLinks(ids, now));
    SHORTENER_RETURN_IF_ERROR(links_->MarkErased(ids, now));
    erased += static_cast<int64_t>(ids.size());
    if (ids.size() < static_cast<size_t>(kEraseChunk)) break;
  }
  SHORTENER_RETURN_IF_ERROR(links_->ReleaseDeletedLinks(clock_.Now()).status());
  return erased;
}

}  // namespace shortener::service
