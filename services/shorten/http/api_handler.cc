#include "services/shorten/http/api_handler.h"

#include <google/protobuf/message.h>
#include <grpcpp/client_context.h>
#include <grpcpp/support/stub_options.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "edge/http/host_port.h"
#include "edge/response_builder.h"
#include "lib/common/log.h"
#include "lib/common/status_macros.h"
#include "lib/grpcutil/status.h"
#include "services/shorten/http/http_status.h"
#include "services/shorten/http/transcoder.h"

namespace shortener::service::http {

// One request on its way through the in-process gRPC call.
struct ApiHandler::Call {
  grpc::ClientContext context;
  std::unique_ptr<google::protobuf::Message> request;
  std::unique_ptr<google::protobuf::Message> response;
  edge::http::DeferredResponse deferred;
  const HttpRoute* route = nullptr;
  std::string path;
  bool keep_alive = true;
};

namespace {

using google::protobuf::Message;

constexpr size_t kMaxRequestLine = 8 * 1024;

std::unique_ptr<Message> NewMessage(const google::protobuf::Descriptor* type) {
  return std::unique_ptr<Message>(
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(type)->New());
}

void AppendResponse(int status, absl::string_view content_type, absl::string_view body,
                    bool keep_alive, absl::string_view date, absl::string_view extra_headers,
                    std::string& out) {
  absl::StrAppend(&out, "HTTP/1.1 ", status, " ", ReasonPhrase(status), "\r\n");
  if (!date.empty()) absl::StrAppend(&out, "Date: ", date, "\r\n");
  absl::StrAppend(&out, "Content-Type: ", content_type, "\r\nContent-Length: ", body.size(),
                  "\r\nCache-Control: no-store\r\n", extra_headers,
                  "Connection: ", keep_alive ? "keep-alive" : "close", "\r\n\r\n", body);
}

// The Date header's value now (a deferred answer leaves the loop thread,
// whose cached one it cannot read).
std::string DateNow() {
  char buffer[edge::kHttpDateLength];
  return std::string(edge::FormatHttpDate(std::time(nullptr), buffer));
}

// "Retry-After: N\r\n" from the rate limiter's `retry-after-ms` trailer.
std::string RetryAfterHeader(const grpc::ClientContext& context) {
  const auto& trailers = context.GetServerTrailingMetadata();
  const auto it = trailers.find("retry-after-ms");
  if (it == trailers.end()) return "";
  int64_t ms = 0;
  if (!absl::SimpleAtoi(absl::string_view(it->second.data(), it->second.size()), &ms) || ms < 0) {
    return "";
  }
  return absl::StrCat("Retry-After: ", std::max<int64_t>(1, (ms + 999) / 1000), "\r\n");
}

// gRPC carries only visible ASCII in metadata: anything else would fail the
// call with a transport error instead of a clear refusal.
bool IsVisibleAscii(absl::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

std::string Answer(ApiHandler::Call& call, const grpc::Status& status) {
  std::string out;
  const std::string date = DateNow();
  if (!status.ok()) {
    AppendErrorResponse(grpcutil::FromGrpcStatus(status), call.keep_alive, date,
                        RetryAfterHeader(call.context), out);
    return out;
  }
  absl::StatusOr<HttpAnswer> answer = EncodeResponse(*call.route, call.path, *call.response);
  if (!answer.ok()) {
    LogWarning("HTTP %s %s: %s", call.route->http_method, call.path, answer.status().ToString());
    AppendErrorResponse(answer.status(), call.keep_alive, date, "", out);
    return out;
  }
  const std::string location =
      answer->location.empty() ? "" : absl::StrCat("Location: ", answer->location, "\r\n");
  AppendResponse(answer->status, answer->content_type, answer->body, call.keep_alive, date,
                 location, out);
  return out;
}

// What the server's own refusals (edge/http_server.h) say, as the API's
// errors.
absl::Status ServerRefusal(int status, const HttpApiOptions& options) {
  switch (status) {
    case 400:
      return absl::InvalidArgumentError(
          "malformed HTTP request (a body needs Content-Length; Transfer-Encoding is refused)");
    case 413:
      return WithHttpStatus(absl::InvalidArgumentError(absl::StrCat(
                                "request body larger than ", options.max_body_bytes, " bytes")),
                            413);
    case 414:
      return WithHttpStatus(absl::InvalidArgumentError(absl::StrCat("request line longer than ",
                                                                    kMaxRequestLine, " bytes")),
                            414);
    case 431:
      return WithHttpStatus(absl::InvalidArgumentError(
                                absl::StrCat("request head larger than ", options.max_header_bytes,
                                             " bytes or over 100 header fields")),
                            431);
    case 505:
      return WithHttpStatus(absl::InvalidArgumentError("only HTTP/1.0 and HTTP/1.1 are served"),
                            505);
    default:
      return absl::InternalError("internal error");
  }
}

}  // namespace

void AppendErrorResponse(const absl::Status& status, bool keep_alive, absl::string_view date,
                         absl::string_view extra_headers, std::string& out) {
  AppendResponse(HttpStatusFor(status), "application/json", StatusJson(status), keep_alive, date,
                 extra_headers, out);
}

ApiHandler::ApiHandler(RouteTable routes, std::shared_ptr<grpc::Channel> channel,
                       absl::Duration call_timeout)
    : routes_(std::move(routes)),
      channel_(channel),
      stub_(std::move(channel)),
      call_timeout_(call_timeout) {}

void ApiHandler::Handle(edge::http::Exchange& exchange) {
  const edge::http::Request& request = exchange.request();
  std::string extra_headers;
  absl::StatusOr<std::unique_ptr<Call>> call = Decode(request, &extra_headers);
  if (!call.ok()) {
    return AppendErrorResponse(call.status(), request.keep_alive, exchange.http_date(),
                               extra_headers, exchange.out());
  }
  (*call)->deferred = exchange.Defer();
  Call* raw = call->release();
  const google::protobuf::MethodDescriptor* method = raw->route->method;
  stub_.UnaryCall(
      &raw->context, absl::StrCat("/", method->service()->full_name(), "/", method->name()),
      grpc::StubOptions(), raw->request.get(), raw->response.get(), [raw](grpc::Status status) {
        std::unique_ptr<Call> done(raw);
        done->deferred.Complete(Answer(*done, status));
      });
}

absl::StatusOr<std::unique_ptr<ApiHandler::Call>> ApiHandler::Decode(
    const edge::http::Request& request, std::string* extra_headers) const {
  const size_t question = request.target.find('?');
  const absl::string_view path = request.target.substr(0, question);
  const absl::string_view query =
      question == absl::string_view::npos ? "" : request.target.substr(question + 1);
  std::string allow;
  absl::StatusOr<RouteMatch> match = routes_.Find(request.method, path, &allow);
  if (!match.ok()) {
    if (!allow.empty()) *extra_headers = absl::StrCat("Allow: ", allow, "\r\n");
    return match.status();
  }
  auto call = std::make_unique<Call>();
  call->route = match->route;
  call->path = std::string(path);
  call->keep_alive = request.keep_alive;
  call->request = NewMessage(call->route->method->input_type());
  call->response = NewMessage(call->route->method->output_type());
  SHORTENER_RETURN_IF_ERROR(BuildRequest(
      *match, HttpRequestParts{query, request.content_type, request.body}, call->request.get()));
  if (!request.authorization.empty()) {
    if (!IsVisibleAscii(request.authorization)) {
      return absl::UnauthenticatedError(
          "authorization: the Authorization header must be printable ASCII");
    }
    call->context.AddMetadata("authorization", std::string(request.authorization));
  }
  call->context.set_deadline(std::chrono::system_clock::now() +
                             absl::ToChronoMilliseconds(call_timeout_));
  return call;
}

absl::StatusOr<std::unique_ptr<edge::http::HttpServer>> StartApiServer(
    const HttpApiOptions& options, ApiHandler* handler) {
  edge::http::HttpServerOptions server;
  SHORTENER_RETURN_IF_ERROR(
      edge::SplitHostPort("http_listen", options.listen, &server.host, &server.port));
  server.threads = options.threads;
  server.max_connections = options.max_connections;
  server.max_connections_per_client = options.max_connections;
  server.max_request_line = kMaxRequestLine;
  server.max_header_bytes = options.max_header_bytes;
  server.max_body_bytes = options.max_body_bytes;
  server.keep_body = true;
  server.idle_timeout = options.idle_timeout;
  server.header_timeout = options.read_timeout;
  server.error_writer = [options](int status, absl::string_view date, std::string& out) {
    AppendErrorResponse(ServerRefusal(status, options), false, date, "", out);
  };
  absl::StatusOr<std::unique_ptr<edge::http::HttpServer>> started =
      edge::http::HttpServer::Start(server, handler);
  if (!started.ok()) {
    return absl::Status(started.status().code(),
                        absl::StrCat("--http_listen: ", started.status().message()));
  }
  LogInfo("HTTP/JSON API on %s:%d (%d routes, bodies up to %d bytes, %d connections)", server.host,
          (*started)->port(), handler->routes().routes().size(), options.max_body_bytes,
          options.max_connections);
  return started;
}

}  // namespace shortener::service::http
