// Parses the `filter` field of requests (GetClickStats, ListLinks): a
// subset of AIP-160 (https://google.aip.dev/160), a conjunction of
// comparisons such as
//
//   labels.campaign = "spring-sale" AND state = ACTIVE
//     AND create_time > "2026-11-01T00:00:00Z"
//
// Grammar (whitespace -- space, TAB, CR, LF -- may stand between tokens):
//
//   filter     = [ term { "AND" term } ]        at most kMaxTerms terms
//   term       = field comparator value
//   field      = segment { "." segment }
//   segment    = [A-Za-z_][A-Za-z0-9_-]*        (label keys contain '-')
//   comparator = "=" | "!=" | "<" | "<=" | ">" | ">="
//   value      = quoted | bare
//   quoted     = '"' chars '"' | "'" chars "'"   escapes \" \' \\ only
//   bare       = [A-Za-z0-9_.:+-]+               ACTIVE, 100, 2026-11-01T00:00:00Z
//
// "AND" is case-sensitive, as in AIP-160. The text is at most
// kMaxFilterBytes bytes of well-formed UTF-8; outside quoted strings the only
// control characters allowed are whitespace, inside them none.
//
// This parser knows nothing of which fields exist or which comparators and
// value kinds a field accepts: the caller checks the terms against its own
// fields and names the term in its errors.
//
// Errors are INVALID_ARGUMENT with a message that names the problem and the
// byte offset (0-based) where it is, e.g.
//   filter: at byte 17: expected a value after "="
// The parts of AIP-160 not supported here (OR, NOT and "-" negation,
// parentheses, the has operator ":", function calls) each get their own
// message rather than a generic syntax error.
//
// Thread safety: pure functions.
#ifndef SHORTENER_LIB_FILTER_FILTER_H_
#define SHORTENER_LIB_FILTER_FILTER_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shortener::filter {

// Bounds on a filter's text and on its number of terms.
inline constexpr size_t kMaxFilterBytes = 4096;
inline constexpr size_t kMaxTerms = 32;

enum class Op { kEq, kNe, kLt, kLe, kGt, kGe };

// One comparison.
struct Term {
  std::string field;    // the field path as written, e.g. "labels.campaign", "state"
  Op op = Op::kEq;      //
  bool quoted = false;  // the value was a quoted string
  std::string value;    // unescaped

  friend bool operator==(const Term& a, const Term& b) {
    return a.field == b.field && a.op == b.op && a.quoted == b.quoted && a.value == b.value;
  }
  friend bool operator!=(const Term& a, const Term& b) { return !(a == b); }
};

// A conjunction (AND) of terms; no terms for an empty or blank filter.
struct Filter {
  std::vector<Term> terms;
};

// Parses `text` by the grammar above. Fails INVALID_ARGUMENT, the message
// starting "filter: ", for text that is longer than kMaxFilterBytes, not
// well-formed UTF-8, holds a control character other than whitespace
// outside a string (or any inside one), does not follow the grammar, or has
// more than kMaxTerms terms.
absl::StatusOr<Filter> ParseFilter(absl::string_view text);

// The comparator as written in a filter: "=", "!=", "<", "<=", ">", ">=".
absl::string_view OpText(Op op);

// The canonical text of `filter`: terms joined by " AND ", each as
// `field op value`, a quoted value in double quotes with `"` and `\`
// escaped, a bare value as it is. For a Filter that ParseFilter returned,
// ParseFilter(Format(f)) gives the same terms whenever the text fits in
// kMaxFilterBytes (canonical text can be a few bytes per term longer than
// the most compact input), and Format of that is the same text.
std::string Format(const Filter& filter);

}  // namespace shortener::filter

#endif  // SHORTENER_LIB_FILTER_FILTER_H_
