#include "services/shorten/list_filter.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/common/status_macros.h"
#include "lib/filter/filter.h"
#include "lib/url/url_policy.h"

namespace shortener::service {
namespace {

const absl::Time kEarliestTime = absl::FromUnixSeconds(-62135596800);
const absl::Time kLatestTime = absl::FromUnixSeconds(253402300799) + absl::Nanoseconds(999999999);

absl::Status FilterError(absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("filter: ", problem));
}

std::string Quoted(absl::string_view text) {
  return absl::StrCat("\"", absl::CHexEscape(text), "\"");
}

absl::Status EqualityOnly(const filter::Term& term, bool allow_not_equal) {
  if (term.op == filter::Op::kEq || (allow_not_equal && term.op == filter::Op::kNe)) {
    return absl::OkStatus();
  }
  return FilterError(absl::StrCat(term.field, " supports only \"=\"",
                                  allow_not_equal ? " and \"!=\"" : "", ", got \"",
                                  filter::OpText(term.op), "\""));
}

absl::StatusOr<store::LinkStatus> ParseState(absl::string_view value) {
  absl::string_view name = value;
  absl::ConsumePrefix(&name, "LINK_STATE_");
  if (name == "ACTIVE") return store::LinkStatus::kActive;
  if (name == "REVOKED") return store::LinkStatus::kRevoked;
  if (name == "EXPIRED") return store::LinkStatus::kExpired;
  return FilterError(absl::StrCat("state must be ACTIVE, REVOKED or EXPIRED, got ", Quoted(value)));
}

// Whole microseconds, rounded down / up.
absl::Time FloorMicros(absl::Time t) { return absl::FromUnixMicros(absl::ToUnixMicros(t)); }
absl::Time CeilMicros(absl::Time t) {
  const absl::Time floor = FloorMicros(t);
  return floor == t ? t : floor + absl::Microseconds(1);
}

absl::Status AddTimeTerm(const filter::Term& term, ListConditions& conditions) {
  absl::Time t;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, term.value, &t, &error)) {
    return FilterError(
        absl::StrCat("create_time wants an RFC 3339 time such as "
                     "\"2026-11-01T00:00:00Z\", got ",
                     Quoted(term.value)));
  }
  // google.protobuf.Timestamp's range (ParseTime also takes
  // "infinite-future", and years no database keeps).
  if (t < kEarliestTime || t > kLatestTime) {
    return FilterError(absl::StrCat(
        "create_time must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, got ",
        Quoted(term.value)));
  }
  // Links keep whole microseconds: each bound becomes one on that grid.
  std::optional<absl::Time> from, before;
  switch (term.op) {
    case filter::Op::kGt:
      from = FloorMicros(t) + absl::Microseconds(1);
      break;
    case filter::Op::kGe:
      from = CeilMicros(t);
      break;
    case filter::Op::kLt:
      before = CeilMicros(t);
      break;
    case filter::Op::kLe:
      before = FloorMicros(t) + absl::Microseconds(1);
      break;
    case filter::Op::kEq:
    case filter::Op::kNe:
      return FilterError(absl::StrCat("create_time supports <, <=, > and >=, got \"",
                                      filter::OpText(term.op), "\""));
  }
  if (from.has_value()) {
    conditions.created_from =
        conditions.created_from.has_value() ? std::max(*conditions.created_from, *from) : *from;
  }
  if (before.has_value()) {
    conditions.created_before = conditions.created_before.has_value()
                                    ? std::min(*conditions.created_before, *before)
                                    : *before;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ListConditions> ParseListFilter(absl::string_view filter) {
  SHORTENER_ASSIGN_OR_RETURN(filter::Filter parsed, filter::ParseFilter(filter));
  ListConditions conditions;
  for (const filter::Term& term : parsed.terms) {
    if (IsLabelTerm(term)) {
      SHORTENER_ASSIGN_OR_RETURN(LabelCondition label, ParseLabelTerm(term));
      for (const LabelCondition& seen : conditions.labels) {
        if (seen.key != label.key) continue;
        if (seen.value != label.value) {
          return FilterError(
              absl::StrCat("labels.", label.key, " is given two values: no link has both"));
        }
      }
      const bool repeated =
          std::any_of(conditions.labels.begin(), conditions.labels.end(),
                      [&](const LabelCondition& seen) { return seen.key == label.key; });
      if (!repeated) conditions.labels.push_back(std::move(label));
    } else if (term.field == "state") {
      SHORTENER_RETURN_IF_ERROR(EqualityOnly(term, /*allow_not_equal=*/true));
      if (conditions.status.has_value()) return FilterError("state may be given once");
      SHORTENER_ASSIGN_OR_RETURN(conditions.status, ParseState(term.value));
      conditions.status_negated = term.op == filter::Op::kNe;
    } else if (term.field == "create_time") {
      SHORTENER_RETURN_IF_ERROR(AddTimeTerm(term, conditions));
    } else if (term.field == "long_url_host") {
      SHORTENER_RETURN_IF_ERROR(EqualityOnly(term, /*allow_not_equal=*/false));
      if (conditions.host.has_value()) return FilterError("long_url_host may be given once");
      absl::StatusOr<std::string> host = url::CanonicalDomain(term.value);
      if (!host.ok()) {
        return FilterError(absl::StrCat("long_url_host must be a host name or an address, got ",
                                        Quoted(term.value)));
      }
      conditions.host = *std::move(host);
    } else {
      return FilterError(absl::StrCat("unknown field ", Quoted(term.field),
                                      " (supported: labels.KEY, state, create_time, "
                                      "long_url_host)"));
    }
  }
  return conditions;
}

absl::StatusOr<store::LinkOrder> ParseListOrder(absl::string_view order_by) {
  std::vector<absl::string_view> words =
      absl::StrSplit(order_by, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  const absl::string_view field = words.empty() ? "create_time" : words[0];
  const absl::string_view direction = words.size() > 1 ? words[1] : "";
  const bool too_many = words.size() > 2;
  if (!too_many && field == "create_time" && words.empty()) return store::LinkOrder::kNewestFirst;
  if (!too_many && field == "create_time" && direction == "desc") {
    return store::LinkOrder::kNewestFirst;
  }
  if (!too_many && field == "create_time" && (direction.empty() || direction == "asc")) {
    return store::LinkOrder::kOldestFirst;
  }
  if (!too_many && field == "click_count" && direction == "desc") {
    return store::LinkOrder::kMostClicked;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("order_by: must be \"create_time desc\" (the default), \"create_time\", "
                   "\"create_time asc\" or \"click_count desc\", got ",
                   Quoted(order_by)));
}

}  // namespace shortener::service
