// LinkStore: the seam between the service logic and the database.
// Implementations: PgLinkStore (lib/store/pg), InMemoryLinkStore (unit tests
// of the logic above the store). Both pass tests/lib/store/link_store_contract.
// Implementations are thread-safe.
#ifndef SHORTENER_LIB_STORE_LINK_STORE_H_
#define SHORTENER_LIB_STORE_LINK_STORE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "lib/store/link.h"
#include "lib/store/link_deletion.h"
#include "lib/store/link_list.h"
#include "lib/store/link_update.h"

namespace shortener::store {

// NOT_FOUND "no label k=v for tenant \"t\"": what every LinkStore's
// FindLabelId answers for a label the tenant never had.
absl::Status NoLabelError(const std::string& tenant, const std::string& key,
                          const std::string& value);

class LinkStore {
 public:
  virtual ~LinkStore() = default;

  // Creates every link of `links`, each independently (one item's failure
  // does not fail the others), durably: when this returns, every OK result is
  // committed. Result i belongs to links[i]. Per item, in this order:
  //  - INVALID_ARGUMENT naming the field: long_url_sha256 not 32 bytes,
  //    redirect_status not 301/302/307/308, max_clicks not positive, or text (long_url, owner,
  //    alias, request_id) not valid UTF-8 or holding a NUL byte.
  //  - OK, created=false: (owner, request_id) was seen before with the same
  //    URL hash: returns that call's link (whatever `dedupe` says now, and
  //    even if that link was revoked since).
  //  - ALREADY_EXISTS "request_id \"r\" was already used with a different long_url".
  //  - ALREADY_EXISTS "custom_alias \"x\" is already taken".
  //  - OK, created=false: no alias, no max_clicks, dedupe=true, and the
  //    owner's dedupe link for this URL hash is live at the item's
  //    create_time (not revoked, expire_time unset or later): returns it. The
  //    dedupe link is the last link created with dedupe=true, no alias and no
  //    max_clicks; other links are never returned by dedupe.
  //  - OK, created=true: a new row with the item's id.
  // A failed item records nothing (its request_id stays unused). Times are
  // stored at microsecond precision (rounded down).
  // Items of one call with the same (owner, request_id), alias or dedupe key
  // behave as if called one after the other, in order.
  // Whole-batch failures (then nothing of the batch is committed):
  //  - UNAVAILABLE when the database is unreachable or the commit outcome is
  //    unknown;
  //  - INTERNAL when a link id to insert exists already (ids must be fresh);
  //  - ABORTED when concurrent writers kept winning keys of the batch;
  //  - INTERNAL / DEADLINE_EXCEEDED for other database failures.
  virtual std::vector<absl::StatusOr<CreateOutcome>> CreateLinks(
      absl::Span<const NewLink> links) = 0;

  // NOT_FOUND "no link with id N" when absent; UNAVAILABLE when the database is.
  virtual absl::StatusOr<Link> GetById(int64_t id) = 0;

  // NOT_FOUND "no link with alias \"x\"" when absent; UNAVAILABLE when the
  // database is.
  virtual absl::StatusOr<Link> GetByAlias(const std::string& alias) = 0;

  // Looks up many ids at once (one query); result i is NOT_FOUND or the link.
  // Whole-call error (UNAVAILABLE) when the database fails.
  virtual absl::StatusOr<std::vector<absl::StatusOr<Link>>> GetByIds(
      absl::Span<const int64_t> ids) = 0;

  // Looks up many aliases at once (one query); result i is the link or
  // NOT_FOUND "no link with alias \"x\"", as GetByAlias answers (also for
  // text no alias can be: not UTF-8, a NUL byte; such text is never sent to
  // the database). An alias may be asked more than once. Whole-call error
  // (UNAVAILABLE) when the database fails.
  virtual absl::StatusOr<std::vector<absl::StatusOr<Link>>> GetByAliases(
      absl::Span<const std::string> aliases) = 0;

  // Marks the link revoked at `when` and returns it. Idempotent: an already
  // revoked link keeps its first revoke_time. NOT_FOUND when absent;
  // UNAVAILABLE when the database is.
  // When this call is the one that revokes the link (not when it was revoked
  // already), the store publishes `code` (the link's code as clients and
  // edges know it: its alias or its generated code) as an invalidation,
  // atomically with the revocation: PgLinkStore NOTIFYs it in the same
  // transaction (delivered to listeners on commit only), InMemoryLinkStore
  // hands it to its revocation observer.
  virtual absl::StatusOr<Link> Revoke(int64_t id, absl::Time when, const std::string& code) = 0;

  // The id of label key=value of `tenant` (the owner of links), under which
  // the click store keeps the label's rollups. CreateLinks makes it when it
  // is first given an item of the tenant with that label that
  // ValidateNewLink accepts, before the item is decided (an item then
  // refused, say for a taken alias, or a batch that fails leaves the id
  // behind: harmless, no click counts under it); later links of the tenant
  // with the same label share it, other tenants' labels have ids of their
  // own, and it never changes. NOT_FOUND "no label k=v for tenant \"t\""
  // for a label never given so (also for text no label can be);
  // UNAVAILABLE when the database is.
  virtual absl::StatusOr<int64_t> FindLabelId(const std::string& tenant, const std::string& key,
                                              const std::string& value) = 0;

  // A page of query.owner's links that meet the query's conditions, in its
  // order, after query.after (lib/store/link_list.h: keyset pages, at most
  // page_size links returned and scan_limit looked at, so a page may be
  // short or empty and still have a next cursor). Walking every page from
  // none to the last (next unset) returns each link that matched throughout
  // exactly once, whatever was created meanwhile: a link created after the
  // walk passed its place is not returned, under kNewestFirst one created
  // meanwhile never is. kMostClicked ranks by the clicks the click store
  // has merged into link_click_totals (PgLinkStore; InMemoryLinkStore asks
  // its click ranking), a few seconds behind the exact counts, and a link
  // whose rank changes during the walk may be returned twice or skipped:
  // the cost of a rank that is not frozen. INVALID_ARGUMENT for a
  // page_size outside 1..kMaxPageSize or an empty owner; UNAVAILABLE when
  // the database is down.
  virtual absl::StatusOr<LinkPage> ListLinks(const LinkListQuery& query) = 0;

  // Applies `update` (lib/store/link_update.h) to link update.id and
  // returns the link as it is then. When a field's value changes, the
  // store, atomically with the change: records a LinkChange (update.when,
  // update.actor, DiffLink's fields) and publishes update.code as an
  // invalidation, as Revoke does; an update that changes nothing records
  // and publishes nothing. Rules:
  //  - dedupe key: a link that holds its dedupe key (the link CreateLinks
  //    returns for its owner, URL and labels) gives it up when its URL,
  //    labels or budget change, and takes the key of its new URL and
  //    labels (KeepsDedupe: not with a budget) unless another link holds
  //    that key;
  //  - click budget: with max_clicks in the update, the link is exhausted
  //    (clicks_exhausted_time) by ExhaustedAfter with its human clicks
  //    counted so far: a raised budget makes an exhausted link live again;
  //  - labels: the link's clicks count under its new labels from then on.
  // Errors, nothing written: INVALID_ARGUMENT (ValidateLinkUpdate),
  // NOT_FOUND "no link with id N", FAILED_PRECONDITION for a revoked link,
  // UNAVAILABLE when the database is down.
  virtual absl::StatusOr<Link> UpdateLink(const LinkUpdate& update) = 0;

  // Every change UpdateLink recorded for link `id`, oldest first; none for
  // a link never changed or unknown. UNAVAILABLE when the database is down.
  virtual absl::StatusOr<std::vector<LinkChange>> LinkHistory(int64_t id) = 0;

  // Deletes deletion.links (those absent already are skipped) and returns
  // the links this call deleted, as they were, in the order given.
  // Atomically, for all of them: the links are gone for every read (GetBy*,
  // ListLinks, LinkHistory: NOT_FOUND or absent, as if never made) with
  // their history; each one's code is published as an invalidation (as
  // Revoke does); an alias stays taken until deletion.alias_release_time
  // (ReleaseDeletedLinks frees it); a generated code is never given again
  // (ids are never reused); and each link joins the links to erase
  // (LinksToErase), the job of whoever erases their clicks. A later
  // CreateLinks with a request_id that named a deleted link fails that item
  // FAILED_PRECONDITION. INVALID_ARGUMENT for more than kMaxLinksPerChange
  // links or a code NOTIFY cannot carry; UNAVAILABLE when the database is
  // down (nothing deleted).
  virtual absl::StatusOr<std::vector<Link>> DeleteLinks(const LinkDeletion& deletion) = 0;

  // Revoke for many links at once, atomically: revokes those of `links`
  // that exist and are not revoked yet, at `when`, publishing their codes,
  // and returns them as revoked, in the order given (a link revoked
  // already keeps its revoke_time and is not returned). INVALID_ARGUMENT
  // for more than kMaxLinksPerChange links or a code NOTIFY cannot carry;
  // UNAVAILABLE when the database is down (nothing revoked).
  virtual absl::StatusOr<std::vector<Link>> RevokeLinks(absl::Span<const LinkRef> links,
                                                        absl::Time when) = 0;

  // Deleted links whose clicks are not erased yet (no MarkErased), longest
  // deleted first, at most `limit`. UNAVAILABLE when the database is down.
  virtual absl::StatusOr<std::vector<int64_t>> LinksToErase(int limit) = 0;

  // Records that the clicks of deleted links `ids` are erased (ids that are
  // not deleted links are ignored). UNAVAILABLE when the database is down.
  virtual absl::Status MarkErased(absl::Span<const int64_t> ids, absl::Time when) = 0;

  // Frees the aliases of deleted links whose alias_release_time is at or
  // before `now` (a new link may take them), and forgets the deleted links
  // that are erased and hold no alias any more. Returns how many it forgot.
  // UNAVAILABLE when the database is down.
  virtual absl::StatusOr<int64_t> ReleaseDeletedLinks(absl::Time now) = 0;
};

}  // namespace shortener::store

#endif  // SHORTENER_LIB_STORE_LINK_STORE_H_
