// LinkEraser: erases the clicks of deleted links (the privacy half of
// DeleteLink), after the deletion commits. A deletion makes the link gone
// at once (LinkStore::DeleteLinks) and queues it (LinkStore::LinksToErase);
// EraseDue then erases its clicks (ClickStore::EraseLinks: counts, visits,
// its own rollups; its labels' are kept) and marks it erased, and frees the
// aliases whose hold has ended. Run by a periodic task on every replica,
// woken right after each deletion; the work is idempotent, so replicas
// that run it at once only repeat each other.
//
// Thread-safe (no state of its own); EraseDue blocks (database calls).
#ifndef SHORTENER_SERVICES_SHORTEN_LINK_ERASER_H_
#define SHORTENER_SERVICES_SHORTEN_LINK_ERASER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/clicks/click_store.h"
#include "lib/common/clock.h"
#include "lib/store/link_store.h"

namespace shortener::service {

// Deleted links erased per ClickStore::EraseLinks call.
inline constexpr int kEraseChunk = 100;

class LinkEraser {
 public:
  // Both stores and `clock` outlive the eraser.
  LinkEraser(store::LinkStore* links, clicks::ClickStore* clicks,
             const Clock& clock = SystemClock());

  // Erases every deleted link waiting (in chunks of kEraseChunk, oldest
  // deletion first, at most max_links of them), then releases the aliases
  // whose hold has ended. Returns how many links it erased. The first error
  // stops the pass (what was erased stays erased; the rest waits for the
  // next pass).
  absl::StatusOr<int64_t> EraseDue(int64_t max_links = 10000);

 private:
  store::LinkStore* const links_;
  clicks::ClickStore* const clicks_;
  const Clock& clock_;
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_LINK_ERASER_H_
