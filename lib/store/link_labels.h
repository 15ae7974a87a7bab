// The rule for link labels (ShortenRequest.labels, docs/api.md "Labels"),
// owned here and called by the service (to answer INVALID_ARGUMENT before
// anything is stored) and by every LinkStore (ValidateNewLink), so that no
// store ever holds a label that breaks it:
//   - at most kMaxLabels labels per link;
//   - a key matches [a-z][a-z0-9_-]{0,62};
//   - a value matches [a-z0-9_-]{0,63} (it may be empty).
// The characters allowed exclude '=' and ',', which stores may therefore use
// as separators (PgLinkStore reads a link's labels as "k=v,k=v").
//
// Thread safety: pure functions.
#ifndef SHORTENER_LIB_STORE_LINK_LABELS_H_
#define SHORTENER_LIB_STORE_LINK_LABELS_H_

#include <cstddef>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace shortener::store {

// A link's labels, key -> value. Ordered by key: the order in which stores
// keep and hash them.
using Labels = std::map<std::string, std::string>;

inline constexpr size_t kMaxLabels = 16;
inline constexpr size_t kMaxLabelKeyLength = 63;
inline constexpr size_t kMaxLabelValueLength = 63;

// OK, or INVALID_ARGUMENT naming the key and the rule it breaks, e.g.
//   labels: key "Campaign" must match [a-z][a-z0-9_-]{0,62}
absl::Status ValidateLabelKey(absl::string_view key);

// OK, or INVALID_ARGUMENT naming the label and the rule it breaks, e.g.
//   labels: value of "campaign" must match [a-z0-9_-]{0,63}, got "Spring Sale"
absl::Status ValidateLabelValue(absl::string_view key, absl::string_view value);

// ValidateLabelKey and ValidateLabelValue of every label, in key order, and
// at most kMaxLabels of them:
//   labels: at most 16 per link, got 17
absl::Status ValidateLabels(const Labels& labels);

}  // namespace shortener::store

#endif  // SHORTENER_LIB_STORE_LINK_LABELS_H_
