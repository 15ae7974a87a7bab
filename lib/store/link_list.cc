#include "lib/store/link_list.h"

#include <algorithm>

namespace shortener::store {

LinkStatus StatusAt(const Link& link, absl::Time at) {
  if (link.revoke_time.has_value()) return LinkStatus::kRevoked;
  if (link.clicks_exhausted_time.has_value()) return LinkStatus::kExpired;
  if (link.expire_time.has_value() && *link.expire_time <= at) return LinkStatus::kExpired;
  return LinkStatus::kActive;
}

absl::string_view UrlHost(absl::string_view long_url) {
  const size_t scheme_end = long_url.find("://");
  if (scheme_end == absl::string_view::npos) return {};
  absl::string_view authority = long_url.substr(scheme_end + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  // Normalised URLs carry no user information, but a stray '@' must not
  // make the user part look like the host (the first '@' ends it, as in
  // PgLinkStore's SQL).
  if (const size_t at = authority.find('@'); at != absl::string_view::npos) {
    authority.remove_prefix(at + 1);
  }
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    return close == absl::string_view::npos ? authority : authority.substr(0, close + 1);
  }
  return authority.substr(0, authority.find(':'));
}

bool MatchesListQuery(const Link& link, const std::vector<int64_t>& label_ids_of_link,
                      const LinkListQuery& query) {
  if (link.owner != query.owner) return false;
  for (int64_t id : query.label_ids) {
    if (std::find(label_ids_of_link.begin(), label_ids_of_link.end(), id) ==
        label_ids_of_link.end()) {
      return false;
    }
  }
  if (query.status.has_value() &&
      (StatusAt(link, query.now) == *query.status) == query.status_negated) {
    return false;
  }
  if (query.created_from.has_value() && link.create_time < *query.created_from) return false;
  if (query.created_before.has_value() && link.create_time >= *query.created_before) return false;
  if (query.host.has_value() && UrlHost(link.long_url) != *query.host) return false;
  return true;
}

absl::StatusOr<LinkPage> ListByScans(const LinkListQuery& query, const ScanFn& scan) {
  std::vector<ScanPhase> phases;
  switch (query.order) {
    case LinkOrder::kNewestFirst:
      phases = {ScanPhase::kNewest};
      break;
    case LinkOrder::kOldestFirst:
      phases = {ScanPhase::kOldest};
      break;
    case LinkOrder::kMostClicked:
      if (query.after.has_value() && query.after->unclicked) {
        phases = {ScanPhase::kUnclicked};
      } else {
        phases = {ScanPhase::kClicked, ScanPhase::kUnclicked};
      }
      break;
  }
  LinkPage page;
  std::optional<ListCursor> after = query.after;
  std::optional<ListCursor> last_returned;
  for (ScanPhase phase : phases) {
    ScanRequest request;
    request.phase = phase;
    request.after = after;
    // One more than the page holds: whether the listing goes on after a
    // full page is known without another round.
    request.match_limit = query.page_size - static_cast<int>(page.links.size()) + 1;
    request.scan_limit = std::max(query.scan_limit, query.page_size);
    absl::StatusOr<ScanResult> result = scan(request);
    if (!result.ok()) return result.status();
    for (ScanMatch& match : result->matches) {
      if (static_cast<int>(page.links.size()) == query.page_size) {
        // The extra match: the previous one ends the page.
        page.next = last_returned;
        return page;
      }
      last_returned = match.cursor;
      page.links.push_back(std::move(match.link));
    }
    if (result->budget_spent) {
      // Stopped before the walk ended: go on from there.
      page.next = result->last_scanned;
      return page;
    }
    after.reset();  // the next phase starts at its beginning
  }
  return page;
}

}  // namespace shortener::store
