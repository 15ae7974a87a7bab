// Runs the curl binary, as a user of the HTTP/JSON API would, for the
// end-to-end tests: the arguments as given (no shell), the response read
// from curl's --include output (status, headers of the final response, the
// body as bytes).
#ifndef SHORTENER_TESTS_SUPPORT_CURL_H_
#define SHORTENER_TESTS_SUPPORT_CURL_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace shortener::testing {

struct CurlResponse {
  int status = 0;
  // Lower-case names; the last value of a repeated header.
  std::map<std::string, std::string> headers;
  std::string body;

  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? "" : it->second;
  }
};

// curl -sS --include --max-time 20 ARGS... (`args` e.g. {"-X", "POST",
// "-H", "Authorization: Bearer k", "--data-binary", "{}", "http://..."}).
// INTERNAL with curl's error output when it exits non-zero or prints no
// response.
absl::StatusOr<CurlResponse> Curl(const std::vector<std::string>& args);

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SUPPORT_CURL_H_
