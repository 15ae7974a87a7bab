// Fuzzes GetQrCode's request path short of the link look-up: bytes ->
// v1::GetQrCodeRequest -> FromProto (services/shorten/proto_mapping.h) ->
// qr::RenderQr of a short URL, as LinkStats::GetQrCode draws it.
//
// Input: the serialised request. Invariants, besides no memory error, leak
// or UB:
//  - FromProto fails exactly for a format or error_correction outside the
//    enum, or size_px outside 64..4096 (0 is the default) or
//    margin_modules outside 0..16, with INVALID_ARGUMENT naming the field
//    (the enums first);
//  - otherwise RenderQr of a 22-byte short URL succeeds, but for a symbol
//    and margin wider than the size (level H at 64 px with a margin of 16
//    or so), which it refuses naming size_px;
//  - an image is what its format says: a PNG signature, or an SVG document
//    of the asked size; its content type says the same.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/qr/qr_code.h"
#include "services/shorten/proto_mapping.h"
#include "shortener/v1/shortener.pb.h"
#include "tests/fuzz/fuzz_check.h"

namespace shortener::service {
namespace {

constexpr char kShortUrl[] = "https://sho.rt/Ei8vcb6";

bool KnownFormat(int format) { return format >= 0 && format <= 2; }
bool KnownLevel(int level) { return level >= 0 && level <= 4; }

void FuzzOne(const v1::GetQrCodeRequest& request) {
  absl::StatusOr<QrQuery> query = FromProto(request);
  const int format = static_cast<int>(request.format());
  const int level = static_cast<int>(request.error_correction());
  if (!KnownFormat(format) || !KnownLevel(level)) {
    FUZZ_CHECK(absl::IsInvalidArgument(query.status()));
    const absl::string_view field = !KnownFormat(format) ? "format: " : "error_correction: ";
    FUZZ_CHECK(absl::StartsWith(query.status().message(), field));
    return;
  }
  const int size = request.size_px() == 0 ? 256 : request.size_px();
  const int margin = request.has_margin_modules() ? request.margin_modules() : 4;
  const bool size_ok = size >= qr::kMinSizePx && size <= qr::kMaxSizePx;
  const bool margin_ok = margin >= 0 && margin <= qr::kMaxMarginModules;
  if (!size_ok || !margin_ok) {
    FUZZ_CHECK(absl::IsInvalidArgument(query.status()));
    FUZZ_CHECK(
        absl::StartsWith(query.status().message(), !size_ok ? "size_px: " : "margin_modules: "));
    return;
  }
  FUZZ_CHECK(query.ok() && query->code == request.code());
  FUZZ_CHECK(query->options.size_px == size && query->options.margin_modules == margin);
  absl::StatusOr<qr::QrImage> image = qr::RenderQr(kShortUrl, query->options);
  if (!image.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(image.status()) &&
               absl::StartsWith(image.status().message(), "size_px: ") &&
               absl::StrContains(image.status().message(), "cannot give each"));
    return;
  }
  FUZZ_CHECK(image.ok());
  if (query->options.format == qr::ImageFormat::kSvg) {
    FUZZ_CHECK(format == 2 && image->content_type == "image/svg+xml");
    FUZZ_CHECK(absl::StartsWith(image->bytes, "<?xml"));
    FUZZ_CHECK(absl::StrContains(image->bytes,
                                 absl::StrCat("width=\"", size, "\" height=\"", size, "\"")));
  } else {
    FUZZ_CHECK(format != 2 && image->content_type == "image/png");
    FUZZ_CHECK(absl::StartsWith(image->bytes, "\x89PNG\r\n\x1a\n"));
    FUZZ_CHECK(image->module_px >= 1 && image->module_px * (image->modules + 2 * margin) <= size);
  }
}

}  // namespace
}  // namespace shortener::service

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shortener::v1::GetQrCodeRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  shortener::service::FuzzOne(request);
  return 0;
}
