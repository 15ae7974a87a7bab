// Fuzzes ListLinks' request checks short of the store: bytes ->
// v1::ListLinksRequest -> FromProto (services/shorten/proto_mapping.h) ->
// ParseListFilter, ParseListOrder (services/shorten/list_filter.h) and
// DecodePageToken (services/shorten/page_token.h), as LinkLister plans a
// page.
//
// Input: the serialised request. Invariants, besides no memory error, leak
// or UB:
//  - each refusal is INVALID_ARGUMENT naming its field ("filter: ",
//    "order_by: ", "page_token: ");
//  - a parsed filter keeps every label condition by the label rule, at
//    most one per key, a host in canonical form (CanonicalDomain gives it
//    back unchanged), create time bounds on whole microseconds;
//  - a token that decodes re-encodes to one that decodes to the same
//    cursor, and any token decodes under no other fingerprint;
//  - the request's fields reach the query unchanged.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "lib/store/link_labels.h"
#include "lib/url/url_policy.h"
#include "services/shorten/list_filter.h"
#include "services/shorten/page_token.h"
#include "services/shorten/proto_mapping.h"
#include "shortener/v1/shortener.pb.h"
#include "tests/fuzz/fuzz_check.h"

namespace shortener::service {
namespace {

bool RefusedAs(const absl::Status& status, absl::string_view field) {
  return absl::IsInvalidArgument(status) && absl::StartsWith(status.message(), field);
}

bool WholeMicros(absl::Time t) { return absl::FromUnixMicros(absl::ToUnixMicros(t)) == t; }

void FuzzOne(const v1::ListLinksRequest& request) {
  const ListLinksQuery query = FromProto(request);
  FUZZ_CHECK(query.tenant == request.tenant() && query.page_size == request.page_size() &&
             query.page_token == request.page_token() && query.filter == request.filter() &&
             query.order_by == request.order_by());

  absl::StatusOr<ListConditions> conditions = ParseListFilter(query.filter);
  if (!conditions.ok()) {
    FUZZ_CHECK(RefusedAs(conditions.status(), "filter: "));
  } else {
    for (size_t i = 0; i < conditions->labels.size(); ++i) {
      const LabelCondition& label = conditions->labels[i];
      FUZZ_CHECK(store::ValidateLabelKey(label.key).ok());
      FUZZ_CHECK(store::ValidateLabelValue(label.key, label.value).ok());
      for (size_t j = 0; j < i; ++j) FUZZ_CHECK(conditions->labels[j].key != label.key);
    }
    if (conditions->host.has_value()) {
      absl::StatusOr<std::string> again = url::CanonicalDomain(*conditions->host);
      FUZZ_CHECK(again.ok() && *again == *conditions->host);
    }
    if (conditions->created_from.has_value()) FUZZ_CHECK(WholeMicros(*conditions->created_from));
    if (conditions->created_before.has_value()) {
      FUZZ_CHECK(WholeMicros(*conditions->created_before));
    }
  }

  absl::StatusOr<store::LinkOrder> order = ParseListOrder(query.order_by);
  if (!order.ok()) FUZZ_CHECK(RefusedAs(order.status(), "order_by: "));

  const uint64_t fingerprint =
      ListingFingerprint(query.tenant, query.filter, order.ok() ? *order : store::LinkOrder{});
  absl::StatusOr<store::ListCursor> cursor = DecodePageToken(query.page_token, fingerprint);
  if (!cursor.ok()) {
    FUZZ_CHECK(RefusedAs(cursor.status(), "page_token: "));
  } else {
    const std::string token = EncodePageToken(*cursor, fingerprint);
    absl::StatusOr<store::ListCursor> again = DecodePageToken(token, fingerprint);
    FUZZ_CHECK(again.ok() && *again == *cursor);
    FUZZ_CHECK(RefusedAs(DecodePageToken(query.page_token, fingerprint + 1).status(),
                         "page_token: it belongs to another"));
  }
  // A token made for this listing always decodes, whatever the request said.
  store::ListCursor any;
  any.unclicked = request.page_size() % 2 == 1;
  any.clicks = request.page_size();
  any.id = static_cast<int64_t>(request.filter().size());
  absl::StatusOr<store::ListCursor> made =
      DecodePageToken(EncodePageToken(any, fingerprint), fingerprint);
  FUZZ_CHECK(made.ok() && *made == any);
}

}  // namespace
}  // namespace shortener::service

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shortener::v1::ListLinksRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  shortener::service::FuzzOne(request);
  return 0;
}
