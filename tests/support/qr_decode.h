// Reads QR codes back, as a phone would, for the tests of lib/qr and
// GetQrCode: zbar (an independent decoder) over the image's pixels. An SVG
// is first drawn to pixels by rsvg-convert (librsvg), not by our code.
#ifndef SHORTENER_TESTS_SUPPORT_QR_DECODE_H_
#define SHORTENER_TESTS_SUPPORT_QR_DECODE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shortener::testing {

struct DecodedPng {
  int width = 0;
  int height = 0;
  std::vector<unsigned char> grey;  // width * height, row by row
};

// The PNG's pixels as 8-bit grey (libpng's simplified API).
absl::StatusOr<DecodedPng> ReadPng(absl::string_view png);

// The texts of every QR code zbar finds in the pixels (none: empty).
std::vector<std::string> DecodeQr(const DecodedPng& image);

// ReadPng, then DecodeQr.
absl::StatusOr<std::vector<std::string>> DecodeQrPng(absl::string_view png);

// The SVG drawn by rsvg-convert at `width_px`, then DecodeQr. FAILED_PRECONDITION
// naming the package when rsvg-convert is not installed (librsvg2-bin).
absl::StatusOr<std::vector<std::string>> DecodeQrSvg(absl::string_view svg, int width_px);

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SUPPORT_QR_DECODE_H_
