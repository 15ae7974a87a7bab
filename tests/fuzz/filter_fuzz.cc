// Fuzzes lib/filter/filter.h: ParseFilter, which reads the `filter` field a
// client sends (GetClickStats, ListLinks), and Format.
//
// Input: the filter text. Invariants, besides no memory error or UB:
//  - a refusal is INVALID_ARGUMENT with a short message of clean text
//    starting "filter: ";
//  - a parsed filter has at most kMaxTerms terms, each field a dot-separated
//    path of segments [A-Za-z_][A-Za-z0-9_-]*, each bare value a non-empty
//    run of [A-Za-z0-9_.:+-], each quoted value clean text;
//  - Format's text parses back to the same terms whenever it fits in
//    kMaxFilterBytes (it may not: canonical spacing and quoting can be
//    longer than the input), and Format of those is the same text;
//  - whitespace around the text changes nothing, and ParseFilter is
//    deterministic.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "lib/common/utf8.h"
#include "lib/filter/filter.h"
#include "tests/fuzz/fuzz_check.h"

namespace shortener::filter {
namespace {

bool IsAlpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsFieldPath(absl::string_view field) {
  bool segment_start = true;
  for (char c : field) {
    if (segment_start) {
      if (!IsAlpha(c) && c != '_') return false;
      segment_start = false;
    } else if (c == '.') {
      segment_start = true;
    } else if (!IsAlpha(c) && !IsDigit(c) && c != '_' && c != '-') {
      return false;
    }
  }
  return !segment_start;
}

bool IsBareValue(absl::string_view value) {
  if (value.empty()) return false;
  for (char c : value) {
    if (!IsAlpha(c) && !IsDigit(c) && c != '_' && c != '.' && c != ':' && c != '+' && c != '-') {
      return false;
    }
  }
  return true;
}

void CheckTerms(const Filter& filter) {
  FUZZ_CHECK(filter.terms.size() <= kMaxTerms);
  for (const Term& term : filter.terms) {
    FUZZ_CHECK(IsFieldPath(term.field));
    FUZZ_CHECK(term.field != "AND" && term.field != "OR" && term.field != "NOT");
    if (term.quoted) {
      FUZZ_CHECK(utf8::FindTextFault(term.value).kind == utf8::TextFault::Kind::kNone);
    } else {
      FUZZ_CHECK(IsBareValue(term.value));
    }
  }
}

void CheckRoundTrip(const Filter& filter) {
  const std::string canonical = Format(filter);
  const absl::StatusOr<Filter> again = ParseFilter(canonical);
  if (canonical.size() > kMaxFilterBytes) {
    FUZZ_CHECK(!again.ok() && absl::StartsWith(again.status().message(), "filter: ") &&
               absl::StrContains(again.status().message(), "bytes, at most"));
    return;
  }
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->terms == filter.terms);
  FUZZ_CHECK(Format(*again) == canonical);
}

void FuzzOne(absl::string_view text) {
  const absl::StatusOr<Filter> parsed = ParseFilter(text);
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument);
    const absl::string_view message = parsed.status().message();
    FUZZ_CHECK(absl::StartsWith(message, "filter: "));
    FUZZ_CHECK(message.size() <= 160);
    FUZZ_CHECK(utf8::FindTextFault(message).kind == utf8::TextFault::Kind::kNone);
  } else {
    CheckTerms(*parsed);
    CheckRoundTrip(*parsed);
  }
  const absl::StatusOr<Filter> same = ParseFilter(text);
  FUZZ_CHECK(same.ok() == parsed.ok());
  if (parsed.ok()) {
    FUZZ_CHECK(same->terms == parsed->terms);
    if (text.size() + 2 <= kMaxFilterBytes) {
      const absl::StatusOr<Filter> padded = ParseFilter(" " + std::string(text) + "\n");
      FUZZ_CHECK(padded.ok() && padded->terms == parsed->terms);
    }
  } else {
    FUZZ_CHECK(same.status() == parsed.status());
  }
}

}  // namespace
}  // namespace shortener::filter

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shortener::filter::FuzzOne(absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
