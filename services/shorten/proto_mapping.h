// Conversions between the domain types of Shortener (and its siblings
// LinkStats, ClickRecorder, KeyAdmin) and shortener.v1 protos: what every
// ShortenServiceImpl handler decodes its request with and encodes its answer
// with. Pure functions, apart from the per-item errors of the batch answers,
// which go through ClientStatus (client_status.h: it logs the detail it
// hides). Thread-safe.
#ifndef SHORTENER_SERVICES_SHORTEN_PROTO_MAPPING_H_
#define SHORTENER_SERVICES_SHORTEN_PROTO_MAPPING_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/auth/api_key_store.h"
#include "lib/clicks/click_stats.h"
#include "services/shorten/click_recorder.h"
#include "services/shorten/key_admin.h"
#include "services/shorten/link_lister.h"
#include "services/shorten/link_remover.h"
#include "services/shorten/link_stats.h"
#include "services/shorten/shortener.h"
#include "shortener/v1/shortener.pb.h"

namespace shortener::service {

// INVALID_ARGUMENT for an unknown redirect_type value.
absl::StatusOr<ShortenInput> FromProto(const v1::ShortenRequest& request);

// BatchShorten's items for Shortener::BatchShorten, in order, each asked by
// `caller`: an item FromProto refuses keeps its slot, holding its error,
// which Shortener::BatchShorten answers it with.
std::vector<absl::StatusOr<ShortenInput>> FromProto(
    const v1::BatchShortenRequest& request, const std::shared_ptr<const auth::Principal>& caller);
// One result per item, in order: its response, or its error as ClientStatus
// shows it. Moves the strings out of `results`.
void ToProto(std::vector<absl::StatusOr<ShortenOutput>>&& results, v1::BatchShortenResponse* out);

// The codes, in order.
std::vector<std::string> FromProto(const v1::BatchResolveRequest& request);
// One result per code, in order: as Resolve answers it, or its error as
// ClientStatus shows it.
void ToProto(const std::vector<absl::StatusOr<LinkView>>& views, v1::BatchResolveResponse* out);

// click_count 0: see the LinkWithClicks form.
void ToProto(const LinkView& view, v1::Link* out);
// GetLink's answer: the link with its click count.
void ToProto(const LinkWithClicks& link, v1::Link* out);
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

// INVALID_ARGUMENT naming the field for a time out of Timestamp's range, an
// unknown granularity, both or neither of code and filter, or a tenant
// without a filter.
absl::StatusOr<ClickStatsQuery> FromProto(const v1::GetClickStatsRequest& request);
void ToProto(const clicks::ClickStats& stats, v1::GetClickStatsResponse* out);

// Field for field; the checks are LinkLister's.
ListLinksQuery FromProto(const v1::ListLinksRequest& request);

// The fields update_mask names (or, without a mask, those set in `link`),
// read from request.link: INVALID_ARGUMENT for a missing link.code, a path
// that is not one of long_url, expire_time, redirect_type, max_clicks,
// labels or "*" ("update_mask: ..."), nothing to change, an expire_time out
// of Timestamp's range or an unknown redirect_type. The values' own checks
// are Shortener::UpdateLink's.
absl::StatusOr<LinkEdit> FromProto(const v1::UpdateLinkRequest& request);
// Whether GetLink's request asks for the history (view FULL).
bool WantsHistory(const v1::GetLinkRequest& request);
void ToProto(const LinkListPage& page, v1::ListLinksResponse* out);

// Field for field; the checks are LinkRemover's.
BulkLinksQuery FromProto(const v1::RevokeLinksRequest& request);
BulkLinksQuery FromProto(const v1::DeleteLinksRequest& request);
void ToProto(const BulkLinksResult& result, v1::RevokeLinksResponse* out);
void ToProto(const BulkLinksResult& result, v1::DeleteLinksResponse* out);

// Defaults applied (PNG, 256 px, margin 4, level M); INVALID_ARGUMENT naming
// the field for an unknown format or error_correction, or a size or margin
// out of range (qr::ValidateQrOptions).
absl::StatusOr<QrQuery> FromProto(const v1::GetQrCodeRequest& request);
void ToProto(const LinkQrCode& qr, v1::QrCode* out);

void ToProto(const auth::ApiKeyRecord& record, v1::ApiKey* out);
ApiKeySpec FromProto(const v1::CreateApiKeyRequest& request);
// The key itself (shown this once) and its record.
void ToProto(const CreatedApiKey& created, v1::CreateApiKeyResponse* out);
// Every record, in order.
void ToProto(const std::vector<auth::ApiKeyRecord>& keys, v1::ListApiKeysResponse* out);

v1::LinkState ToProto(LinkState state);

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_PROTO_MAPPING_H_
