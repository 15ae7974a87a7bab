#include "services/shorten/proto_mapping.h"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/common/status_macros.h"
#include "lib/common/utf8.h"
#include "lib/grpcutil/status.h"
#include "proto/redirect_type.h"
#include "services/shorten/client_status.h"

namespace shortener::service {

using grpcutil::FromProtoTimestamp;
using grpcutil::ToProtoTimestamp;

namespace {

// `field` as a time; INVALID_ARGUMENT naming it when out of
// google.protobuf.Timestamp's valid range (0001-01-01 to 9999-12-31).
absl::StatusOr<absl::Time> CheckedTime(const google::protobuf::Timestamp& ts,
                                       absl::string_view field) {
  if (ts.seconds() < -62135596800 || ts.seconds() > 253402300799 || ts.nanos() < 0 ||
      ts.nanos() > 999999999) {
    return absl::InvalidArgumentError(absl::StrCat(
        field,
        ": out of range (0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z, nanos 0 to 999999999)"));
  }
  return FromProtoTimestamp(ts);
}

// A batch item's error as the client may see it.
void SetItemError(const absl::Status& status, v1::ItemError* error) {
  const grpc::Status item = ClientStatus(status);
  error->set_code(static_cast<int>(item.error_code()));
  error->set_message(item.error_message());
}

void ToProto(const std::vector<clicks::CountedValue>& values,
             google::protobuf::RepeatedPtrField<v1::CountedValue>* out) {
  for (const clicks::CountedValue& value : values) {
    v1::CountedValue* entry = out->Add();
    entry->set_value(value.value);
    entry->set_clicks(value.clicks);
  }
}

}  // namespace

absl::StatusOr<ShortenInput> FromProto(const v1::ShortenRequest& request) {
  ShortenInput in;
  in.long_url = request.long_url();
  in.custom_alias = request.custom_alias();
  in.max_clicks = request.max_clicks();
  in.labels.insert(request.labels().begin(), request.labels().end());
  if (request.has_expire_time()) {
    SHORTENER_ASSIGN_OR_RETURN(in.expire_time, CheckedTime(request.expire_time(), "expire_time"));
  }
  const std::optional<int> redirect_status = RedirectStatusOf(request.redirect_type());
  if (!redirect_status.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("redirect_type: unknown value ", request.redirect_type()));
  }
  in.redirect_status = *redirect_status;
  in.force_new = request.force_new();
  in.request_id = request.request_id();
  return in;
}

std::vector<absl::StatusOr<ShortenInput>> FromProto(
    const v1::BatchShortenRequest& request, const std::shared_ptr<const auth::Principal>& caller) {
  std::vector<absl::StatusOr<ShortenInput>> items;
  items.reserve(request.requests_size());
  for (const v1::ShortenRequest& item : request.requests()) {
    items.push_back(FromProto(item));
    if (items.back().ok()) items.back()->caller = caller;
  }
  return items;
}

void ToProto(std::vector<absl::StatusOr<ShortenOutput>>&& results, v1::BatchShortenResponse* out) {
  out->mutable_results()->Reserve(static_cast<int>(results.size()));
  for (absl::StatusOr<ShortenOutput>& result : results) {
    v1::BatchShortenResult* entry = out->add_results();
    if (result.ok()) {
      ToProto(*std::move(result), entry->mutable_response());
    } else {
      SetItemError(result.status(), entry->mutable_error());
    }
  }
}

std::vector<std::string> FromProto(const v1::BatchResolveRequest& request) {
  return std::vector<std::string>(request.codes().begin(), request.codes().end());
}

void ToProto(const std::vector<absl::StatusOr<LinkView>>& views, v1::BatchResolveResponse* out) {
  out->mutable_results()->Reserve(static_cast<int>(views.size()));
  for (const absl::StatusOr<LinkView>& view : views) {
    v1::BatchResolveResult* entry = out->add_results();
    if (view.ok()) {
      ToProto(*view, entry->mutable_response());
    } else {
      SetItemError(view.status(), entry->mutable_error());
    }
  }
}

v1::LinkState ToProto(LinkState state) {
  switch (state) {
    case LinkState::kActive:
      return v1::LINK_STATE_ACTIVE;
    case LinkState::kRevoked:
      return v1::LINK_STATE_REVOKED;
    case LinkState::kExpired:
      return v1::LINK_STATE_EXPIRED;
  }
  return v1::LINK_STATE_UNSPECIFIED;
}

namespace {

// Every field of a v1::Link but its strings (code, short_url, long_url,
// owner), which the two ToProto forms copy or move.
void SetLinkScalars(const LinkView& view, v1::Link* out) {
  out->set_state(ToProto(view.state));
  out->set_redirect_type(RedirectTypeOf(view.link.redirect_status));
  *out->mutable_create_time() = ToProtoTimestamp(view.link.create_time);
  out->mutable_labels()->insert(view.link.labels.begin(), view.link.labels.end());
  if (view.link.expire_time) *out->mutable_expire_time() = ToProtoTimestamp(*view.link.expire_time);
  if (view.link.revoke_time) *out->mutable_revoke_time() = ToProtoTimestamp(*view.link.revoke_time);
  out->set_click_count(0);
  out->set_max_clicks(view.link.max_clicks.value_or(0));
}

}  // namespace

void ToProto(const LinkView& view, v1::Link* out) {
  out->set_code(view.code);
  out->set_short_url(view.short_url);
  out->set_long_url(view.link.long_url);
  out->set_owner(view.link.owner);
  SetLinkScalars(view, out);
}

void ToProto(const LinkWithClicks& link, v1::Link* out) {
  ToProto(link.view, out);
  out->set_click_count(link.human_clicks);
  for (const store::LinkChange& change : link.history) {
    v1::LinkChange* entry = out->add_history();
    *entry->mutable_change_time() = grpcutil::ToProtoTimestamp(change.time);
    entry->set_actor(change.actor);
    for (const store::FieldChange& field : change.fields) {
      v1::FieldChange* f = entry->add_fields();
      f->set_field(field.field);
      f->set_old_value(field.old_value);
      f->set_new_value(field.new_value);
    }
  }
}

absl::StatusOr<LinkEdit> FromProto(const v1::UpdateLinkRequest& request) {
  static constexpr const char* kUpdatable[] = {"long_url", "expire_time", "redirect_type",
                                               "max_clicks", "labels"};
  const v1::Link& link = request.link();
  LinkEdit edit;
  edit.code = link.code();
  if (edit.code.empty()) return absl::InvalidArgumentError("link.code: is required");
  std::vector<std::string> paths;
  if (request.has_update_mask() && request.update_mask().paths_size() > 0) {
    for (const std::string& path : request.update_mask().paths()) {
      if (path == "*") {
        paths.assign(std::begin(kUpdatable), std::end(kUpdatable));
        break;
      }
      if (std::find(std::begin(kUpdatable), std::end(kUpdatable), path) == std::end(kUpdatable)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "update_mask: \"", absl::CHexEscape(path),
            "\" is not a field UpdateLink changes (long_url, expire_time, redirect_type, "
            "max_clicks, labels)"));
      }
      if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
    }
  } else {
    // AIP-134: no mask means the fields that are set.
    if (!link.long_url().empty()) paths.push_back("long_url");
    if (link.has_expire_time()) paths.push_back("expire_time");
    if (link.redirect_type() != v1::REDIRECT_TYPE_UNSPECIFIED) paths.push_back("redirect_type");
    if (link.max_clicks() != 0) paths.push_back("max_clicks");
    if (!link.labels().empty()) paths.push_back("labels");
  }
  if (paths.empty()) {
    return absl::InvalidArgumentError(
        "update_mask: nothing to change (name long_url, expire_time, redirect_type, max_clicks "
        "or labels)");
  }
  for (const std::string& path : paths) {
    if (path == "long_url") {
      edit.long_url = link.long_url();
    } else if (path == "expire_time") {
      edit.expire_time = std::optional<absl::Time>();
      if (link.has_expire_time()) {
        SHORTENER_ASSIGN_OR_RETURN(*edit.expire_time,
                                   CheckedTime(link.expire_time(), "link.expire_time"));
      }
    } else if (path == "redirect_type") {
      const std::optional<int> status = RedirectStatusOf(link.redirect_type());
      if (!status.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("link.redirect_type: unknown value ", link.redirect_type()));
      }
      edit.redirect_status = *status;
    } else if (path == "max_clicks") {
      edit.max_clicks = link.max_clicks();
    } else {
      edit.labels = store::Labels(link.labels().begin(), link.labels().end());
    }
  }
  return edit;
}

bool WantsHistory(const v1::GetLinkRequest& request) {
  return request.view() == v1::LINK_VIEW_FULL;
}

ListLinksQuery FromProto(const v1::ListLinksRequest& request) {
  ListLinksQuery query;
  query.tenant = request.tenant();
  query.page_size = request.page_size();
  query.page_token = request.page_token();
  query.filter = request.filter();
  query.order_by = request.order_by();
  return query;
}

namespace {

template <typename Request>
BulkLinksQuery BulkQueryOf(const Request& request) {
  BulkLinksQuery query;
  query.tenant = request.tenant();
  query.filter = request.filter();
  query.page_size = request.page_size();
  query.page_token = request.page_token();
  return query;
}

template <typename Response>
void BulkResultTo(const BulkLinksResult& result, Response* out) {
  out->mutable_codes()->Reserve(static_cast<int>(result.codes.size()));
  for (const std::string& code : result.codes) out->add_codes(code);
  out->set_next_page_token(result.next_page_token);
}

}  // namespace

BulkLinksQuery FromProto(const v1::RevokeLinksRequest& request) { return BulkQueryOf(request); }
BulkLinksQuery FromProto(const v1::DeleteLinksRequest& request) { return BulkQueryOf(request); }
void ToProto(const BulkLinksResult& result, v1::RevokeLinksResponse* out) {
  BulkResultTo(result, out);
}
void ToProto(const BulkLinksResult& result, v1::DeleteLinksResponse* out) {
  BulkResultTo(result, out);
}

void ToProto(const LinkListPage& page, v1::ListLinksResponse* out) {
  out->mutable_links()->Reserve(static_cast<int>(page.links.size()));
  for (const LinkWithClicks& link : page.links) ToProto(link, out->add_links());
  out->set_next_page_token(page.next_page_token);
}

void ToProto(const ShortenOutput& output, v1::ShortenResponse* out) {
  out->set_code(output.link.code);
  out->set_short_url(output.link.short_url);
  out->set_created(output.created);
  ToProto(output.link, out->mutable_link());
}

void ToProto(ShortenOutput&& output, v1::ShortenResponse* out) {
  out->set_code(output.link.code);
  out->set_short_url(output.link.short_url);
  out->set_created(output.created);
  v1::Link* link = out->mutable_link();
  SetLinkScalars(output.link, link);
  link->set_code(std::move(output.link.code));
  link->set_short_url(std::move(output.link.short_url));
  link->set_long_url(std::move(output.link.link.long_url));
  link->set_owner(std::move(output.link.link.owner));
}

void ToProto(const LinkView& view, v1::ResolveResponse* out) {
  out->set_state(ToProto(view.state));
  out->set_redirect_type(RedirectTypeOf(view.link.redirect_status));
  // Only an active link reveals its target: a revoked link may have been
  // revoked precisely because of where it points.
  if (view.state == LinkState::kActive) out->set_long_url(view.link.long_url);
  if (view.link.expire_time) *out->mutable_expire_time() = ToProtoTimestamp(*view.link.expire_time);
}

void ToProto(const auth::ApiKeyRecord& record, v1::ApiKey* out) {
  out->set_id(record.id);
  out->set_name(record.name);
  out->set_tenant(record.tenant);
  out->set_infrastructure(record.infrastructure);
  const std::string scopes = record.scopes.ToString();
  for (absl::string_view scope : absl::StrSplit(scopes, ',', absl::SkipEmpty())) {
    out->add_scopes(std::string(scope));
  }
  const std::string domains = record.allowed_domains.ToString();
  for (absl::string_view domain : absl::StrSplit(domains, ',', absl::SkipEmpty())) {
    out->add_allowed_domains(std::string(domain));
  }
  out->set_rate_per_second(record.rate_per_second.value_or(0));
  out->set_burst(record.burst.value_or(0));
  *out->mutable_create_time() = grpcutil::ToProtoTimestamp(record.create_time);
  if (record.revoke_time.has_value()) {
    *out->mutable_revoke_time() = grpcutil::ToProtoTimestamp(*record.revoke_time);
  }
}

ApiKeySpec FromProto(const v1::CreateApiKeyRequest& request) {
  ApiKeySpec spec;
  spec.name = request.name();
  spec.tenant = request.tenant();
  spec.infrastructure = request.infrastructure();
  spec.scopes.assign(request.scopes().begin(), request.scopes().end());
  spec.allowed_domains.assign(request.allowed_domains().begin(), request.allowed_domains().end());
  spec.rate_per_second = request.rate_per_second();
  spec.burst = request.burst();
  return spec;
}

void ToProto(const CreatedApiKey& created, v1::CreateApiKeyResponse* out) {
  out->set_key(created.key);
  ToProto(created.record, out->mutable_api_key());
}

void ToProto(const std::vector<auth::ApiKeyRecord>& keys, v1::ListApiKeysResponse* out) {
  for (const auth::ApiKeyRecord& key : keys) ToProto(key, out->add_api_keys());
}

RecordClicksInput FromProto(const v1::RecordClicksRequest& request) {
  RecordClicksInput input;
  input.batch_id = request.batch_id();
  input.events.reserve(static_cast<size_t>(request.events_size()));
  for (const v1::ClickEvent& event : request.events()) {
    ClickInput click;
    click.code = event.code();
    if (event.has_time()) click.time = CheckedTime(event.time(), "time");
    click.client_ip = event.client_ip();
    click.user_agent = event.user_agent();
    click.referer = event.referer();
    click.http_status = event.http_status();
    input.events.push_back(std::move(click));
  }
  return input;
}

void ToProto(const RecordClicksOutput& output, v1::RecordClicksResponse* out) {
  // A reason is a proto3 string: should one ever hold invalid UTF-8, the
  // edge could not parse the answer at all. Bounded too, so that 10000
  // refusals stay a small answer.
  constexpr size_t kMaxReasonBytes = 200;
  out->set_accepted(output.accepted);
  out->mutable_refused()->Reserve(static_cast<int>(output.refused.size()));
  for (const RefusedClick& refused : output.refused) {
    v1::RefusedClickEvent* entry = out->add_refused();
    entry->set_index(refused.index);
    entry->set_reason(utf8::Sanitize(refused.reason, kMaxReasonBytes));
  }
}

absl::StatusOr<ClickStatsQuery> FromProto(const v1::GetClickStatsRequest& request) {
  if (request.code().empty() == request.filter().empty()) {
    return absl::InvalidArgumentError(
        "code, filter: give exactly one (a code for one link, a filter for a label's links)");
  }
  if (!request.tenant().empty() && request.filter().empty()) {
    return absl::InvalidArgumentError("tenant: only with filter (a code names its own link)");
  }
  ClickStatsQuery query;
  query.tenant = request.tenant();
  if (request.has_start_time()) {
    SHORTENER_ASSIGN_OR_RETURN(query.start, CheckedTime(request.start_time(), "start_time"));
  }
  if (request.has_end_time()) {
    SHORTENER_ASSIGN_OR_RETURN(query.end, CheckedTime(request.end_time(), "end_time"));
  }
  switch (request.granularity()) {
    case v1::GRANULARITY_UNSPECIFIED:
      break;
    case v1::GRANULARITY_HOUR:
      query.granularity = clicks::StatsGranularity::kHour;
      break;
    case v1::GRANULARITY_DAY:
      query.granularity = clicks::StatsGranularity::kDay;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("granularity: unknown value ",
                                                     static_cast<int>(request.granularity()),
                                                     " (GRANULARITY_HOUR or GRANULARITY_DAY)"));
  }
  return query;
}

absl::StatusOr<QrQuery> FromProto(const v1::GetQrCodeRequest& request) {
  QrQuery query;
  query.code = request.code();
  switch (request.format()) {
    case v1::GetQrCodeRequest::FORMAT_UNSPECIFIED:
    case v1::GetQrCodeRequest::FORMAT_PNG:
      query.options.format = qr::ImageFormat::kPng;
      break;
    case v1::GetQrCodeRequest::FORMAT_SVG:
      query.options.format = qr::ImageFormat::kSvg;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("format: unknown value ",
                                                     static_cast<int>(request.format()),
                                                     " (FORMAT_PNG or FORMAT_SVG)"));
  }
  if (request.size_px() != 0) query.options.size_px = request.size_px();
  if (request.has_margin_modules()) query.options.margin_modules = request.margin_modules();
  switch (request.error_correction()) {
    case v1::GetQrCodeRequest::ERROR_CORRECTION_UNSPECIFIED:
    case v1::GetQrCodeRequest::ERROR_CORRECTION_MEDIUM:
      query.options.level = qr::ErrorCorrection::kMedium;
      break;
    case v1::GetQrCodeRequest::ERROR_CORRECTION_LOW:
      query.options.level = qr::ErrorCorrection::kLow;
      break;
    case v1::GetQrCodeRequest::ERROR_CORRECTION_QUARTILE:
      query.options.level = qr::ErrorCorrection::kQuartile;
      break;
    case v1::GetQrCodeRequest::ERROR_CORRECTION_HIGH:
      query.options.level = qr::ErrorCorrection::kHigh;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "error_correction: unknown value ", static_cast<int>(request.error_correction()),
          " (ERROR_CORRECTION_LOW, _MEDIUM, _QUARTILE or _HIGH)"));
  }
  // Refused before the link is looked up or a pool slot taken.
  if (absl::Status valid = qr::ValidateQrOptions(query.options); !valid.ok()) return valid;
  return query;
}

void ToProto(const LinkQrCode& qr, v1::QrCode* out) {
  out->set_content(qr.image.bytes);
  out->set_content_type(qr.image.content_type);
  out->set_short_url(qr.short_url);
}

void ToProto(const clicks::ClickStats& stats, v1::GetClickStatsResponse* out) {
  for (const clicks::StatsBucket& bucket : stats.buckets) {
    v1::ClickBucket* b = out->add_buckets();
    *b->mutable_start_time() = ToProtoTimestamp(bucket.start);
    b->set_human_clicks(bucket.human_clicks);
    b->set_bot_clicks(bucket.bot_clicks);
    b->set_unique_visitors(bucket.unique_visitors);
  }
  out->set_total_human_clicks(stats.total_human_clicks);
  out->set_total_bot_clicks(stats.total_bot_clicks);
  out->set_total_unique_visitors(stats.total_unique_visitors);
  ToProto(stats.top_browsers, out->mutable_top_browsers());
  ToProto(stats.top_os, out->mutable_top_os());
  ToProto(stats.top_devices, out->mutable_top_devices());
  ToProto(stats.top_countries, out->mutable_top_countries());
  ToProto(stats.top_referrers, out->mutable_top_referrers());
  ToProto(stats.top_regions, out->mutable_top_regions());
  ToProto(stats.top_cities, out->mutable_top_cities());
  ToProto(stats.top_networks, out->mutable_top_networks());
}

}  // namespace shortener::service
