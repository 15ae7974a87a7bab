// LinkLister: the domain logic of ListLinks, free of gRPC and proto types.
// It checks the request (filter and order_by by list_filter.h, the page
// token by page_token.h, the tenant by Shortener::TenantFor), turns label
// conditions into label ids, reads one page from the LinkStore
// (keyset, bounded: lib/store/link_list.h) and the page's human click
// totals from the ClickStore in one more read, and hands back views with
// their clicks and the token of the next page.
//
// Thread-safe. List never blocks the calling thread: the reads run on
// `blocking_pool`; `done` runs on the calling thread (refusals) or a pool
// thread.
#ifndef SHORTENER_SERVICES_SHORTEN_LINK_LISTER_H_
#define SHORTENER_SERVICES_SHORTEN_LINK_LISTER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/auth/principal.h"
#include "lib/clicks/click_store.h"
#include "lib/common/clock.h"
#include "lib/common/thread_pool.h"
#include "lib/store/link_store.h"
#include "services/shorten/label_filter.h"
#include "services/shorten/link_stats.h"
#include "services/shorten/shortener.h"

namespace shortener::service {

// ListLinks' request as given.
struct ListLinksQuery {
  std::string tenant;      // "": the caller's
  int page_size = 0;       // 0: kDefaultListPageSize
  std::string page_token;  // "": the first page
  std::string filter;
  std::string order_by;
};

struct LinkListPage {
  std::vector<LinkWithClicks> links;
  std::string next_page_token;  // "": the last page
};

inline constexpr int kDefaultListPageSize = 100;

class LinkLister {
 public:
  using Caller = std::shared_ptr<const auth::Principal>;
  using Done = std::function<void(absl::StatusOr<LinkListPage>)>;

  // All outlive the LinkLister. `clock` gives the time states are judged
  // at.
  LinkLister(Shortener* shortener, store::LinkStore* links, clicks::ClickStore* clicks,
             ThreadPool* blocking_pool, const Clock& clock = SystemClock());

  // A page of the links of query.tenant (default the caller's; only an
  // admin may name another; a null caller is an admin: tests, tools).
  // Errors, in order, before any read: INVALID_ARGUMENT naming the field
  // (page_size outside 0..store::kMaxPageSize, filter, order_by,
  // page_token), PERMISSION_DENIED for a non-admin naming another tenant;
  // then RESOURCE_EXHAUSTED when the pool is full, and the stores'
  // errors (UNAVAILABLE). A label the tenant never had answers an empty
  // last page.
  void List(const ListLinksQuery& query, Caller caller, Done done);

  // What a request asks the store for, checked as List checks it (no
  // read): the store query (labels not resolved yet), its label
  // conditions and the fingerprint its page tokens are bound to
  // (page_token.h). Also for the bulk operations over the same filters
  // (link_remover.h).
  struct Plan {
    store::LinkListQuery query;
    std::vector<LabelCondition> labels;  // to turn into query.label_ids
    uint64_t fingerprint = 0;
  };
  absl::StatusOr<Plan> PlanList(const ListLinksQuery& query, const auth::Principal* caller) const;
  // Turns plan.labels into plan.query.label_ids. false when the tenant
  // never had one of them (then no link matches). Blocks (database reads).
  absl::StatusOr<bool> ResolveLabels(Plan& plan);

 private:
  absl::StatusOr<LinkListPage> Read(Plan plan);

  Shortener* const shortener_;
  store::LinkStore* const links_;
  clicks::ClickStore* const clicks_;
  ThreadPool* const blocking_pool_;
  const Clock& clock_;
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_LINK_LISTER_H_
