#include "services/shorten/link_lister.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/common/status_macros.h"
#include "lib/filter/filter.h"
#include "services/shorten/list_filter.h"
#include "services/shorten/page_token.h"

namespace shortener::service {
namespace {

// Links a page looks at, at most, per page_size it returns: conditions no
// index serves (state, host, a second label) may reject most links, and a
// page then comes back short rather than reading on (store::LinkListQuery).
constexpr int kScanPerPageLink = 10;
constexpr int kMinScan = 1000;

}  // namespace

LinkLister::LinkLister(Shortener* shortener, store::LinkStore* links, clicks::ClickStore* clicks,
                       ThreadPool* blocking_pool, const Clock& clock)
    : shortener_(shortener),
      links_(links),
      clicks_(clicks),
      blocking_pool_(blocking_pool),
      clock_(clock) {}

absl::StatusOr<LinkLister::Plan> LinkLister::PlanList(const ListLinksQuery& query,
                                                      const auth::Principal* caller) const {
  if (query.page_size < 0 || query.page_size > store::kMaxPageSize) {
    return absl::InvalidArgumentError(absl::StrCat("page_size: must be 0 (meaning ",
                                                   kDefaultListPageSize, ") to ",
                                                   store::kMaxPageSize, ", got ", query.page_size));
  }
  Plan plan;
  SHORTENER_ASSIGN_OR_RETURN(filter::Filter parsed, filter::ParseFilter(query.filter));
  SHORTENER_ASSIGN_OR_RETURN(ListConditions conditions, ParseListFilter(query.filter));
  SHORTENER_ASSIGN_OR_RETURN(plan.query.order, ParseListOrder(query.order_by));
  SHORTENER_ASSIGN_OR_RETURN(plan.query.owner, shortener_->TenantFor(caller, query.tenant));
  plan.fingerprint = ListingFingerprint(plan.query.owner, filter::Format(parsed), plan.query.order);
  if (!query.page_token.empty()) {
    SHORTENER_ASSIGN_OR_RETURN(plan.query.after,
                               DecodePageToken(query.page_token, plan.fingerprint));
  }
  plan.query.page_size = query.page_size == 0 ? kDefaultListPageSize : query.page_size;
  plan.query.scan_limit = std::max(kMinScan, kScanPerPageLink * plan.query.page_size);
  plan.query.status = conditions.status;
  plan.query.status_negated = conditions.status_negated;
  plan.query.now = clock_.Now();
  plan.query.created_from = conditions.created_from;
  plan.query.created_before = conditions.created_before;
  plan.query.host = std::move(conditions.host);
  plan.labels = std::move(conditions.labels);
  return plan;
}

void LinkLister::List(const ListLinksQuery& query, Caller caller, Done done) {
  absl::StatusOr<Plan> plan = PlanList(query, caller.get());
  if (!plan.ok()) {
    done(plan.status());
    return;
  }
  // Every read blocks: on the pool. `done` is copied in: a refusal still has
  // it to answer with.
  absl::Status queued = blocking_pool_->Schedule(
      [this, done, plan = *std::move(plan)]() mutable { done(Read(std::move(plan))); });
  if (!queued.ok()) done(queued);
}

absl::StatusOr<bool> LinkLister::ResolveLabels(Plan& plan) {
  for (const LabelCondition& label : plan.labels) {
    absl::StatusOr<int64_t> id = links_->FindLabelId(plan.query.owner, label.key, label.value);
    // No link of the tenant ever had the label: none has it now.
    if (absl::IsNotFound(id.status())) return false;
    if (!id.ok()) return id.status();
    plan.query.label_ids.push_back(*id);
  }
  plan.labels.clear();
  return true;
}

absl::StatusOr<LinkListPage> LinkLister::Read(Plan plan) {
  SHORTENER_ASSIGN_OR_RETURN(bool any, ResolveLabels(plan));
  if (!any) return LinkListPage{};
  SHORTENER_ASSIGN_OR_RETURN(store::LinkPage page, links_->ListLinks(plan.query));
  std::vector<int64_t> ids;
  ids.reserve(page.links.size());
  for (const store::Link& link : page.links) ids.push_back(link.id);
  SHORTENER_ASSIGN_OR_RETURN(std::vector<int64_t> clicks, clicks_->HumanTotals(ids));
  LinkListPage answer;
  answer.links.reserve(page.links.size());
  for (size_t i = 0; i < page.links.size(); ++i) {
    SHORTENER_ASSIGN_OR_RETURN(LinkView view, shortener_->ToView(std::move(page.links[i])));
    answer.links.push_back(LinkWithClicks{std::move(view), clicks[i], {}});
  }
  if (page.next.has_value()) answer.next_page_token = EncodePageToken(*page.next, plan.fingerprint);
  return answer;
}

}  // namespace shortener::service
