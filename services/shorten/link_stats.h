// LinkStats: the domain logic of what a link's owner reads about its
// clicks, free of gRPC and proto types: GetLink (the link with its human
// click count) and GetClickStats (the statistics of a time range). Both
// check ownership first, through Shortener::GetLink: another tenant's link
// is NOT_FOUND, word for word as a code that does not exist, and its clicks
// are never read.
//
// Two reads per call, one per store: the link (through the read batcher)
// and then its clicks (clicks::ClickStore). They cannot be one: links and
// clicks are separate seams (LinkStore, ClickStore) with implementations
// of their own, and the clicks are read only once the link is known to be
// the caller's. The click read blocks, so it runs on `blocking_pool`.
//
// Thread-safe. Neither call blocks the calling thread: `done` runs on the
// calling thread (malformed input, refusals), a read batcher thread
// (NOT_FOUND and other link errors) or a `blocking_pool` thread.
#ifndef SHORTENER_SERVICES_SHORTEN_LINK_STATS_H_
#define SHORTENER_SERVICES_SHORTEN_LINK_STATS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/auth/principal.h"
#include "lib/clicks/click_stats.h"
#include "lib/clicks/click_store.h"
#include "lib/common/clock.h"
#include "lib/common/thread_pool.h"
#include "lib/qr/qr_code.h"
#include "services/shorten/shortener.h"

namespace shortener::service {

// GetClickStats' request as given: unset fields are nullopt (defaults are
// clicks::ResolveStatsRange's).
struct ClickStatsQuery {
  std::optional<absl::Time> start;
  std::optional<absl::Time> end;
  std::optional<clicks::StatsGranularity> granularity;
  // GetLabelStats: whose label; empty: the caller's tenant.
  std::string tenant;
};

// GetQrCode: which link, drawn how.
struct QrQuery {
  std::string code;
  qr::QrOptions options;
};

// A link's short URL as a QR image.
struct LinkQrCode {
  std::string short_url;
  qr::QrImage image;
};

// A link as its owner sees it: the link and its human clicks ever counted.
struct LinkWithClicks {
  LinkView view;
  int64_t human_clicks = 0;
  // GetLink with the FULL view: its changes, oldest first.
  std::vector<store::LinkChange> history;
};

class LinkStats {
 public:
  using Caller = std::shared_ptr<const auth::Principal>;
  using LinkDone = std::function<void(absl::StatusOr<LinkWithClicks>)>;
  using StatsDone = std::function<void(absl::StatusOr<clicks::ClickStats>)>;
  using QrDone = std::function<void(absl::StatusOr<LinkQrCode>)>;

  // All outlive the LinkStats. `clock` gives "now" for the default range of
  // GetClickStats.
  LinkStats(Shortener* shortener, clicks::ClickStore* clicks, ThreadPool* blocking_pool,
            const Clock& clock = SystemClock());

  // The link `code` names, as Shortener::GetLink answers for `caller` (null:
  // tests, tools), with its human clicks (ClickStore::HumanTotal). Errors:
  // GetLink's; RESOURCE_EXHAUSTED when the blocking pool is full; the click
  // store's (UNAVAILABLE: the whole call fails rather than report 0
  // clicks).
  // With `with_history` (the FULL view), also the link's changes
  // (Shortener::LinkHistory), in the same pool task.
  void GetLink(absl::string_view code, Caller caller, LinkDone done, bool with_history = false);

  // The short URL of the link query.code names as a QR image
  // (qr::RenderQr, drawn on the blocking pool: a 4096 px PNG takes about
  // 70 ms of CPU). Errors: GetLink's first (another tenant's link is
  // NOT_FOUND whatever the options), then RenderQr's (INVALID_ARGUMENT
  // naming the field), RESOURCE_EXHAUSTED when the pool is full.
  void GetQrCode(const QrQuery& query, Caller caller, QrDone done);

  // Statistics of the link `code` names over `query`'s range, defaults
  // applied at the clock's time (clicks::ResolveStatsRange). The range is
  // checked first: INVALID_ARGUMENT naming the field, before any read.
  // Then errors as GetLink, and the click store's (INVALID_ARGUMENT for
  // more buckets than a read may cover).
  void GetClickStats(absl::string_view code, Caller caller, const ClickStatsQuery& query,
                     StatsDone done);

  // Statistics of every link of a tenant with the label `filter` names
  // (ParseLabelFilter), over `query`'s range, read from the label's own
  // rollups (clicks::LabelSubject): the clicks each link had while it
  // carried the label. The tenant is query.tenant when set, else the
  // caller's (null caller: Shortener::default_owner()); only an admin may
  // name another tenant. A label the tenant never had answers the
  // statistics of a label never clicked (zeros), not NOT_FOUND. Errors, in
  // order, before any read: INVALID_ARGUMENT for the range (naming the
  // field) or the filter ("filter: ..."), PERMISSION_DENIED for a
  // non-admin naming another tenant; then RESOURCE_EXHAUSTED when the
  // blocking pool is full, and the stores' errors.
  void GetLabelStats(absl::string_view filter, Caller caller, const ClickStatsQuery& query,
                     StatsDone done);

 private:
  // Shortener::GetLink for `caller`, then `read(the link)` on the blocking
  // pool, whose answer is `done`'s.
  template <typename Result>
  void ReadOwnedLink(absl::string_view code, Caller caller,
                     std::function<absl::StatusOr<Result>(LinkView)> read,
                     std::function<void(absl::StatusOr<Result>)> done);

  // What GetLabelStats reads, checked: the range (defaults applied), the
  // label and the tenant.
  struct LabelRead {
    clicks::StatsRange range;
    std::string tenant, key, value;
  };
  absl::StatusOr<LabelRead> PlanLabelRead(absl::string_view filter, const auth::Principal* caller,
                                          const ClickStatsQuery& query) const;

  Shortener* const shortener_;
  clicks::ClickStore* const clicks_;
  ThreadPool* const blocking_pool_;
  const Clock& clock_;
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_LINK_STATS_H_
