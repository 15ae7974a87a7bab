// Conversions between the domain types of Shortener and shortener.v1 protos.
// Pure functions; thread-safe.
#ifndef SHORTENER_SERVICES_SHORTEN_PROTO_MAPPING_H_
#define SHORTENER_SERVICES_SHORTEN_PROTO_MAPPING_H_

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/auth/api_key_store.h"
#include "lib/clicks/click_stats.h"
#include "services/shorten/click_recorder.h"
#include "services/shorten/key_admin.h"
#include "services/shorten/shortener.h"
#include "shortener/v1/shortener.pb.h"

namespace shortener::service {

// GetClickStats' request as given: unset fields are nullopt (defaults are
// clicks::ResolveStatsRange's).
struct ClickStatsQuery {
  std::optional<absl::Time> start;
  std::optional<absl::Time> end;
  std::optional<clicks::StatsGranularity> granularity;
};

// INVALID_ARGUMENT for an unknown redirect_type value.
absl::StatusOr<ShortenInput> FromProto(const v1::ShortenRequest& request);

// BatchShorten's items for Shortener::BatchShorten, in order, each asked by
// `caller`. An item that FromProto refuses still has its slot, holding an
// input that validation refuses, and its error in decode_errors[i] (OK for
// the others): that error is the item's answer, not Shortener's.
struct BatchShortenInputs {
  std::vector<ShortenInput> inputs;
  std::vector<absl::Status> decode_errors;
};
BatchShortenInputs FromProto(const v1::BatchShortenRequest& request,
                             const std::shared_ptr<const auth::Principal>& caller);
void ToProto(const LinkView& view, v1::Link* out);
// Field for field, the text fields as the bytes they are; an event's time is
// an error ("time: missing", "time: out of range ...") when it has none or
// one outside Timestamp's range: ClickRecorder refuses such events.
RecordClicksInput FromProto(const v1::RecordClicksRequest& request);
// Accepted count and refused events; reasons go out as clean text.
void ToProto(const RecordClicksOutput& output, v1::RecordClicksResponse* out);
void ToProto(const ShortenOutput& output, v1::ShortenResponse* out);
// The same, moving the strings (a 1000-link BatchShorten answer would
// otherwise copy every URL once more).
void ToProto(ShortenOutput&& output, v1::ShortenResponse* out);
void ToProto(const LinkView& view, v1::ResolveResponse* out);

// INVALID_ARGUMENT naming the field for a time out of Timestamp's range or
// an unknown granularity.
absl::StatusOr<ClickStatsQuery> FromProto(const v1::GetClickStatsRequest& request);
void ToProto(const clicks::ClickStats& stats, v1::GetClickStatsResponse* out);

void ToProto(const auth::ApiKeyRecord& record, v1::ApiKey* out);
ApiKeySpec FromProto(const v1::CreateApiKeyRequest& request);

v1::LinkState ToProto(LinkState state);

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_PROTO_MAPPING_H_
