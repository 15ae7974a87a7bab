// QR codes of short links, for print and posters: the symbol from
// libqrencode (byte mode, the smallest version that holds the text at the
// chosen error-correction level), drawn as a PNG (libpng's simplified API,
// black and white, one bit per pixel) or an SVG (one path, scaled by the
// viewer).
//
// A PNG draws every module as a square of whole pixels, so that scanners
// see sharp edges: the module size is the largest that fits the requested
// size with the margin, and what is left over is added to the margin,
// evenly. An SVG's modules are units of its viewBox; its width and height
// are the requested size.
//
// Thread safety: pure functions.
#ifndef SHORTENER_LIB_QR_QR_CODE_H_
#define SHORTENER_LIB_QR_QR_CODE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shortener::qr {

enum class ImageFormat { kPng, kSvg };

// The share of the symbol that may be damaged and still read: L 7 %,
// M 15 %, Q 25 %, H 30 %. Higher levels make bigger symbols.
enum class ErrorCorrection { kLow, kMedium, kQuartile, kHigh };

inline constexpr int kMinSizePx = 64;
inline constexpr int kMaxSizePx = 4096;
inline constexpr int kMaxMarginModules = 16;
// Short URLs are tens of bytes; the largest symbol holds 2953 at level L.
inline constexpr size_t kMaxTextBytes = 2048;

struct QrOptions {
  ImageFormat format = ImageFormat::kPng;
  int size_px = 256;       // width and height, kMinSizePx..kMaxSizePx
  int margin_modules = 4;  // the quiet zone around the symbol (the standard asks for 4)
  ErrorCorrection level = ErrorCorrection::kMedium;
};

struct QrImage {
  std::string bytes;         // the PNG file or the SVG document
  std::string content_type;  // "image/png" or "image/svg+xml"
  int modules = 0;           // the symbol's width in modules, without the margin
  int module_px = 0;         // pixels per module in a PNG (0 for an SVG)
};

// INVALID_ARGUMENT naming the field and its range for size_px or
// margin_modules out of range ("size_px: must be 64 to 4096, got 10"), so
// that callers refuse a request before looking anything up.
absl::Status ValidateQrOptions(const QrOptions& options);

// The image of `text`. ValidateQrOptions' errors, then INVALID_ARGUMENT for
// empty text or text longer than
// kMaxTextBytes, or a PNG size too small to give every module of this
// symbol and its margin one pixel (the message says the least size that
// works); INTERNAL when libqrencode or libpng fail otherwise.
absl::StatusOr<QrImage> RenderQr(absl::string_view text, const QrOptions& options);

// "L", "M", "Q", "H".
absl::string_view ErrorCorrectionName(ErrorCorrection level);

}  // namespace shortener::qr

#endif  // SHORTENER_LIB_QR_QR_CODE_H_
