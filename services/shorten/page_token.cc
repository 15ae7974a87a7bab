#include "services/shorten/page_token.h"

#include <openssl/sha.h>

#include <array>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace shortener::service {
namespace {

constexpr uint8_t kVersion = 1;
constexpr size_t kTokenBytes = 1 + 8 + 1 + 8 + 8 + 8;

void PutU64(std::string& out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

uint64_t GetU64(absl::string_view in, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(in[at + i]);
  return v;
}

absl::Status NotOurs() {
  return absl::InvalidArgumentError("page_token: not a token this service issued");
}

int OrderNumber(store::LinkOrder order) {
  switch (order) {
    case store::LinkOrder::kNewestFirst:
      break;
    case store::LinkOrder::kOldestFirst:
      return 2;
    case store::LinkOrder::kMostClicked:
      return 3;
  }
  return 1;
}

}  // namespace

uint64_t ListingFingerprint(absl::string_view tenant, absl::string_view canonical_filter,
                            store::LinkOrder order) {
  std::string text;
  for (absl::string_view part : {tenant, canonical_filter}) {
    PutU64(text, part.size());
    text.append(part.data(), part.size());
  }
  text.push_back(static_cast<char>(OrderNumber(order)));
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest;
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
  return GetU64(absl::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()), 0);
}

std::string EncodePageToken(const store::ListCursor& cursor, uint64_t fingerprint) {
  std::string raw;
  raw.reserve(kTokenBytes);
  raw.push_back(static_cast<char>(kVersion));
  PutU64(raw, fingerprint);
  raw.push_back(static_cast<char>(cursor.unclicked ? 1 : 0));
  PutU64(raw, static_cast<uint64_t>(cursor.clicks));
  PutU64(raw, static_cast<uint64_t>(absl::ToUnixMicros(cursor.create_time)));
  PutU64(raw, static_cast<uint64_t>(cursor.id));
  return absl::WebSafeBase64Escape(raw);
}

absl::StatusOr<store::ListCursor> DecodePageToken(absl::string_view token, uint64_t fingerprint) {
  if (token.size() > kMaxPageTokenBytes) return NotOurs();
  std::string raw;
  if (!absl::WebSafeBase64Unescape(token, &raw) || raw.size() != kTokenBytes ||
      static_cast<uint8_t>(raw[0]) != kVersion || static_cast<uint8_t>(raw[9]) > 1) {
    return NotOurs();
  }
  if (GetU64(raw, 1) != fingerprint) {
    return absl::InvalidArgumentError(
        "page_token: it belongs to another filter, order_by or tenant; start again without it");
  }
  store::ListCursor cursor;
  cursor.unclicked = raw[9] == 1;
  cursor.clicks = static_cast<int64_t>(GetU64(raw, 10));
  cursor.create_time = absl::FromUnixMicros(static_cast<int64_t>(GetU64(raw, 18)));
  cursor.id = static_cast<int64_t>(GetU64(raw, 26));
  return cursor;
}

}  // namespace shortener::service
