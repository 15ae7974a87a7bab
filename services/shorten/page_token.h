// ListLinks' page tokens (AIP-158): where the previous page ended (a
// store::ListCursor) and a fingerprint of the request it belongs to, as
// opaque URL-safe text. A token given with another tenant, filter or
// order_by than the one it came from is refused rather than silently
// continuing another listing.
//
// Tokens are not signed: one only selects where to resume a listing whose
// tenant the service checks on every call, so a forged token can show the
// caller nothing it could not list anyway. It is checked for shape only.
//
// Format (version 1): base64url without padding of 34 bytes: version (1),
// fingerprint (8, big-endian), flags (1: bit 0 = the never-clicked walk),
// clicks (8), create time in Unix microseconds (8), link id (8), the last
// three big-endian two's complement.
//
// Thread safety: pure functions.
#ifndef SHORTENER_SERVICES_SHORTEN_PAGE_TOKEN_H_
#define SHORTENER_SERVICES_SHORTEN_PAGE_TOKEN_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/store/link_list.h"

namespace shortener::service {

// Bytes of page_token text at most (a token of this format is 46).
inline constexpr size_t kMaxPageTokenBytes = 128;

// The fingerprint of a listing: the first 8 bytes of SHA-256 over its
// tenant, canonical filter text and order, each length-prefixed.
uint64_t ListingFingerprint(absl::string_view tenant, absl::string_view canonical_filter,
                            store::LinkOrder order);

std::string EncodePageToken(const store::ListCursor& cursor, uint64_t fingerprint);

// The cursor of `token`. INVALID_ARGUMENT naming page_token for text that
// is not a token of this format ("page_token: not a token this service
// issued") or one of another listing ("page_token: it belongs to another
// filter, order_by or tenant; start again without it").
absl::StatusOr<store::ListCursor> DecodePageToken(absl::string_view token, uint64_t fingerprint);

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_PAGE_TOKEN_H_
