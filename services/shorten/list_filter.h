// The `filter` and `order_by` of ListLinks (and of the bulk operations that
// take the same filter): the text is parsed by lib/filter (the AIP-160
// subset every filter field shares); this checks its terms against the
// fields a link listing supports and turns them into conditions:
//
//   labels.KEY = "VALUE"       any number, all must hold (ParseLabelTerm's
//                              rule for KEY and VALUE)
//   state = ACTIVE             or != ; ACTIVE, REVOKED, EXPIRED (or their
//                              LINK_STATE_ names); at most once; judged at
//                              the time of the call
//   create_time > "2026-11-01T00:00:00Z"
//                              <, <=, >, >= ; RFC 3339 with an offset; each
//                              narrows the range
//   long_url_host = "example.com"
//                              the target's host exactly (compared in its
//                              canonical form: lower case, IDN in punycode);
//                              at most once
//
// order_by: "create_time desc" (the default, also for ""), "create_time"
// or "create_time asc" (ascending is AIP-132's default direction), and
// "click_count desc" (most clicked first; the least clicked first is not
// offered: it would be the never-clicked links, newest first). Words are
// separated by blanks; the field names and asc/desc are lower case.
//
// Errors are INVALID_ARGUMENT naming the field: "filter: ..." (lib/filter's
// message for syntax, or which term is wrong and why), "order_by: ...".
//
// Thread safety: pure functions.
#ifndef SHORTENER_SERVICES_SHORTEN_LIST_FILTER_H_
#define SHORTENER_SERVICES_SHORTEN_LIST_FILTER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/store/link_list.h"
#include "services/shorten/label_filter.h"

namespace shortener::service {

struct ListConditions {
  std::vector<LabelCondition> labels;  // in the filter's order, no repeats
  std::optional<store::LinkStatus> status;
  bool status_negated = false;
  // [created_from, created_before), in whole microseconds (as links keep
  // their create times); unset: open.
  std::optional<absl::Time> created_from;
  std::optional<absl::Time> created_before;
  std::optional<std::string> host;  // canonical
};

absl::StatusOr<ListConditions> ParseListFilter(absl::string_view filter);

absl::StatusOr<store::LinkOrder> ParseListOrder(absl::string_view order_by);

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_LIST_FILTER_H_
