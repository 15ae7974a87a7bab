// The filter of GetClickStats (GetClickStatsRequest.filter): which label's
// statistics to read. The text is parsed by lib/filter (the AIP-160 subset
// every filter field shares); this checks its terms against what
// GetClickStats supports: exactly one condition `labels.KEY = "VALUE"`, KEY
// and VALUE by the label rule (store::ValidateLabelKey/Value). One label
// only: a campaign's statistics are kept per label at ingest, and an AND of
// labels would have to be computed from the links at query time.
//
// Thread safety: pure function.
#ifndef SHORTENER_SERVICES_SHORTEN_LABEL_FILTER_H_
#define SHORTENER_SERVICES_SHORTEN_LABEL_FILTER_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/filter/filter.h"

namespace shortener::service {

struct LabelCondition {
  std::string key;
  std::string value;
};

// The label `filter` names. INVALID_ARGUMENT, the message starting
// "filter: ", for text lib/filter refuses (its message, naming the byte),
// no condition, more than one ("filter: only one label condition is
// supported"), a field other than labels.KEY, a comparator other than "=",
// or a key or value the label rule refuses (naming it and the rule).
absl::StatusOr<LabelCondition> ParseLabelFilter(absl::string_view filter);

// Whether `term` is about a label (its field starts "labels.").
bool IsLabelTerm(const filter::Term& term);
// The label condition of one term for which IsLabelTerm holds: the rule
// above for its comparator, key and value (the same errors). Every filter
// with label terms (GetClickStats, ListLinks) reads them with this.
absl::StatusOr<LabelCondition> ParseLabelTerm(const filter::Term& term);

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_LABEL_FILTER_H_
