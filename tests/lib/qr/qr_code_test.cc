// lib/qr: every error-correction level and a spread of sizes and margins,
// PNG and SVG, read back by zbar to exactly the text; the PNG's geometry
// (size, whole-pixel modules, a white margin); and the refusals.
#include "lib/qr/qr_code.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/support/qr_decode.h"

namespace shortener::qr {
namespace {

using shortener::testing::DecodedPng;
using shortener::testing::DecodeQr;
using shortener::testing::DecodeQrSvg;
using shortener::testing::ReadPng;

constexpr ErrorCorrection kLevels[] = {ErrorCorrection::kLow, ErrorCorrection::kMedium,
                                       ErrorCorrection::kQuartile, ErrorCorrection::kHigh};
const std::string kShortUrl = "https://sho.rt/Ei8vcb6";

TEST_CASE("a PNG reads back as exactly its text at every level, size and margin", "[lib/qr]") {
  for (ErrorCorrection level : kLevels) {
    for (int size : {kMinSizePx, 100, 256, 1000, kMaxSizePx}) {
      for (int margin : {0, 4, kMaxMarginModules}) {
        CAPTURE(ErrorCorrectionName(level), size, margin);
        QrOptions options;
        options.level = level;
        options.size_px = size;
        options.margin_modules = margin;
        // A short URL's symbol (at most 29 modules, at H) and the widest
        // margin fit the smallest size.
        absl::StatusOr<QrImage> image = RenderQr(kShortUrl, options);
        REQUIRE(image.ok());
        CHECK(image->content_type == "image/png");
        // One bit per pixel: IHDR's bit depth 1, colour type 3 (palette).
        REQUIRE(image->bytes.size() > 26);
        CHECK(image->bytes[24] == 1);
        CHECK(image->bytes[25] == 3);
        absl::StatusOr<DecodedPng> png = ReadPng(image->bytes);
        REQUIRE(png.ok());
        CHECK(png->width == size);
        CHECK(png->height == size);
        CHECK(image->module_px == size / (image->modules + 2 * margin));
        // The margin, and what whole modules left over, is white on all
        // four sides; the symbol's corners (finder patterns) are black.
        const int drawn = image->modules * image->module_px;
        const int left = (size - (image->modules + 2 * margin) * image->module_px) / 2 +
                         margin * image->module_px;
        const int right = size - left - drawn;  // the extra pixel of an odd leftover
        auto at = [&](int x, int y) { return png->grey[static_cast<size_t>(y) * size + x]; };
        bool white = true;
        for (int i = 0; i < size && white; ++i) {
          for (int b = 0; b < left; ++b) white = white && at(b, i) == 255 && at(i, b) == 255;
          for (int b = 0; b < right; ++b) {
            white = white && at(size - 1 - b, i) == 255 && at(i, size - 1 - b) == 255;
          }
        }
        CHECK(white);
        CHECK(at(left, left) == 0);
        CHECK(at(left + drawn - 1, left) == 0);
        CHECK(at(left, left + drawn - 1) == 0);
        // A quiet zone of 0 is outside the standard; scanners then need the
        // paper around the image, as zbar needs white around the pixels.
        if (margin == 0) continue;
        CHECK(DecodeQr(*png) == std::vector<std::string>{kShortUrl});
      }
    }
  }
}

TEST_CASE("an SVG reads back as exactly its text at every level", "[lib/qr]") {
  for (ErrorCorrection level : kLevels) {
    for (int size : {kMinSizePx, 512}) {
      CAPTURE(ErrorCorrectionName(level), size);
      QrOptions options;
      options.format = ImageFormat::kSvg;
      options.level = level;
      options.size_px = size;
      absl::StatusOr<QrImage> image = RenderQr(kShortUrl, options);
      REQUIRE(image.ok());
      CHECK(image->content_type == "image/svg+xml");
      CHECK(image->bytes.find(absl::StrCat("width=\"", size, "\" height=\"", size, "\"")) !=
            std::string::npos);
      // Drawn by rsvg-convert at a size a phone would see on a screen.
      absl::StatusOr<std::vector<std::string>> texts = DecodeQrSvg(image->bytes, 400);
      REQUIRE(texts.ok());
      CHECK(*texts == std::vector<std::string>{kShortUrl});
    }
  }
}

TEST_CASE("higher error correction makes a bigger symbol of the same text", "[lib/qr]") {
  int previous = 0;
  for (ErrorCorrection level : kLevels) {
    QrOptions options;
    options.level = level;
    options.size_px = 1000;
    absl::StatusOr<QrImage> image = RenderQr(std::string(60, 'a'), options);
    REQUIRE(image.ok());
    CHECK(image->modules >= previous);
    previous = image->modules;
  }
  CHECK(previous > 21);  // H needs more than the smallest version
}

TEST_CASE("out-of-range options and text are refused, naming the field", "[lib/qr]") {
  auto error = [](absl::string_view text, QrOptions options) {
    absl::StatusOr<QrImage> image = RenderQr(text, options);
    REQUIRE_FALSE(image.ok());
    CHECK(image.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(image.status().message());
  };
  QrOptions o;
  o.size_px = kMinSizePx - 1;
  CHECK(error(kShortUrl, o) == "size_px: must be 64 to 4096, got 63");
  o.size_px = kMaxSizePx + 1;
  CHECK(error(kShortUrl, o) == "size_px: must be 64 to 4096, got 4097");
  o = QrOptions{};
  o.margin_modules = -1;
  CHECK(error(kShortUrl, o) == "margin_modules: must be 0 to 16, got -1");
  o.margin_modules = kMaxMarginModules + 1;
  CHECK(error(kShortUrl, o) == "margin_modules: must be 0 to 16, got 17");
  o = QrOptions{};
  CHECK(error("", o) == "text: must be 1 to 2048 bytes, got 0");
  CHECK(error(std::string(kMaxTextBytes + 1, 'a'), o) == "text: must be 1 to 2048 bytes, got 2049");
  o.level = ErrorCorrection::kHigh;  // holds at most 1273 bytes
  CHECK(error(std::string(2000, 'a'), o) == "text: 2000 bytes do not fit a QR code at level H");
  // At level L, 2000 bytes make a symbol of 149 modules: 157 with the margin.
  o.level = ErrorCorrection::kLow;
  o.size_px = 100;
  CHECK(error(std::string(2000, 'a'), o) ==
        "size_px: 100 px cannot give each of the 149 + 2 x 4 margin modules of this code a "
        "pixel; at least 157 px, or a smaller margin or error-correction level");
  // The same as an SVG is fine: it scales.
  o.format = ImageFormat::kSvg;
  CHECK(RenderQr(std::string(2000, 'a'), o).ok());
}

TEST_CASE("render times per size and format", "[lib/qr][.][bench]") {
  // Not a test: `build/bin/qr_test "[bench]"` prints what one image costs
  // (docs/benchmarks.md, QR codes).
  for (int size : {256, 1024, kMaxSizePx}) {
    for (ImageFormat format : {ImageFormat::kPng, ImageFormat::kSvg}) {
      QrOptions options;
      options.size_px = size;
      options.format = format;
      constexpr int kRounds = 20;
      size_t bytes = 0;
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < kRounds; ++i) bytes = RenderQr(kShortUrl, options)->bytes.size();
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count() /
          kRounds;
      std::printf("%s %d px: %.2f ms per image, %zu bytes\n",
                  format == ImageFormat::kPng ? "PNG" : "SVG", size, ms, bytes);
    }
  }
}

}  // namespace
}  // namespace shortener::qr
