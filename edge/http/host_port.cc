#include "edge/http/host_port.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace shortener::edge {

absl::Status SplitHostPort(const std::string& flag, const std::string& value, std::string* host,
                           int* port) {
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, "=\"", value, "\": ", why, " (expected HOST:PORT)"));
  };
  const size_t colon = value.rfind(':');
  if (colon == std::string::npos) return bad("no port");
  std::string h = value.substr(0, colon);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (h.empty()) return bad("no host");
  int p = -1;
  if (!absl::SimpleAtoi(value.substr(colon + 1), &p) || p < 0 || p > 65535) {
    return bad("port must be 0..65535");
  }
  *host = h;
  *port = p;
  return absl::OkStatus();
}

}  // namespace shortener::edge
