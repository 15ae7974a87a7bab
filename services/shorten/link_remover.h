// LinkRemover: the domain logic of DeleteLink and of the bulk RevokeLinks
// and DeleteLinks, free of gRPC and proto types.
//
// DeleteLink deletes one link (LinkStore::DeleteLinks: gone at once for
// every read, its code invalidated at every edge, its alias held for
// alias_hold) and wakes the eraser of its clicks (link_eraser.h).
// The bulk operations take ListLinks' filter (list_filter.h; required:
// "every link" must be asked for as a condition, e.g. a create_time bound)
// and walk the tenant's matching links newest first, acting on at most
// page_size (default kDefaultBulkPageSize, at most kMaxBulkPageSize) per
// call, store::kMaxLinksPerChange per transaction; next_page_token resumes
// the walk (tokens of ListLinks with the same filter and the default order
// work too: it is the same walk). Like a ListLinks page, a call looks at a
// bounded number of links, so it may act on fewer than page_size and still
// return a token: go on while it is set. A call that fails part way (a
// database outage) answers what it did with the token to go on from (an
// error only when it did nothing); calling again with any token it gave is
// safe (revoking and deleting are idempotent).
//
// Thread-safe. Every method blocks (database calls): call them off reactor
// and read batcher threads.
#ifndef SHORTENER_SERVICES_SHORTEN_LINK_REMOVER_H_
#define SHORTENER_SERVICES_SHORTEN_LINK_REMOVER_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/auth/principal.h"
#include "lib/common/clock.h"
#include "lib/store/link_store.h"
#include "services/shorten/link_lister.h"
#include "services/shorten/shortener.h"

namespace shortener::service {

inline constexpr int kDefaultBulkPageSize = 1000;
inline constexpr int kMaxBulkPageSize = 10000;

// The tokens of the key's rate a bulk call of `page_size` costs: one per
// 1000 links it may act on (a call acts on up to 10 transactions' worth),
// at least 1, at most 10; 0 is the default size.
int BulkCallCost(int page_size);

// RevokeLinks' and DeleteLinks' request as given.
struct BulkLinksQuery {
  std::string tenant;  // "": the caller's
  std::string filter;  // required
  int page_size = 0;   // 0: kDefaultBulkPageSize
  std::string page_token;
};

struct BulkLinksResult {
  // The codes of the links this call revoked or deleted, in walk order
  // (links that matched but were revoked already are not revoked again).
  std::vector<std::string> codes;
  std::string next_page_token;  // "": the walk is done
};

struct LinkRemoverOptions {
  // How long a deleted link's alias stays taken (LinkDeletion).
  absl::Duration alias_hold = absl::Hours(24 * 90);
  // Called after links were deleted: wakes the eraser. May be empty.
  std::function<void()> erase_soon;
};

class LinkRemover {
 public:
  // All outlive the remover. `clock` gives deletion and revocation times.
  LinkRemover(Shortener* shortener, LinkLister* lister, store::LinkStore* links,
              LinkRemoverOptions options, const Clock& clock = SystemClock());

  // Deletes the link `code` names. Errors as Shortener::Revoke (NOT_FOUND
  // also for another tenant's link, which stays untouched, and for a link
  // deleted meanwhile).
  absl::Status DeleteLink(absl::string_view code, const auth::Principal* caller);

  // The bulk operations. Errors before anything is done: INVALID_ARGUMENT
  // naming the field (filter missing or malformed, page_size outside
  // 0..kMaxBulkPageSize, a page_token of another walk), PERMISSION_DENIED
  // for a non-admin naming another tenant; then the stores' errors.
  absl::StatusOr<BulkLinksResult> RevokeLinks(const BulkLinksQuery& query,
                                              const auth::Principal* caller);
  absl::StatusOr<BulkLinksResult> DeleteLinks(const BulkLinksQuery& query,
                                              const auth::Principal* caller);

 private:
  // Acts on one store page of links (at most store::kMaxLinksPerChange);
  // returns the links it changed.
  using Action = std::function<absl::StatusOr<std::vector<store::Link>>(
      const std::vector<store::LinkRef>& links)>;
  absl::StatusOr<BulkLinksResult> Walk(const BulkLinksQuery& query, const auth::Principal* caller,
                                       const Action& act);
  // One store page of the walk: read, acted on, the codes changed appended
  // to `codes`.
  struct PageDone {
    size_t links = 0;                       // matched on the page
    std::optional<store::ListCursor> next;  // where the walk goes on
  };
  absl::StatusOr<PageDone> ActOnPage(const store::LinkListQuery& query, const Action& act,
                                     std::vector<std::string>& codes);
  store::LinkDeletion DeletionOf(std::vector<store::LinkRef> links,
                                 const auth::Principal* caller) const;

  Shortener* const shortener_;
  LinkLister* const lister_;
  store::LinkStore* const links_;
  const LinkRemoverOptions options_;
  const Clock& clock_;
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_LINK_REMOVER_H_
