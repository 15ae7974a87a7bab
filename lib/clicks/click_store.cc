#include "lib/clicks/click_store.h"

#include "absl/strings/str_cat.h"

namespace shortener::clicks {
namespace {

bool HasNul(const std::string& text) { return text.find('\0') != std::string::npos; }

}  // namespace

absl::Status ValidateClickBatch(const std::string& batch_id, absl::Span<const ClickRow> rows) {
  if (batch_id.empty() || batch_id.size() > kMaxBatchIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_id: must be 1 to ", kMaxBatchIdBytes, " bytes, got ", batch_id.size()));
  }
  if (HasNul(batch_id)) return absl::InvalidArgumentError("batch_id: contains a NUL byte");
  for (size_t i = 0; i < rows.size(); ++i) {
    const ClickRow& r = rows[i];
    if (r.device != "desktop" && r.device != "mobile" && r.device != "tablet" &&
        r.device != "bot") {
      return absl::InvalidArgumentError(
          absl::StrCat("rows[", i, "].device: must be desktop, mobile, tablet or bot"));
    }
    // An address in CanonicalIp's form (AnonymizeIp's output is one), or
    // none: PgClickStore writes it in inet's binary form.
    if (!r.ip.empty() && CanonicalIp(r.ip) != r.ip) {
      return absl::InvalidArgumentError(
          absl::StrCat("rows[", i, "].ip: not an IP address in canonical form"));
    }
    // PostgreSQL refuses a NUL byte in text (and PgClickStore passes some
    // as libpq parameters, which are C strings). Every store refuses it
    // alike.
    for (const std::string* text : {&r.client_id, &r.ip, &r.browser, &r.os, &r.os_version,
                                    &r.referrer_host, &r.country, &r.region, &r.city, &r.network}) {
      if (HasNul(*text)) {
        return absl::InvalidArgumentError(absl::StrCat("rows[", i, "]: a NUL byte in a field"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace shortener::clicks
