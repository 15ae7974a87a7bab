// The gRPC code -> HTTP status table and the google.rpc.Status JSON body.
#include "services/shorten/http/http_status.h"

#include <catch2/catch.hpp>

namespace shortener::service::http {
namespace {

TEST_CASE("every code maps to google.rpc.Code's HTTP status", "[services/shorten/http][status]") {
  const std::pair<absl::StatusCode, int> table[] = {
      {absl::StatusCode::kOk, 200},
      {absl::StatusCode::kCancelled, 499},
      {absl::StatusCode::kUnknown, 500},
      {absl::StatusCode::kInvalidArgument, 400},
      {absl::StatusCode::kDeadlineExceeded, 504},
      {absl::StatusCode::kNotFound, 404},
      {absl::StatusCode::kAlreadyExists, 409},
      {absl::StatusCode::kPermissionDenied, 403},
      {absl::StatusCode::kResourceExhausted, 429},
      {absl::StatusCode::kFailedPrecondition, 400},
      {absl::StatusCode::kAborted, 409},
      {absl::StatusCode::kOutOfRange, 400},
      {absl::StatusCode::kUnimplemented, 501},
      {absl::StatusCode::kInternal, 500},
      {absl::StatusCode::kUnavailable, 503},
      {absl::StatusCode::kDataLoss, 500},
      {absl::StatusCode::kUnauthenticated, 401},
  };
  for (const auto& [code, http] : table) {
    INFO(absl::StatusCodeToString(code));
    CHECK(HttpStatusForCode(code) == http);
    CHECK(HttpStatusFor(absl::Status(code, "x")) == (code == absl::StatusCode::kOk ? 200 : http));
    CHECK(ReasonPhrase(http) != "Error");
  }
}

TEST_CASE("an attached HTTP status overrides the table", "[services/shorten/http][status]") {
  const absl::Status media = WithHttpStatus(absl::InvalidArgumentError("Content-Type"), 415);
  CHECK(HttpStatusFor(media) == 415);
  CHECK(media.code() == absl::StatusCode::kInvalidArgument);
  CHECK(ReasonPhrase(415) == "Unsupported Media Type");
  CHECK(ReasonPhrase(418) == "Error");
}

TEST_CASE("errors are google.rpc.Status JSON with every member",
          "[services/shorten/http][status]") {
  CHECK(StatusJson(absl::NotFoundError("code \"x\" not found")) ==
        R"({"code":5,"message":"code \"x\" not found","details":[]})");
  CHECK(StatusJson(absl::InvalidArgumentError("")) == R"({"code":3,"message":"","details":[]})");
  CHECK(StatusJson(absl::InternalError("\xff")) ==
        R"({"code":13,"message":"the error message was not valid UTF-8","details":[]})");
}

}  // namespace
}  // namespace shortener::service::http
