// The HTTP/JSON API's request handler and listener (--http_listen), on the
// HTTP server the edge and the admin listener use (edge/http/http_server.h).
//
// Each request is matched to its route (http_routes.h), transcoded into the
// method's request message (transcoder.h) and sent as a gRPC call to this
// very service over the gRPC server's in-process channel, with the
// request's Authorization header as `authorization` metadata. So
// authentication, scopes, rate limits, request limits, counters and metrics
// are exactly the gRPC path's: one owner per rule. The answer comes back as
// JSON (or raw bytes), an error as google.rpc.Status JSON with the HTTP
// status of http_status.h's table, and a `retry-after-ms` trailer as
// Retry-After (whole seconds, rounded up).
//
// No loop thread waits: the call is asynchronous (gRPC's callback API) and
// its answer completes the request's DeferredResponse from a gRPC thread.
// A connection carries one request at a time (the next waits behind a
// deferred one), so calls in flight are bounded by the connections
// (HttpApiOptions::max_connections).
//
// Thread safety: Handle runs on the server's loop threads; the handler is
// immutable after construction and must outlive the server.
#ifndef SHORTENER_SERVICES_SHORTEN_HTTP_API_HANDLER_H_
#define SHORTENER_SERVICES_SHORTEN_HTTP_API_HANDLER_H_

#include <grpcpp/channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/impl/codegen/proto_utils.h>

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "edge/http/http_server.h"
#include "services/shorten/http/http_routes.h"

namespace shortener::service::http {

struct HttpApiOptions {
  // "host:port" (port 0: any free one).
  std::string listen;
  // Open connections at once; one more is accepted and closed unanswered.
  // Default 1024.
  size_t max_connections = 1024;
  // Largest request body; a larger Content-Length gets 413 before the body
  // is read. Default 1 MiB.
  size_t max_body_bytes = 1 << 20;
  // Largest request head (request line and headers); 431 beyond. Default
  // 16 KiB; request lines up to 8 KiB (414 beyond).
  size_t max_header_bytes = 16 * 1024;
  // A keep-alive connection with no request is closed after this long.
  // Default 60 s.
  absl::Duration idle_timeout = absl::Seconds(60);
  // A request whose head and body have not arrived this long after its
  // first byte is dropped with its connection. Default 10 s.
  absl::Duration read_timeout = absl::Seconds(10);
  // The deadline of the gRPC call a request becomes. Default 30 s.
  absl::Duration call_timeout = absl::Seconds(30);
  // Event loops (threads). Default 1: the work is the service's, on its own
  // threads; a loop only parses and writes.
  int threads = 1;
};

class ApiHandler : public edge::http::Handler {
 public:
  // `channel`: the gRPC server's in-process channel.
  ApiHandler(RouteTable routes, std::shared_ptr<grpc::Channel> channel,
             absl::Duration call_timeout);

  void Handle(edge::http::Exchange& exchange) override;

  const RouteTable& routes() const { return routes_; }

  struct Call;

 private:
  // The call a request asks for, ready to start; or the refusal (404, 405
  // with `extra_headers` "Allow: ...", 400, 415, 401) to answer at once.
  absl::StatusOr<std::unique_ptr<Call>> Decode(const edge::http::Request& request,
                                               std::string* extra_headers) const;

  const RouteTable routes_;
  std::shared_ptr<grpc::Channel> channel_;
  grpc::TemplatedGenericStub<google::protobuf::Message, google::protobuf::Message> stub_;
  const absl::Duration call_timeout_;
};

// Starts the listener on options.listen with `handler` (which outlives it)
// and logs "HTTP/JSON API on HOST:PORT (N routes)" (tests read the port from
// it). INVALID_ARGUMENT naming --http_listen for a malformed address;
// UNAVAILABLE naming it when the address cannot be bound.
absl::StatusOr<std::unique_ptr<edge::http::HttpServer>> StartApiServer(
    const HttpApiOptions& options, ApiHandler* handler);

// Appends a complete error response: google.rpc.Status JSON of `status`
// with its HTTP status (http_status.h), Cache-Control: no-store, and
// `extra_headers` (lines ending in CRLF, e.g. "Allow: GET\r\n").
void AppendErrorResponse(const absl::Status& status, bool keep_alive, absl::string_view date,
                         absl::string_view extra_headers, std::string& out);

}  // namespace shortener::service::http

#endif  // SHORTENER_SERVICES_SHORTEN_HTTP_API_HANDLER_H_
