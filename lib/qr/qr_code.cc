#include "lib/qr/qr_code.h"

#include <png.h>
#include <qrencode.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace shortener::qr {
namespace {

struct FreeQrCode {
  void operator()(QRcode* code) const { QRcode_free(code); }
};
using Symbol = std::unique_ptr<QRcode, FreeQrCode>;

QRecLevel LevelOf(ErrorCorrection level) {
  switch (level) {
    case ErrorCorrection::kLow:
      return QR_ECLEVEL_L;
    case ErrorCorrection::kMedium:
      return QR_ECLEVEL_M;
    case ErrorCorrection::kQuartile:
      return QR_ECLEVEL_Q;
    case ErrorCorrection::kHigh:
      return QR_ECLEVEL_H;
  }
  return QR_ECLEVEL_M;
}

bool Dark(const QRcode& symbol, int x, int y) {
  return (symbol.data[static_cast<size_t>(y) * symbol.width + x] & 1) != 0;
}

absl::StatusOr<QrImage> DrawPng(const QRcode& symbol, const QrOptions& options) {
  const int total = symbol.width + 2 * options.margin_modules;
  const int module_px = options.size_px / total;
  if (module_px < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("size_px: ", options.size_px, " px cannot give each of the ", symbol.width,
                     " + 2 x ", options.margin_modules, " margin modules of this code a pixel; ",
                     "at least ", total, " px, or a smaller margin or error-correction level"));
  }
  const int size = options.size_px;
  // What the whole modules leave over goes to the margin, half each side.
  const int offset = (size - total * module_px) / 2 + options.margin_modules * module_px;
  // Indices into a two-entry grey palette (0 white, 1 black): libpng then
  // writes one bit per pixel, and deflates an eighth of what 8-bit grey
  // would give it (a 4096 px image took 0.6 s of CPU as grey, 70 ms so:
  // qr_test "[bench]").
  std::vector<unsigned char> pixels(static_cast<size_t>(size) * size, 0);
  for (int y = 0; y < symbol.width; ++y) {
    unsigned char* first = &pixels[static_cast<size_t>(offset + y * module_px) * size];
    for (int x = 0; x < symbol.width; ++x) {
      if (Dark(symbol, x, y)) {
        std::memset(first + offset + x * module_px, 1, static_cast<size_t>(module_px));
      }
    }
    for (int py = 1; py < module_px; ++py) {
      std::memcpy(first + static_cast<size_t>(py) * size, first, static_cast<size_t>(size));
    }
  }
  static constexpr unsigned char kPalette[2] = {0xff, 0x00};
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(size);
  image.height = static_cast<png_uint_32>(size);
  image.format = PNG_FORMAT_GRAY | PNG_FORMAT_FLAG_COLORMAP;
  image.colormap_entries = 2;
  png_alloc_size_t bytes = 0;
  // First the size, then the file.
  if (png_image_write_to_memory(&image, nullptr, &bytes, 0, pixels.data(), 0, kPalette) == 0) {
    return absl::InternalError(absl::StrCat("libpng: ", image.message));
  }
  QrImage out;
  out.bytes.resize(bytes);
  if (png_image_write_to_memory(&image, out.bytes.data(), &bytes, 0, pixels.data(), 0, kPalette) ==
      0) {
    return absl::InternalError(absl::StrCat("libpng: ", image.message));
  }
  out.bytes.resize(bytes);
  out.content_type = "image/png";
  out.modules = symbol.width;
  out.module_px = module_px;
  return out;
}

QrImage DrawSvg(const QRcode& symbol, const QrOptions& options) {
  const int total = symbol.width + 2 * options.margin_modules;
  QrImage out;
  absl::StrAppend(&out.bytes,
                  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"",
                  options.size_px, "\" height=\"", options.size_px, "\" viewBox=\"0 0 ", total, " ",
                  total, "\" shape-rendering=\"crispEdges\">\n",
                  "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n<path fill=\"#000\" d=\"");
  // Each run of dark modules in a row is one rectangle.
  for (int y = 0; y < symbol.width; ++y) {
    for (int x = 0; x < symbol.width;) {
      if (!Dark(symbol, x, y)) {
        ++x;
        continue;
      }
      int run = 1;
      while (x + run < symbol.width && Dark(symbol, x + run, y)) ++run;
      absl::StrAppend(&out.bytes, "M", x + options.margin_modules, " ", y + options.margin_modules,
                      "h", run, "v1h-", run, "z");
      x += run;
    }
  }
  absl::StrAppend(&out.bytes, "\"/>\n</svg>\n");
  out.content_type = "image/svg+xml";
  out.modules = symbol.width;
  return out;
}

}  // namespace

absl::string_view ErrorCorrectionName(ErrorCorrection level) {
  switch (level) {
    case ErrorCorrection::kLow:
      return "L";
    case ErrorCorrection::kMedium:
      return "M";
    case ErrorCorrection::kQuartile:
      return "Q";
    case ErrorCorrection::kHigh:
      return "H";
  }
  return "M";
}

absl::Status ValidateQrOptions(const QrOptions& options) {
  if (options.size_px < kMinSizePx || options.size_px > kMaxSizePx) {
    return absl::InvalidArgumentError(absl::StrCat("size_px: must be ", kMinSizePx, " to ",
                                                   kMaxSizePx, ", got ", options.size_px));
  }
  if (options.margin_modules < 0 || options.margin_modules > kMaxMarginModules) {
    return absl::InvalidArgumentError(absl::StrCat(
        "margin_modules: must be 0 to ", kMaxMarginModules, ", got ", options.margin_modules));
  }
  return absl::OkStatus();
}

absl::StatusOr<QrImage> RenderQr(absl::string_view text, const QrOptions& options) {
  if (absl::Status valid = ValidateQrOptions(options); !valid.ok()) return valid;
  if (text.empty() || text.size() > kMaxTextBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("text: must be 1 to ", kMaxTextBytes, " bytes, got ", text.size()));
  }
  errno = 0;
  Symbol symbol(QRcode_encodeData(static_cast<int>(text.size()),
                                  reinterpret_cast<const unsigned char*>(text.data()),
                                  /*version=*/0, LevelOf(options.level)));
  if (symbol == nullptr) {
    if (errno == ERANGE) {
      return absl::InvalidArgumentError(absl::StrCat("text: ", text.size(),
                                                     " bytes do not fit a QR code at level ",
                                                     ErrorCorrectionName(options.level)));
    }
    return absl::InternalError(absl::StrCat("libqrencode: ", std::strerror(errno)));
  }
  if (options.format == ImageFormat::kSvg) return DrawSvg(*symbol, options);
  return DrawPng(*symbol, options);
}

}  // namespace shortener::qr
