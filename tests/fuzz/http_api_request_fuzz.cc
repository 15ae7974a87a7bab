// Fuzzes the HTTP/JSON API's request decoding without a server: method and
// request target -> RouteTable::Find (path splitting, percent-decoding,
// template matching, verbs) -> BuildRequest (query parameters, JSON body,
// path variables, presets) over shortener.proto's own routes, then the
// answer side (EncodeResponse of the filled message's method, StatusJson of
// any refusal).
//
// Input: "METHOD\nTARGET\nCONTENT-TYPE\nBODY" (missing lines are empty).
// Invariants, besides no memory error, leak or UB:
//  - a refusal has an HTTP status of 400, 404, 405 (then Allow is set and
//    the route's path exists with another method) or 415, and its
//    google.rpc.Status JSON names its code;
//  - a request built is a valid message of the route's input type that
//    parses back from its wire form (its strings UTF-8);
//  - a route found for a path is found again for the same path.
#include <google/protobuf/message.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "services/shorten/http/http_routes.h"
#include "services/shorten/http/http_status.h"
#include "services/shorten/http/transcoder.h"
#include "shortener/v1/shortener.pb.h"
#include "tests/fuzz/fuzz_check.h"

namespace shortener::service::http {
namespace {

const RouteTable& Routes() {
  static const absl::StatusOr<RouteTable>& routes =
      *new absl::StatusOr<RouteTable>(LoadShortenServiceRoutes());
  FUZZ_CHECK(routes.ok());
  return *routes;
}

absl::string_view NextLine(absl::string_view& input) {
  const size_t end = input.find('\n');
  const absl::string_view line = input.substr(0, end);
  input = end == absl::string_view::npos ? absl::string_view() : input.substr(end + 1);
  return line;
}

void CheckRefusal(const absl::Status& status) {
  const int http = HttpStatusFor(status);
  FUZZ_CHECK(http == 400 || http == 404 || http == 405 || http == 415);
  const std::string json = StatusJson(status);
  FUZZ_CHECK(absl::StartsWith(json, absl::StrCat("{\"code\":", static_cast<int>(status.code()))));
}

void FuzzOne(absl::string_view input) {
  const absl::string_view method = NextLine(input);
  const absl::string_view target = NextLine(input);
  const absl::string_view content_type = NextLine(input);
  const size_t question = target.find('?');
  const absl::string_view path = target.substr(0, question);
  const absl::string_view query =
      question == absl::string_view::npos ? "" : target.substr(question + 1);
  std::string allow;
  absl::StatusOr<RouteMatch> match = Routes().Find(method, path, &allow);
  if (!match.ok()) {
    CheckRefusal(match.status());
    FUZZ_CHECK((HttpStatusFor(match.status()) == 405) == !allow.empty());
    return;
  }
  std::string again;
  FUZZ_CHECK(Routes().Find(method, path, &again).ok());
  const google::protobuf::Descriptor* input_type = match->route->method->input_type();
  std::unique_ptr<google::protobuf::Message> request(
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(input_type)->New());
  const absl::Status built =
      BuildRequest(*match, HttpRequestParts{query, content_type, input}, request.get());
  if (!built.ok()) {
    CheckRefusal(built);
    return;
  }
  FUZZ_CHECK(request->IsInitialized());
  std::string wire;
  FUZZ_CHECK(request->SerializeToString(&wire));
  // What the service will parse: a proto3 string that is no UTF-8 would
  // fail the whole call there.
  std::unique_ptr<google::protobuf::Message> parsed(request->New());
  FUZZ_CHECK(parsed->ParseFromString(wire));
  // The answer side with an empty response of the method.
  std::unique_ptr<google::protobuf::Message> response(
      google::protobuf::MessageFactory::generated_factory()
          ->GetPrototype(match->route->method->output_type())
          ->New());
  absl::StatusOr<HttpAnswer> answer = EncodeResponse(*match->route, path, *response);
  FUZZ_CHECK(answer.ok() && answer->status == 200);
}

}  // namespace
}  // namespace shortener::service::http

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shortener::service::http::FuzzOne(absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
