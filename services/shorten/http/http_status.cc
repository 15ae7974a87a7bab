#include "services/shorten/http/http_status.h"

#include <google/protobuf/util/json_util.h>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/types/optional.h"
#include "google/rpc/status.pb.h"
#include "lib/common/utf8.h"

namespace shortener::service::http {
namespace {

// Where WithHttpStatus keeps the override (a type URL of our own: it never
// leaves the process).
constexpr char kHttpStatusPayload[] = "type.shortener/http_status";

}  // namespace

int HttpStatusForCode(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kCancelled:
      return 499;  // the client went away: nginx's code, as google.rpc.Code has it
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

absl::Status WithHttpStatus(absl::Status status, int http_status) {
  status.SetPayload(kHttpStatusPayload, absl::Cord(std::to_string(http_status)));
  return status;
}

int HttpStatusFor(const absl::Status& status) {
  const absl::optional<absl::Cord> payload = status.GetPayload(kHttpStatusPayload);
  int http_status = 0;
  if (payload.has_value() && absl::SimpleAtoi(std::string(*payload), &http_status)) {
    return http_status;
  }
  return HttpStatusForCode(status.code());
}

absl::string_view ReasonPhrase(int http_status) {
  switch (http_status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 499:
      return "Client Closed Request";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

std::string StatusJson(const absl::Status& status) {
  google::rpc::Status proto;
  proto.set_code(static_cast<int>(status.code()));
  // The service's messages are UTF-8; one echoing a request's bytes (a path)
  // may not be, and JSON cannot carry it: say so rather than send nothing.
  proto.set_message(utf8::IsValid(status.message()) ? std::string(status.message())
                                                    : "the error message was not valid UTF-8");
  google::protobuf::util::JsonPrintOptions options;
  // "details": [] too, so that clients can rely on every member.
  options.always_print_primitive_fields = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(proto, &json, options);
  return json;
}

}  // namespace shortener::service::http
