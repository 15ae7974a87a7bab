#include "lib/store/link_labels.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/store/link_store.h"

namespace shortener::store {
namespace {

bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsLabelChar(char c) { return IsLower(c) || (c >= '0' && c <= '9') || c == '_' || c == '-'; }

bool AllLabelChars(absl::string_view s) {
  for (char c : s) {
    if (!IsLabelChar(c)) return false;
  }
  return true;
}

std::string Quote(absl::string_view s) { return absl::StrCat("\"", absl::CHexEscape(s), "\""); }

}  // namespace

absl::Status NoLabelError(const std::string& tenant, const std::string& key,
                          const std::string& value) {
  return absl::NotFoundError(absl::StrCat("no label ", absl::CHexEscape(key), "=",
                                          absl::CHexEscape(value), " for tenant ", Quote(tenant)));
}

absl::Status ValidateLabelKey(absl::string_view key) {
  if (!key.empty() && key.size() <= kMaxLabelKeyLength && IsLower(key[0]) && AllLabelChars(key)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("labels: key ", Quote(key), " must match [a-z][a-z0-9_-]{0,62}"));
}

absl::Status ValidateLabelValue(absl::string_view key, absl::string_view value) {
  if (value.size() <= kMaxLabelValueLength && AllLabelChars(value)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "labels: value of ", Quote(key), " must match [a-z0-9_-]{0,63}, got ", Quote(value)));
}

absl::Status ValidateLabels(const Labels& labels) {
  if (labels.size() > kMaxLabels) {
    return absl::InvalidArgumentError(
        absl::StrCat("labels: at most ", kMaxLabels, " per link, got ", labels.size()));
  }
  for (const auto& [key, value] : labels) {
    absl::Status st = ValidateLabelKey(key);
    if (st.ok()) st = ValidateLabelValue(key, value);
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace shortener::store
