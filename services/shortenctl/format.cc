#include "services/shortenctl/format.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "google/protobuf/util/json_util.h"
#include "lib/grpcutil/status.h"

namespace shortener::ctl {
namespace {

// One "  label    value" row; labels are at most 8 characters (long_url).
void AddRow(std::string* out, absl::string_view label, absl::string_view value) {
  absl::StrAppendFormat(out, "  %-8s %s\n", label, value);
}

std::string ExpiryOrNever(bool has_expire, const google::protobuf::Timestamp& ts) {
  return has_expire ? FormatTimestamp(ts) : "never";
}

}  // namespace

std::string ToJsonLine(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(message, &json, options).ok()) {
    // Only invalid UTF-8 in a string field gets here; say so in JSON.
    return "{\"error\":\"response is not representable as JSON\"}\n";
  }
  return json + "\n";
}

std::string FormatTimestamp(const google::protobuf::Timestamp& ts) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", grpcutil::FromProtoTimestamp(ts),
                          absl::UTCTimeZone());
}

std::string RedirectName(v1::RedirectType type) {
  switch (type) {
    case v1::REDIRECT_TYPE_MOVED_PERMANENTLY:
      return "301";
    case v1::REDIRECT_TYPE_TEMPORARY:
      return "307";
    case v1::REDIRECT_TYPE_PERMANENT:
      return "308";
    default:  // FOUND, and unset, which means FOUND
      return "302";
  }
}

std::string StateName(v1::LinkState state) {
  switch (state) {
    case v1::LINK_STATE_ACTIVE:
      return "ACTIVE";
    case v1::LINK_STATE_REVOKED:
      return "REVOKED";
    case v1::LINK_STATE_EXPIRED:
      return "EXPIRED";
    default:
      return "UNSPECIFIED";
  }
}

std::string FormatShortenResponse(const v1::ShortenResponse& response, bool json) {
  if (json) return ToJsonLine(response);
  const v1::Link& link = response.link();
  std::string out = absl::StrCat(response.short_url(), "\n");
  AddRow(&out, "code", response.code());
  AddRow(&out, "long_url", link.long_url());
  AddRow(&out, "created", response.created() ? "yes" : "no");
  AddRow(&out, "expires", ExpiryOrNever(link.has_expire_time(), link.expire_time()));
  return out;
}

std::string FormatResolveResponse(absl::string_view code, const v1::ResolveResponse& response,
                                  bool json) {
  if (json) return ToJsonLine(response);
  std::string out = absl::StrCat(code, "\n");
  AddRow(&out, "state", StateName(response.state()));
  if (!response.long_url().empty()) AddRow(&out, "long_url", response.long_url());
  AddRow(&out, "redirect", RedirectName(response.redirect_type()));
  AddRow(&out, "expires", ExpiryOrNever(response.has_expire_time(), response.expire_time()));
  return out;
}

std::string FormatLink(const v1::Link& link, bool json) {
  if (json) return ToJsonLine(link);
  std::string out = absl::StrCat(link.short_url(), "\n");
  AddRow(&out, "code", link.code());
  AddRow(&out, "long_url", link.long_url());
  AddRow(&out, "state", StateName(link.state()));
  AddRow(&out, "redirect", RedirectName(link.redirect_type()));
  AddRow(&out, "created", link.has_create_time() ? FormatTimestamp(link.create_time()) : "-");
  AddRow(&out, "expires", ExpiryOrNever(link.has_expire_time(), link.expire_time()));
  if (link.has_revoke_time()) AddRow(&out, "revoked", FormatTimestamp(link.revoke_time()));
  AddRow(&out, "owner", link.owner());
  AddRow(&out, "clicks", absl::StrCat(link.click_count()));
  return out;
}

std::string FormatBatchResult(absl::string_view long_url, const v1::BatchShortenResult& result,
                              bool json) {
  if (json) return ToJsonLine(result);
  if (result.has_response()) {
    return absl::StrCat(result.response().short_url(), "\t", long_url, "\n");
  }
  const auto code = result.has_error() ? static_cast<absl::StatusCode>(result.error().code())
                                       : absl::StatusCode::kUnknown;
  const absl::string_view message = result.has_error() ? absl::string_view(result.error().message())
                                                       : "the service returned an empty result";
  return absl::StrCat("error: ", absl::StatusCodeToString(code), ": ", message, "\t", long_url,
                      "\n");
}

}  // namespace shortener::ctl
