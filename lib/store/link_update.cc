#include "lib/store/link_update.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/common/redirect_status.h"
#include "lib/store/create_planner.h"

namespace shortener::store {
namespace {

std::string TimeText(const std::optional<absl::Time>& t) {
  return t.has_value() ? absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ", *t, absl::UTCTimeZone()) : "";
}

std::string LabelsText(const Labels& labels) {
  return absl::StrJoin(labels, ",", absl::PairFormatter("="));
}

absl::Status CheckStorable(const char* field, const std::string& text) {
  if (IsStorableText(text)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, ": must be UTF-8 text without NUL bytes"));
}

}  // namespace

absl::Status ValidateLinkUpdate(const LinkUpdate& update) {
  if (update.long_url.has_value() != update.long_url_sha256.has_value()) {
    return absl::InvalidArgumentError("long_url: the URL and its SHA-256 go together");
  }
  if (update.long_url_sha256.has_value() && update.long_url_sha256->size() != 32) {
    return absl::InvalidArgumentError(
        absl::StrCat("long_url_sha256: must be 32 bytes, got ", update.long_url_sha256->size()));
  }
  if (update.long_url.has_value()) {
    if (absl::Status st = CheckStorable("long_url", *update.long_url); !st.ok()) return st;
  }
  if (update.code.empty() || update.actor.empty()) {
    return absl::InvalidArgumentError("update link: the code and the actor are required");
  }
  if (absl::Status st = CheckStorable("code", update.code); !st.ok()) return st;
  if (absl::Status st = CheckStorable("actor", update.actor); !st.ok()) return st;
  if (update.redirect_status.has_value() && !IsRedirectStatus(*update.redirect_status)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "redirect_status: must be 301, 302, 307 or 308, got ", *update.redirect_status));
  }
  if (update.max_clicks.has_value() && update.max_clicks->has_value() && **update.max_clicks <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_clicks: must be positive, got ", **update.max_clicks));
  }
  if (update.labels.has_value()) return ValidateLabels(*update.labels);
  return absl::OkStatus();
}

Link ApplyUpdate(Link link, const LinkUpdate& update) {
  if (update.long_url.has_value()) link.long_url = *update.long_url;
  if (update.expire_time.has_value()) link.expire_time = *update.expire_time;
  if (update.redirect_status.has_value()) link.redirect_status = *update.redirect_status;
  if (update.max_clicks.has_value()) link.max_clicks = *update.max_clicks;
  if (update.labels.has_value()) link.labels = *update.labels;
  return link;
}

std::vector<FieldChange> DiffLink(const Link& before, const Link& after) {
  std::vector<FieldChange> changes;
  auto add = [&](const char* field, std::string old_value, std::string new_value) {
    if (old_value != new_value) {
      changes.push_back({field, std::move(old_value), std::move(new_value)});
    }
  };
  add("long_url", before.long_url, after.long_url);
  add("expire_time", TimeText(before.expire_time), TimeText(after.expire_time));
  add("redirect_type", absl::StrCat(before.redirect_status), absl::StrCat(after.redirect_status));
  add("max_clicks", before.max_clicks.has_value() ? absl::StrCat(*before.max_clicks) : "",
      after.max_clicks.has_value() ? absl::StrCat(*after.max_clicks) : "");
  add("labels", LabelsText(before.labels), LabelsText(after.labels));
  return changes;
}

std::optional<absl::Time> ExhaustedAfter(const Link& updated, int64_t human_clicks,
                                         absl::Time when) {
  if (!updated.max_clicks.has_value() || human_clicks < *updated.max_clicks) return std::nullopt;
  return updated.clicks_exhausted_time.has_value() ? updated.clicks_exhausted_time : when;
}

bool KeepsDedupe(bool held_key, const Link& updated) {
  return held_key && !updated.max_clicks.has_value();
}

}  // namespace shortener::store
