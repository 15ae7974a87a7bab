#include "lib/auth/domain_allowlist.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/url/host_name.h"

namespace shortener::auth {
namespace {

using url::IsHostNameChar;
using url::kMaxHostLabelLength;
using url::kMaxHostNameLength;

// Lower case, one trailing dot removed.
std::string Normalise(absl::string_view name) {
  if (absl::EndsWith(name, ".")) name.remove_suffix(1);
  return absl::AsciiStrToLower(name);
}

// Checks `name` (normalised, no wildcard) label by label. Returns "" if it is
// a valid host name, else the rule it breaks.
std::string HostNameProblem(absl::string_view name) {
  if (name.size() > kMaxHostNameLength) {
    return absl::StrCat("longer than ", kMaxHostNameLength, " characters");
  }
  for (absl::string_view label : absl::StrSplit(name, '.')) {
    if (label.empty()) return "empty label";
    if (label.size() > kMaxHostLabelLength) {
      return absl::StrCat("label longer than ", kMaxHostLabelLength, " characters");
    }
    for (char c : label) {
      if (c == '*') return "'*' is allowed only as the whole leftmost label (\"*.example.com\")";
      if (!IsHostNameChar(c)) {
        return "only letters, digits, '-' and '.' are allowed (write IDNs as punycode, xn--...)";
      }
    }
  }
  return "";
}

absl::Status BadEntry(absl::string_view entry, absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("allowed domains: entry \"", absl::CEscape(entry), "\": ", problem));
}

}  // namespace

absl::StatusOr<DomainAllowlist> DomainAllowlist::FromEntries(
    const std::vector<std::string>& entries) {
  DomainAllowlist list;
  for (const std::string& raw : entries) {
    const absl::string_view entry = absl::StripAsciiWhitespace(raw);
    if (entry.empty()) return BadEntry(raw, "empty entry");
    std::string name = Normalise(entry);
    const bool wildcard = absl::StartsWith(name, "*.");
    if (name == "*" || name == "*.") return BadEntry(entry, "'*' alone would allow every domain");
    if (wildcard) name.erase(0, 2);
    if (name.empty()) return BadEntry(entry, "empty label");
    const std::string problem = HostNameProblem(name);
    if (!problem.empty()) return BadEntry(entry, problem);
    if (wildcard) {
      if (name.find('.') == std::string::npos) {
        return BadEntry(entry, "a wildcard must cover at least two labels (\"*.example.com\")");
      }
      list.wildcard_parents_.insert(std::move(name));
    } else {
      list.exact_.insert(std::move(name));
    }
  }
  return list;
}

absl::StatusOr<DomainAllowlist> DomainAllowlist::Parse(absl::string_view comma_separated) {
  if (absl::StripAsciiWhitespace(comma_separated).empty()) return DomainAllowlist();
  return FromEntries(absl::StrSplit(comma_separated, ','));
}

bool DomainAllowlist::Allows(absl::string_view host) const {
  if (empty()) return true;
  const std::string name = Normalise(host);
  if (name.empty() || name.size() > kMaxHostNameLength) return false;
  if (exact_.contains(name)) return true;
  if (wildcard_parents_.empty()) return false;
  // Each proper parent on a label boundary: a.b.example.com -> b.example.com,
  // example.com, com. Only a non-empty label may precede the parent.
  absl::string_view rest = name;
  size_t label_start = 0;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] != '.') {
      // Entries are LDH only, so a wildcard's own label must be too: a '*',
      // '_', '%' or non-ASCII byte means this is not a host we allow.
      if (!IsHostNameChar(rest[i])) return false;
      continue;
    }
    if (i == label_start) return false;  // empty label
    const absl::string_view parent = rest.substr(i + 1);
    if (!parent.empty() && wildcard_parents_.contains(parent)) return true;
    label_start = i + 1;
  }
  return false;
}

std::string DomainAllowlist::ToString() const {
  std::vector<std::string> entries(exact_.begin(), exact_.end());
  for (const std::string& parent : wildcard_parents_) entries.push_back(absl::StrCat("*.", parent));
  std::sort(entries.begin(), entries.end());
  return absl::StrJoin(entries, ",");
}

}  // namespace shortener::auth
