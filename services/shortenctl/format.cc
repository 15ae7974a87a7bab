#include "services/shortenctl/format.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "lib/grpcutil/status.h"
#include "proto/redirect_type.h"

namespace shortener::ctl {
namespace {

// One "  label    value" row; labels are at most 8 characters (long_url).
void AddRow(std::string* out, absl::string_view label, absl::string_view value) {
  absl::StrAppendFormat(out, "  %-8s %s\n", label, value);
}

std::string ExpiryOrNever(bool has_expire, const google::protobuf::Timestamp& ts) {
  return has_expire ? FormatTimestamp(ts) : "never";
}

// "record_clicks,resolve"; "-" for none (the service never stores that).
std::string ListOrDash(const google::protobuf::RepeatedPtrField<std::string>& items) {
  return items.empty() ? "-" : absl::StrJoin(items, ",");
}

// An empty domain list lets a key shorten to every domain.
std::string DomainsName(const v1::ApiKey& key) {
  return key.allowed_domains().empty() ? "any" : absl::StrJoin(key.allowed_domains(), ",");
}

// "unlimited" for rate 0, else "10/s burst 20".
std::string RateName(const v1::ApiKey& key) {
  if (key.rate_per_second() <= 0) return "unlimited";
  return absl::StrCat(key.rate_per_second(), "/s burst ", key.burst());
}

std::string TimeOrDash(bool has, const google::protobuf::Timestamp& ts) {
  return has ? FormatTimestamp(ts) : "-";
}

// An infrastructure key has no tenant: say so rather than print nothing.
std::string TenantName(const v1::ApiKey& key) {
  return key.infrastructure() ? "(infrastructure)" : key.tenant();
}

std::string KeyTitle(const v1::ApiKey& key) {
  return absl::StrCat("api key ", key.id(), " \"", key.name(), "\"");
}

// Rows of cells as columns two spaces apart, each as wide as its widest
// cell; no padding after the last column.
std::string FormatTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i + 1 == row.size()) {
        absl::StrAppend(&out, row[i], "\n");
      } else {
        absl::StrAppend(&out, row[i], std::string(widths[i] - row[i].size() + 2, ' '));
      }
    }
  }
  return out;
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
  // A type this build does not know shows as the default, FOUND.
  return absl::StrCat(RedirectStatusOf(type).value_or(302));
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

namespace {

// "labels  campaign=spring-sale,channel=sms" (in key order); no row for none.
void AddLabelsRow(std::string* out, const v1::Link& link) {
  if (link.labels().empty()) return;
  const std::map<std::string, std::string> labels(link.labels().begin(), link.labels().end());
  AddRow(out, "labels", absl::StrJoin(labels, ",", absl::PairFormatter("=")));
}

}  // namespace

std::string FormatShortenResponse(const v1::ShortenResponse& response, bool json) {
  if (json) return ToJsonLine(response);
  const v1::Link& link = response.link();
  std::string out = absl::StrCat(response.short_url(), "\n");
  AddRow(&out, "code", response.code());
  AddRow(&out, "long_url", link.long_url());
  AddRow(&out, "created", response.created() ? "yes" : "no");
  AddRow(&out, "expires", ExpiryOrNever(link.has_expire_time(), link.expire_time()));
  if (link.max_clicks() > 0) AddRow(&out, "budget", absl::StrCat(link.max_clicks(), " clicks"));
  AddLabelsRow(&out, link);
  for (const v1::LinkChange& change : link.history()) {
    for (const v1::FieldChange& field : change.fields()) {
      auto value = [](const std::string& v) { return v.empty() ? std::string("(none)") : v; };
      absl::StrAppend(&out, "  changed ", FormatTimestamp(change.change_time()), " by ",
                      change.actor(), ": ", field.field(), " ", value(field.old_value()), " -> ",
                      value(field.new_value()), "\n");
    }
  }
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

std::string FormatQrWritten(const std::string& file, const v1::QrCode& qr, bool json) {
  if (json) {
    // The response without the image, and where it went.
    google::protobuf::Struct described;
    auto& fields = *described.mutable_fields();
    fields["short_url"].set_string_value(qr.short_url());
    fields["content_type"].set_string_value(qr.content_type());
    fields["bytes"].set_number_value(static_cast<double>(qr.content().size()));
    fields["file"].set_string_value(file);
    return ToJsonLine(described);
  }
  return absl::StrCat("wrote ", file == "-" ? "stdout" : file, ": ", qr.content_type(), ", ",
                      qr.content().size(), " bytes, encoding ", qr.short_url(), "\n");
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
  if (link.max_clicks() > 0) AddRow(&out, "budget", absl::StrCat(link.max_clicks(), " clicks"));
  AddLabelsRow(&out, link);
  for (const v1::LinkChange& change : link.history()) {
    for (const v1::FieldChange& field : change.fields()) {
      auto value = [](const std::string& v) { return v.empty() ? std::string("(none)") : v; };
      absl::StrAppend(&out, "  changed ", FormatTimestamp(change.change_time()), " by ",
                      change.actor(), ": ", field.field(), " ", value(field.old_value()), " -> ",
                      value(field.new_value()), "\n");
    }
  }
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

std::string FormatCreatedApiKey(const v1::CreateApiKeyResponse& response, bool json) {
  if (json) return ToJsonLine(response);
  return absl::StrCat(response.key(), "\n");
}

std::string DescribeCreatedApiKey(const v1::ApiKey& key) {
  return absl::StrCat(
      KeyTitle(key), " created: ",
      key.infrastructure() ? "infrastructure, no tenant" : absl::StrCat("tenant ", key.tenant()),
      ", scopes ", ListOrDash(key.scopes()), ", domains ", DomainsName(key), ", rate ",
      RateName(key), "; store the key now: it is not shown again\n");
}

std::string FormatLinkPage(const v1::ListLinksResponse& page, bool header, bool json) {
  std::string out;
  if (json) {
    for (const v1::Link& link : page.links()) out += ToJsonLine(link);
    return out;
  }
  // A code is 7 characters or an alias of up to 64: longer ones push their
  // row's other columns right rather than being cut.
  const auto row = [&out](const auto&... columns) {
    absl::StrAppend(&out, absl::StrFormat("%-10s %-8s %8s  %-20s  %s\n", columns...));
  };
  if (header) row("CODE", "STATE", "CLICKS", "CREATED", "LONG_URL");
  for (const v1::Link& link : page.links()) {
    row(link.code(), StateName(link.state()), absl::StrCat(link.click_count()),
        FormatTimestamp(link.create_time()), link.long_url());
  }
  return out;
}

std::string FormatApiKeyList(const v1::ListApiKeysResponse& response, bool json) {
  std::string out;
  if (json) {
    for (const v1::ApiKey& key : response.api_keys()) out += ToJsonLine(key);
    return out;
  }
  std::vector<std::vector<std::string>> rows = {
      {"ID", "NAME", "TENANT", "SCOPES", "DOMAINS", "RATE", "CREATED", "REVOKED"}};
  for (const v1::ApiKey& key : response.api_keys()) {
    rows.push_back({absl::StrCat(key.id()), key.name(), TenantName(key), ListOrDash(key.scopes()),
                    DomainsName(key), RateName(key),
                    TimeOrDash(key.has_create_time(), key.create_time()),
                    TimeOrDash(key.has_revoke_time(), key.revoke_time())});
  }
  return FormatTable(rows);
}

std::string FormatApiKey(const v1::ApiKey& key, bool json) {
  if (json) return ToJsonLine(key);
  std::string out = absl::StrCat(KeyTitle(key), "\n");
  AddRow(&out, "tenant", TenantName(key));
  AddRow(&out, "scopes", ListOrDash(key.scopes()));
  AddRow(&out, "domains", DomainsName(key));
  AddRow(&out, "rate", RateName(key));
  AddRow(&out, "created", TimeOrDash(key.has_create_time(), key.create_time()));
  AddRow(&out, "revoked", TimeOrDash(key.has_revoke_time(), key.revoke_time()));
  return out;
}

std::string FormatClickStats(absl::string_view code, const v1::GetClickStatsRequest& request,
                             const v1::GetClickStatsResponse& response, bool json) {
  if (json) return ToJsonLine(response);
  const bool hourly = request.granularity() == v1::GRANULARITY_HOUR;
  const char* bucket_format = hourly ? "%Y-%m-%d %H:%M" : "%Y-%m-%d";
  std::string out;
  if (response.buckets().empty()) {
    absl::StrAppend(&out, code, ": no buckets in the range\n");
  } else {
    const auto& first = response.buckets(0).start_time();
    const auto& last = response.buckets(response.buckets_size() - 1).start_time();
    absl::StrAppend(
        &out, code, ": clicks per ", hourly ? "hour" : "day", " (UTC), ",
        absl::FormatTime(bucket_format, grpcutil::FromProtoTimestamp(first), absl::UTCTimeZone()),
        " to ",
        absl::FormatTime(bucket_format, grpcutil::FromProtoTimestamp(last), absl::UTCTimeZone()),
        "\n");
  }
  std::vector<std::vector<std::string>> rows = {{"START", "HUMAN", "BOTS", "UNIQUE"}};
  for (const v1::ClickBucket& bucket : response.buckets()) {
    rows.push_back(
        {absl::FormatTime(bucket_format, grpcutil::FromProtoTimestamp(bucket.start_time()),
                          absl::UTCTimeZone()),
         absl::StrCat(bucket.human_clicks()), absl::StrCat(bucket.bot_clicks()),
         absl::StrCat(bucket.unique_visitors())});
  }
  rows.push_back({"total", absl::StrCat(response.total_human_clicks()),
                  absl::StrCat(response.total_bot_clicks()),
                  absl::StrCat(response.total_unique_visitors())});
  absl::StrAppend(&out, FormatTable(rows));
  const std::pair<const char*, const google::protobuf::RepeatedPtrField<v1::CountedValue>*> tops[] =
      {{"browsers", &response.top_browsers()}, {"os", &response.top_os()},
       {"devices", &response.top_devices()},   {"countries", &response.top_countries()},
       {"regions", &response.top_regions()},   {"cities", &response.top_cities()},
       {"networks", &response.top_networks()}, {"referrers", &response.top_referrers()}};
  for (const auto& [title, values] : tops) {
    if (values->empty()) continue;
    std::vector<std::string> items;
    for (const v1::CountedValue& value : *values) {
      items.push_back(absl::StrCat(value.value(), " ", value.clicks()));
    }
    absl::StrAppendFormat(&out, "top %-9s %s\n", title, absl::StrJoin(items, ", "));
  }
  return out;
}

}  // namespace shortener::ctl
