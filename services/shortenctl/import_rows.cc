#include "services/shortenctl/import_rows.h"

#include <map>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/common/sha256.h"
#include "lib/common/status_macros.h"

namespace shortener::ctl {
namespace {

constexpr size_t kIdentityBytes = 64 * 1024;

std::string HexDigest(absl::string_view data, size_t digits) {
  const Sha256Bytes digest = Sha256(data);
  return absl::BytesToHexString(
             absl::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()))
      .substr(0, digits);
}

}  // namespace

absl::StatusOr<CodePolicy> ParseCodePolicy(absl::string_view text) {
  if (text.empty() || text == "keep") return CodePolicy::kKeep;
  if (text == "keep_or_new") return CodePolicy::kKeepOrNew;
  if (text == "new") return CodePolicy::kNew;
  return absl::InvalidArgumentError(
      absl::StrCat("--codes: must be keep, keep_or_new or new, got \"", text, "\""));
}

std::string RowRequestId(const v1::ShortenRequest& request, absl::string_view code) {
  const std::map<std::string, std::string> labels(request.labels().begin(), request.labels().end());
  std::string canonical = absl::StrCat(request.long_url(), "\n", code, "\n");
  for (const auto& [key, value] : labels) absl::StrAppend(&canonical, key, "=", value, ",");
  absl::StrAppend(&canonical, "\n", request.has_expire_time(), ":", request.expire_time().seconds(),
                  ".", request.expire_time().nanos(), "\n", request.redirect_type(), "\n",
                  request.max_clicks(), "\n", request.force_new());
  return absl::StrCat("import-", HexDigest(canonical, 32));
}

std::string InputId(std::istream& in) {
  std::string head(kIdentityBytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  in.clear();
  in.seekg(0);
  return HexDigest(head, 24);
}

bool IsCodeRefusal(const v1::BatchShortenResult& result) {
  if (result.has_response()) return false;
  const auto code = static_cast<absl::StatusCode>(result.error().code());
  return (code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kAlreadyExists) &&
         absl::StartsWith(result.error().message(), "custom_alias");
}

StateValues ImportCounts::Values() const {
  return {{"rows", absl::StrCat(rows)},
          {"created", absl::StrCat(created)},
          {"existing", absl::StrCat(existing)},
          {"rejected", absl::StrCat(rejected)},
          {"skipped", absl::StrCat(skipped)},
          {"new_codes", absl::StrCat(new_codes)},
          {"code_refused", absl::StrCat(code_refused)}};
}

absl::Status ImportCounts::Read(const StateValues& values) {
  for (auto [key, field] :
       {std::pair{"rows", &rows}, std::pair{"created", &created}, std::pair{"existing", &existing},
        std::pair{"rejected", &rejected}, std::pair{"skipped", &skipped},
        std::pair{"new_codes", &new_codes}, std::pair{"code_refused", &code_refused}}) {
    SHORTENER_ASSIGN_OR_RETURN(*field, StateNumber(values, key));
  }
  return absl::OkStatus();
}

}  // namespace shortener::ctl
