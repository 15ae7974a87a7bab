#include "services/shorten/link_remover.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "lib/common/status_macros.h"
#include "services/shorten/page_token.h"

namespace shortener::service {
namespace {

// Links a store page looks at, at most, per link it may return (as
// ListLinks' pages: link_lister.cc).
constexpr int kScanPerPageLink = 10;
constexpr int kMinScan = 1000;

}  // namespace

int BulkCallCost(int page_size) {
  const int links = page_size <= 0 ? kDefaultBulkPageSize : std::min(page_size, kMaxBulkPageSize);
  return (links + 999) / 1000;
}

LinkRemover::LinkRemover(Shortener* shortener, LinkLister* lister, store::LinkStore* links,
                         LinkRemoverOptions options, const Clock& clock)
    : shortener_(shortener),
      lister_(lister),
      links_(links),
      options_(std::move(options)),
      clock_(clock) {}

store::LinkDeletion LinkRemover::DeletionOf(std::vector<store::LinkRef> links,
                                            const auth::Principal* caller) const {
  store::LinkDeletion deletion;
  deletion.links = std::move(links);
  deletion.when = clock_.Now();
  deletion.actor = Shortener::ActorOf(caller);
  deletion.alias_release_time = deletion.when + options_.alias_hold;
  return deletion;
}

absl::Status LinkRemover::DeleteLink(absl::string_view code, const auth::Principal* caller) {
  SHORTENER_ASSIGN_OR_RETURN(store::Link link, shortener_->OwnedLink(code, caller));
  SHORTENER_ASSIGN_OR_RETURN(
      std::vector<store::Link> deleted,
      links_->DeleteLinks(DeletionOf({store::LinkRef{link.id, std::string(code)}}, caller)));
  if (deleted.empty()) {
    // Deleted by a concurrent call: as if it had never been there.
    return absl::NotFoundError(absl::StrCat("code \"", code, "\" does not exist"));
  }
  if (options_.erase_soon) options_.erase_soon();
  return absl::OkStatus();
}

absl::StatusOr<BulkLinksResult> LinkRemover::RevokeLinks(const BulkLinksQuery& query,
                                                         const auth::Principal* caller) {
  const absl::Time when = clock_.Now();
  return Walk(query, caller, [this, when](const std::vector<store::LinkRef>& links) {
    return links_->RevokeLinks(links, when);
  });
}

absl::StatusOr<BulkLinksResult> LinkRemover::DeleteLinks(const BulkLinksQuery& query,
                                                         const auth::Principal* caller) {
  bool deleted_any = false;
  absl::StatusOr<BulkLinksResult> result =
      Walk(query, caller, [&](const std::vector<store::LinkRef>& links) {
        absl::StatusOr<std::vector<store::Link>> deleted =
            links_->DeleteLinks(DeletionOf(links, caller));
        if (deleted.ok() && !deleted->empty()) deleted_any = true;
        return deleted;
      });
  // Also after a failure part way: what was deleted waits to be erased.
  if (deleted_any && options_.erase_soon) options_.erase_soon();
  return result;
}

absl::StatusOr<BulkLinksResult> LinkRemover::Walk(const BulkLinksQuery& query,
                                                  const auth::Principal* caller,
                                                  const Action& act) {
  if (query.filter.empty()) {
    return absl::InvalidArgumentError(
        "filter: required: name the links, e.g. labels.campaign = \"spring-sale\" (every link: "
        "create_time > \"1970-01-01T00:00:00Z\")");
  }
  if (query.page_size < 0 || query.page_size > kMaxBulkPageSize) {
    return absl::InvalidArgumentError(absl::StrCat("page_size: must be 0 (meaning ",
                                                   kDefaultBulkPageSize, ") to ", kMaxBulkPageSize,
                                                   ", got ", query.page_size));
  }
  ListLinksQuery list;
  list.tenant = query.tenant;
  list.filter = query.filter;
  list.page_token = query.page_token;
  SHORTENER_ASSIGN_OR_RETURN(LinkLister::Plan plan, lister_->PlanList(list, caller));
  BulkLinksResult result;
  SHORTENER_ASSIGN_OR_RETURN(bool any, lister_->ResolveLabels(plan));
  if (!any) return result;
  int remaining = query.page_size == 0 ? kDefaultBulkPageSize : query.page_size;
  // As many store pages as the call may act on links, each bounded. A page
  // that fails after others were done ends the call with what was done and
  // the token of the failed page: the codes already changed are not lost
  // (a retry would not list them again), and the retry redoes that page.
  for (int pages = (remaining + store::kMaxPageSize - 1) / store::kMaxPageSize;
       pages > 0 && remaining > 0; --pages) {
    plan.query.page_size =
        std::min({remaining, store::kMaxPageSize, static_cast<int>(store::kMaxLinksPerChange)});
    plan.query.scan_limit = std::max(kMinScan, kScanPerPageLink * plan.query.page_size);
    absl::StatusOr<PageDone> page = ActOnPage(plan.query, act, result.codes);
    if (!page.ok()) {
      if (result.codes.empty()) return page.status();
      break;  // plan.query.after is still the failed page's start
    }
    remaining -= static_cast<int>(page->links);
    plan.query.after = page->next;
    if (!page->next.has_value()) break;
  }
  if (plan.query.after.has_value()) {
    result.next_page_token = EncodePageToken(*plan.query.after, plan.fingerprint);
  }
  return result;
}

absl::StatusOr<LinkRemover::PageDone> LinkRemover::ActOnPage(const store::LinkListQuery& query,
                                                             const Action& act,
                                                             std::vector<std::string>& codes) {
  SHORTENER_ASSIGN_OR_RETURN(store::LinkPage page, links_->ListLinks(query));
  std::vector<store::LinkRef> refs;
  absl::flat_hash_map<int64_t, std::string> code_of;
  for (store::Link& link : page.links) {
    const int64_t id = link.id;
    SHORTENER_ASSIGN_OR_RETURN(LinkView view, shortener_->ToView(std::move(link)));
    refs.push_back(store::LinkRef{id, view.code});
    code_of[id] = std::move(view.code);
  }
  if (!refs.empty()) {
    SHORTENER_ASSIGN_OR_RETURN(std::vector<store::Link> changed, act(refs));
    for (const store::Link& link : changed) codes.push_back(code_of[link.id]);
  }
  return PageDone{refs.size(), page.next};
}

}  // namespace shortener::service
