// Listing a tenant's links (ListLinks, issue 21 item 1): the query every
// LinkStore answers, the page it answers with, and the rules a link is
// matched by, owned here so that the stores agree (PgLinkStore says them
// in SQL; InMemoryLinkStore calls these functions).
//
// Keyset pagination: a page ends at a cursor (the sort key of the last
// link looked at), and the next page starts after it, so every page costs
// an index range read whatever its depth. A page looks at no more than
// LinkListQuery::scan_limit links: when the conditions that no index
// serves (state, host, labels beyond the first) match few links, a page
// comes back short, even empty, with a cursor to go on from, rather than
// reading the tenant's whole index to fill it (AIP-158 allows this).
//
// Thread safety: plain values and pure functions.
#ifndef SHORTENER_LIB_STORE_LINK_LIST_H_
#define SHORTENER_LIB_STORE_LINK_LIST_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/store/link.h"

namespace shortener::store {

// A link's state at a time, by the rule clients see (Link.state): revoked
// if revoke_time is set; else expired if its click budget is spent or
// expire_time <= at; else active.
enum class LinkStatus { kActive, kRevoked, kExpired };
LinkStatus StatusAt(const Link& link, absl::Time at);

// The host of a normalised long_url (what the store keeps): between "://"
// and the first '/', '?' or '#', without the port; an IPv6 literal keeps
// its brackets ("[2001:db8::1]"). Empty when the URL has no "://".
absl::string_view UrlHost(absl::string_view long_url);

enum class LinkOrder {
  kNewestFirst,  // create_time descending, then id descending
  kOldestFirst,  // create_time ascending, then id ascending
  // Human clicks descending (the click store's ranking, see
  // LinkListQuery::clicks), then id descending. Links never clicked come
  // after every clicked one, newest first.
  kMostClicked,
};

// Where a page ended: the sort key of the last link it looked at (returned
// or not). Opaque to clients (the service encodes it in page tokens).
struct ListCursor {
  // kMostClicked: false while the clicked links are being walked (by
  // clicks, id), true once the walk has moved on to the never-clicked
  // links (by create time, id). Other orders: always false.
  bool unclicked = false;
  int64_t clicks = 0;  // kMostClicked, clicked phase
  absl::Time create_time = absl::UnixEpoch();
  int64_t id = 0;

  friend bool operator==(const ListCursor& a, const ListCursor& b) {
    return a.unclicked == b.unclicked && a.clicks == b.clicks && a.create_time == b.create_time &&
           a.id == b.id;
  }
};

struct LinkListQuery {
  std::string owner;  // required: the tenant whose links are listed
  LinkOrder order = LinkOrder::kNewestFirst;
  // Only links that carry every one of these labels (LinkStore::FindLabelId
  // ids of `owner`'s labels); empty: any.
  std::vector<int64_t> label_ids;
  // Only links whose state at `now` is / is not this one.
  std::optional<LinkStatus> status;
  bool status_negated = false;
  absl::Time now = absl::UnixEpoch();
  // Only links created in [created_from, created_before); either open.
  std::optional<absl::Time> created_from;
  std::optional<absl::Time> created_before;
  // Only links whose UrlHost is exactly this (lower-case, as stored).
  std::optional<std::string> host;
  // Start after this cursor; none: the first page.
  std::optional<ListCursor> after;
  // Links returned at most (1..kMaxPageSize).
  int page_size = 100;
  // Links looked at at most (page_size..kMaxScan): the bound on a page's
  // cost when conditions no index serves reject most links.
  int scan_limit = 1000;
};

inline constexpr int kMaxPageSize = 1000;
inline constexpr int kMaxScan = 100000;

struct LinkPage {
  std::vector<Link> links;  // in the query's order
  // Where to go on from; none when the listing is complete.
  std::optional<ListCursor> next;
};

// Whether `link` meets every condition of `query` but the order and the
// cursor (owner, labels by id through `label_ids_of_link`, state, create
// time, host).
bool MatchesListQuery(const Link& link, const std::vector<int64_t>& label_ids_of_link,
                      const LinkListQuery& query);

// How a store answers a LinkListQuery, the part every store shares: one
// ordered walk (a "scan") per phase of the order, a page made of the first
// page_size matches, the cursor where to go on. A store supplies the scan.

// The walks: kNewestFirst and kOldestFirst are one walk each; kMostClicked
// walks the clicked links (by clicks, id), then the never-clicked ones
// (newest first).
enum class ScanPhase { kNewest, kOldest, kClicked, kUnclicked };

struct ScanRequest {
  ScanPhase phase = ScanPhase::kNewest;
  std::optional<ListCursor> after;  // none: from the start of the phase
  int match_limit = 0;              // matches wanted at most
  int scan_limit = 0;               // links looked at at most (> 0)
};

struct ScanMatch {
  Link link;
  ListCursor cursor;  // its sort key
};

struct ScanResult {
  // The links of the walk that match the query, in walk order, among the
  // first scan_limit it looks at; the walk may stop at match_limit of them.
  std::vector<ScanMatch> matches;
  // The walk looked at scan_limit links (and may go on): last_scanned is
  // the sort key of the last one. false: it ended, or stopped at
  // match_limit matches.
  bool budget_spent = false;
  std::optional<ListCursor> last_scanned;
};

using ScanFn = std::function<absl::StatusOr<ScanResult>(const ScanRequest&)>;

// The page for `query` from the scans `scan` makes (the query's conditions
// are the store's to apply in them). At most query.page_size links
// returned, and query.scan_limit looked at per walk (two walks for
// kMostClicked). Errors: the scan's.
absl::StatusOr<LinkPage> ListByScans(const LinkListQuery& query, const ScanFn& scan);

}  // namespace shortener::store

#endif  // SHORTENER_LIB_STORE_LINK_LIST_H_
