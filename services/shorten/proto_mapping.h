// Conversions between the domain types of Shortener and shortener.v1 protos.
// Pure functions; thread-safe.
#ifndef SHORTENER_SERVICES_SHORTEN_PROTO_MAPPING_H_
#define SHORTENER_SERVICES_SHORTEN_PROTO_MAPPING_H_

#include "absl/status/statusor.h"
#include "lib/auth/pg/pg_api_key_store.h"
#include "services/shorten/click_recorder.h"
#include "services/shorten/key_admin.h"
#include "services/shorten/shortener.h"
#include "shortener/v1/shortener.pb.h"

namespace shortener::service {

// INVALID_ARGUMENT for an unknown redirect_type value.
absl::StatusOr<ShortenInput> FromProto(const v1::ShortenRequest& request);
void ToProto(const LinkView& view, v1::Link* out);
// Field for field; an event without a time gets none (ClickRecorder skips it).
RecordClicksInput FromProto(const v1::RecordClicksRequest& request);
void ToProto(const ShortenOutput& output, v1::ShortenResponse* out);
void ToProto(const LinkView& view, v1::ResolveResponse* out);

void ToProto(const auth::ApiKeyRecord& record, v1::ApiKey* out);
ApiKeySpec FromProto(const v1::CreateApiKeyRequest& request);

v1::RedirectType RedirectTypeFromStatus(int http_status);
v1::LinkState ToProto(LinkState state);

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_PROTO_MAPPING_H_
