#include "services/shorten/label_filter.h"

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/common/status_macros.h"
#include "lib/filter/filter.h"
#include "lib/store/link_labels.h"

namespace shortener::service {
namespace {

constexpr absl::string_view kLabelsPrefix = "labels.";

absl::Status FilterError(absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("filter: ", problem));
}

// The label rule's message ("labels: ..."), as a filter error.
absl::Status AsFilterError(const absl::Status& label_error) {
  if (label_error.ok()) return label_error;
  return FilterError(label_error.message());
}

}  // namespace

bool IsLabelTerm(const filter::Term& term) { return absl::StartsWith(term.field, kLabelsPrefix); }

absl::StatusOr<LabelCondition> ParseLabelFilter(absl::string_view filter) {
  SHORTENER_ASSIGN_OR_RETURN(filter::Filter parsed, filter::ParseFilter(filter));
  if (parsed.terms.empty()) {
    return FilterError("give one label condition, labels.KEY = \"VALUE\"");
  }
  if (parsed.terms.size() > 1) return FilterError("only one label condition is supported");
  const filter::Term& term = parsed.terms[0];
  if (!IsLabelTerm(term)) {
    return FilterError(absl::StrCat("unknown field \"", absl::CHexEscape(term.field),
                                    "\" (supported: labels.KEY)"));
  }
  return ParseLabelTerm(term);
}

absl::StatusOr<LabelCondition> ParseLabelTerm(const filter::Term& term) {
  if (term.op != filter::Op::kEq) {
    return FilterError(
        absl::StrCat("labels support only \"=\", got \"", filter::OpText(term.op), "\""));
  }
  LabelCondition condition{term.field.substr(kLabelsPrefix.size()), term.value};
  SHORTENER_RETURN_IF_ERROR(AsFilterError(store::ValidateLabelKey(condition.key)));
  SHORTENER_RETURN_IF_ERROR(
      AsFilterError(store::ValidateLabelValue(condition.key, condition.value)));
  return condition;
}

}  // namespace shortener::service
