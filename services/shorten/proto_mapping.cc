#include "services/shorten/proto_mapping.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/grpcutil/status.h"

namespace shortener::service {

using grpcutil::FromProtoTimestamp;
using grpcutil::ToProtoTimestamp;

absl::StatusOr<ShortenInput> FromProto(const v1::ShortenRequest& request) {
  ShortenInput in;
  in.long_url = request.long_url();
  in.custom_alias = request.custom_alias();
  if (request.has_expire_time()) {
    // google.protobuf.Timestamp's valid range: 0001-01-01 to 9999-12-31.
    const auto& ts = request.expire_time();
    if (ts.seconds() < -62135596800 || ts.seconds() > 253402300799 || ts.nanos() < 0 ||
        ts.nanos() > 999999999) {
      return absl::InvalidArgumentError(
          "expire_time: out of range (0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z, nanos 0 to "
          "999999999)");
    }
    in.expire_time = FromProtoTimestamp(ts);
  }
  switch (request.redirect_type()) {
    case v1::REDIRECT_TYPE_UNSPECIFIED:
    case v1::REDIRECT_TYPE_FOUND:
      in.redirect_status = 302;
      break;
    case v1::REDIRECT_TYPE_MOVED_PERMANENTLY:
      in.redirect_status = 301;
      break;
    case v1::REDIRECT_TYPE_TEMPORARY:
      in.redirect_status = 307;
      break;
    case v1::REDIRECT_TYPE_PERMANENT:
      in.redirect_status = 308;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("redirect_type: unknown value ", request.redirect_type()));
  }
  in.force_new = request.force_new();
  in.request_id = request.request_id();
  return in;
}

v1::RedirectType RedirectTypeFromStatus(int http_status) {
  switch (http_status) {
    case 301:
      return v1::REDIRECT_TYPE_MOVED_PERMANENTLY;
    case 307:
      return v1::REDIRECT_TYPE_TEMPORARY;
    case 308:
      return v1::REDIRECT_TYPE_PERMANENT;
    default:
      return v1::REDIRECT_TYPE_FOUND;
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

void ToProto(const LinkView& view, v1::Link* out) {
  out->set_code(view.code);
  out->set_short_url(view.short_url);
  out->set_long_url(view.link.long_url);
  out->set_state(ToProto(view.state));
  out->set_redirect_type(RedirectTypeFromStatus(view.link.redirect_status));
  *out->mutable_create_time() = ToProtoTimestamp(view.link.create_time);
  if (view.link.expire_time) *out->mutable_expire_time() = ToProtoTimestamp(*view.link.expire_time);
  if (view.link.revoke_time) *out->mutable_revoke_time() = ToProtoTimestamp(*view.link.revoke_time);
  out->set_owner(view.link.owner);
  out->set_click_count(0);
}

void ToProto(const ShortenOutput& output, v1::ShortenResponse* out) {
  out->set_code(output.link.code);
  out->set_short_url(output.link.short_url);
  out->set_created(output.created);
  ToProto(output.link, out->mutable_link());
}

void ToProto(const LinkView& view, v1::ResolveResponse* out) {
  out->set_state(ToProto(view.state));
  out->set_redirect_type(RedirectTypeFromStatus(view.link.redirect_status));
  // Only an active link reveals its target: a revoked link may have been
  // revoked precisely because of where it points.
  if (view.state == LinkState::kActive) out->set_long_url(view.link.long_url);
  if (view.link.expire_time) *out->mutable_expire_time() = ToProtoTimestamp(*view.link.expire_time);
}

void ToProto(const auth::ApiKeyRecord& record, v1::ApiKey* out) {
  out->set_id(record.id);
  out->set_name(record.name);
  out->set_tenant(record.tenant);
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
  spec.scopes.assign(request.scopes().begin(), request.scopes().end());
  spec.allowed_domains.assign(request.allowed_domains().begin(), request.allowed_domains().end());
  spec.rate_per_second = request.rate_per_second();
  spec.burst = request.burst();
  return spec;
}

RecordClicksInput FromProto(const v1::RecordClicksRequest& request) {
  RecordClicksInput input;
  input.batch_id = request.batch_id();
  input.events.reserve(static_cast<size_t>(request.events_size()));
  for (const v1::ClickEvent& event : request.events()) {
    ClickInput click;
    click.code = event.code();
    if (event.has_time()) click.time = grpcutil::FromProtoTimestamp(event.time());
    click.client_ip = event.client_ip();
    click.user_agent = event.user_agent();
    click.referer = event.referer();
    input.events.push_back(std::move(click));
  }
  return input;
}

}  // namespace shortener::service
