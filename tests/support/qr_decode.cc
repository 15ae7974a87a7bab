#include "tests/support/qr_decode.h"

#include <png.h>
#include <stdlib.h>
#include <unistd.h>
#include <zbar.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace shortener::testing {

absl::StatusOr<DecodedPng> ReadPng(absl::string_view png) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_memory(&image, png.data(), png.size()) == 0) {
    return absl::InvalidArgumentError(absl::StrCat("not a PNG: ", image.message));
  }
  image.format = PNG_FORMAT_GRAY;
  DecodedPng out;
  out.width = static_cast<int>(image.width);
  out.height = static_cast<int>(image.height);
  out.grey.resize(PNG_IMAGE_SIZE(image));
  const png_color white = {255, 255, 255};  // transparent pixels read as paper
  if (png_image_finish_read(&image, &white, out.grey.data(), 0, nullptr) == 0) {
    return absl::InvalidArgumentError(absl::StrCat("PNG unreadable: ", image.message));
  }
  return out;
}

std::vector<std::string> DecodeQr(const DecodedPng& image) {
  using namespace zbar;  // zbar.h declares its C API in namespace zbar under C++
  zbar_image_scanner_t* scanner = zbar_image_scanner_create();
  zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0);
  zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_ENABLE, 1);
  zbar_image_t* z = zbar_image_create();
  zbar_image_set_format(z, zbar_fourcc('Y', '8', '0', '0'));
  zbar_image_set_size(z, static_cast<unsigned>(image.width), static_cast<unsigned>(image.height));
  zbar_image_set_data(z, image.grey.data(), image.grey.size(), nullptr);
  std::vector<std::string> texts;
  if (zbar_scan_image(scanner, z) > 0) {
    for (const zbar_symbol_t* s = zbar_image_first_symbol(z); s != nullptr;
         s = zbar_symbol_next(s)) {
      texts.emplace_back(zbar_symbol_get_data(s), zbar_symbol_get_data_length(s));
    }
  }
  zbar_image_destroy(z);
  zbar_image_scanner_destroy(scanner);
  return texts;
}

absl::StatusOr<std::vector<std::string>> DecodeQrPng(absl::string_view png) {
  absl::StatusOr<DecodedPng> image = ReadPng(png);
  if (!image.ok()) return image.status();
  return DecodeQr(*image);
}

absl::StatusOr<std::vector<std::string>> DecodeQrSvg(absl::string_view svg, int width_px) {
  if (std::system("command -v rsvg-convert >/dev/null 2>&1") != 0) {
    return absl::FailedPreconditionError(
        "rsvg-convert is not installed (Debian package librsvg2-bin; deploy/local/deps.sh)");
  }
  char dir_template[] = "/tmp/shortener-qr-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (dir == nullptr) return absl::InternalError("mkdtemp failed");
  const std::string in = absl::StrCat(dir, "/in.svg");
  const std::string out = absl::StrCat(dir, "/out.png");
  std::ofstream(in, std::ios::binary) << svg;
  const std::string command =
      absl::StrCat("rsvg-convert -w ", width_px, " -b white -o ", out, " ", in, " 2>&1");
  const int rc = std::system(command.c_str());
  std::ifstream file(out, std::ios::binary);
  std::stringstream png;
  png << file.rdbuf();
  unlink(in.c_str());
  unlink(out.c_str());
  rmdir(dir);
  if (rc != 0) return absl::InvalidArgumentError(absl::StrCat("rsvg-convert failed: ", command));
  return DecodeQrPng(png.str());
}

}  // namespace shortener::testing
