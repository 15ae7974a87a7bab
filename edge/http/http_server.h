// The redirect edge's HTTP/1.1 server: sockets, parsing, keep-alive,
// pipelining, timeouts, limits and graceful shutdown, and nothing else. What
// a request means is the Handler's business (edge/app); the server hands it
// the request's method, target and a few headers, and sends back the bytes
// the handler appends (built with edge/response_builder.h).
//
// Model: `threads` event loops, each one thread running its own
// boost::asio::io_context with its own acceptor bound with SO_REUSEPORT to
// the same port (the kernel spreads connections). A connection lives on one
// loop for its whole life. Per request in steady state nothing is allocated
// and nothing is shared between threads: the request head is parsed
// (Boost.Beast's basic_parser) in place in a per-connection read buffer, the
// values the server keeps are copied into per-connection strings that keep
// their capacity, the handler appends its response to a per-connection
// output buffer, and every complete request found in one read is answered
// with one write (pipelining). The protocol itself (bytes in, requests to
// the handler, bytes out) runs without a socket (connection_protocol.h), so
// it is tested and fuzzed directly.
//
// What the server accepts is what RFC 9112 asks of an origin server that
// serves only GET and HEAD, read strictly where leniency lets a proxy in
// front and the edge disagree on where a request ends (request smuggling).
// Server-generated errors (never reach the handler, counted in
// protocol_errors and by RequestRefusal, answered with Connection: close,
// then the connection is closed):
//   400  malformed (request line, field syntax, a line not ended by CRLF,
//        a control character other than HTAB in a field value, NUL
//        anywhere), obs-fold (a field line folded onto the next), any
//        Transfer-Encoding, Content-Length repeated, a list, or not digits,
//        an HTTP/1.1 request without Host, Host repeated or not a
//        uri-host[:port];
//   413  body over max_body_bytes;
//   414  request line over max_request_line;
//   431  header block over max_header_bytes, or more than max_header_fields
//        field lines;
//   505  HTTP version other than 1.0/1.1.
// They are small fixed texts with Cache-Control: no-store and never echo
// request bytes. A handler that neither answers nor defers, or drops a
// DeferredResponse, gets a 500 sent for it and the connection closed.
//
// Request bodies: only with Content-Length, up to max_body_bytes, read
// before the handler sees the request, and discarded unless keep_body is
// set (then Request::body holds it, and "Expect: 100-continue" is answered
// "100 Continue" once the head is accepted). Without keep_body,
// "Expect: 100-continue" is not answered: such clients send their body
// after their own timeout.
//
// Limits (each an option below; the edge's flags in docs/edge.md, "Limits"):
//   connections   max_connections over all loops, max_connections_per_client
//                 per TCP peer (an IPv6 peer by its /64); a connection over
//                 either is closed at once, unanswered, and counted.
//   per request   max_request_line, max_header_bytes, max_header_fields,
//                 max_body_bytes, header_timeout.
//   output        a connection stops handling requests (and so reading)
//                 while its responses not yet written reach
//                 max_output_bytes; it goes on as the client reads them.
//   memory        per connection: a read buffer of 4 KiB (growing to
//                 max_header_bytes + 4 KiB for a large head or a pipelined
//                 burst), the head values kept (at most the head's size), and
//                 output of at most max_output_bytes plus one response. An
//                 output buffer of more than 4 * max_output_bytes is released
//                 once written; a connection that handled no request for a
//                 sweep period (at most 1 s) goes back to the small buffers.
//   time          header_timeout for a request, idle_timeout between
//                 requests and for a client to read a response.
//
// Thread safety: HttpServer's methods are safe from any thread (Shutdown and
// the destructor not from a loop thread, i.e. not from Handle). Handler::Handle
// runs on loop threads, concurrently on different loops when threads > 1.
// An Exchange and its Request belong to the loop thread during Handle.
// DeferredResponse::Complete may be called from any thread.
#ifndef SHORTENER_EDGE_HTTP_HTTP_SERVER_H_
#define SHORTENER_EDGE_HTTP_HTTP_SERVER_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace shortener::edge::http {

namespace internal {
class ClientConnectionCounts;
class ConnectionProtocol;
class DeferredTarget;
class EventLoop;
struct LoopContext;
struct LoopGate;
}  // namespace internal

// The TCP peer of a connection (not X-Forwarded-For).
struct PeerAddress {
  bool is_v6 = false;
  // Network byte order; an IPv4 address in the first 4 bytes.
  std::array<uint8_t, 16> bytes{};
  uint16_t port = 0;
};

struct HttpServerOptions {
  // IP address to listen on (a literal: "127.0.0.1", "0.0.0.0", "::");
  // host names are refused. Default "127.0.0.1".
  std::string host = "127.0.0.1";
  // 0: any free port (port() tells which). Default 0.
  int port = 0;
  // Event loops, one thread each. With more than one, every loop has its own
  // acceptor bound with SO_REUSEPORT to the same port. Default 1.
  int threads = 1;
  // Longest request line (method SP target SP version, CRLF excluded);
  // longer gets 414 and the connection closed. Default 8 KiB.
  size_t max_request_line = 8 * 1024;
  // Largest request head (request line, fields, final CRLF); larger gets 431
  // (or 414 if the request line has not ended by then) and the connection
  // closed. Also sizes the read buffer (this plus 4 KiB). Default 16 KiB.
  size_t max_header_bytes = 16 * 1024;
  // Most field lines in a request head; more gets 431 and the connection
  // closed. Default 100 (browsers send about 20).
  size_t max_header_fields = 100;
  // Largest request body (Content-Length); larger gets 413 and the
  // connection closed. Smaller bodies are read and discarded. Default 64 KiB.
  size_t max_body_bytes = 64 * 1024;
  // Responses a connection may hold unwritten (a pipelining client that
  // does not read): at this many bytes it handles no further request, and
  // reads nothing, until the client has read enough. One response may
  // overshoot it. Default 64 KiB.
  size_t max_output_bytes = 64 * 1024;
  // A keep-alive connection with no request in progress is closed after
  // this long. Also bounds how long a client may take to read a response
  // that did not fit the socket buffer. Default 60 s.
  absl::Duration idle_timeout = absl::Seconds(60);
  // A request whose head (and body, if any) is not complete this long after
  // its first byte arrived is dropped with its connection (slowloris).
  // Default 10 s.
  absl::Duration header_timeout = absl::Seconds(10);
  // Open connections over all loops; beyond it a new connection is accepted
  // and closed at once (counted in connections_refused). Each takes a file
  // descriptor: keep it below the open-file limit with room for everything
  // else (the edge derives it from that limit). Loops check it without a
  // lock, so it may be passed by threads - 1 for a moment. Default 10000.
  size_t max_connections = 10000;
  // Open connections from one client: a TCP peer address, IPv6 ones by
  // their /64 (a host picks any address in its /64 at will). Beyond it a
  // new connection is accepted and closed at once (counted in
  // connections_refused_per_client). 0: no limit. Default 4096: a carrier's
  // NAT puts thousands of phones behind one address, and each holds a
  // keep-alive connection for up to idle_timeout after a click.
  size_t max_connections_per_client = 4096;
  // Peers exempt from max_connections_per_client (e.g. the load balancers
  // in front, which carry many people each). Called once per accepted
  // connection, on a loop thread, concurrently from several loops; must not
  // block. Empty: none exempt.
  std::function<bool(const PeerAddress&)> exempt_from_client_limit;
  // Keep request bodies for the handler (Request::body) and answer
  // "Expect: 100-continue"; false: read and discard them (the edge takes
  // none). Default false.
  bool keep_body = false;
  // Writes the server's own error responses (the refusals above, and the
  // 500 for a handler that did not answer) instead of the fixed texts:
  // appends one complete response of `status` with "Connection: close" to
  // `out`; `date` is the Date header's value. Runs on loop threads; must
  // not block or throw. Default empty: the fixed texts.
  std::function<void(int status, absl::string_view date, std::string& out)> error_writer;
};

// One parsed request. Every view points into storage the connection owns
// (copied out of the bytes received, never into a buffer the parser may
// reuse) and is valid only until Handle returns, also when the request is
// deferred: a handler that answers later copies what it needs first.
struct Request {
  absl::string_view method;  // as sent, e.g. "GET"
  absl::string_view target;  // as sent, e.g. "/Ab3xYz9?utm=1"
  // All non-empty X-Forwarded-For field values, in order, joined by ", ".
  // Empty if none.
  absl::string_view x_forwarded_for;
  // The first field of each name; empty if absent.
  absl::string_view user_agent;
  absl::string_view referer;
  absl::string_view purpose;      // "Purpose" (prefetch hints)
  absl::string_view sec_purpose;  // "Sec-Purpose"
  // Every Authorization value, joined by ", " when repeated; empty if none.
  absl::string_view authorization;
  // The first Content-Type; empty if none.
  absl::string_view content_type;
  // The body (Content-Length bytes) with HttpServerOptions::keep_body;
  // otherwise empty.
  absl::string_view body;
  PeerAddress peer;
  // Whether the connection stays open after this response: HTTP/1.1 unless
  // "Connection: close", HTTP/1.0 only with "Connection: keep-alive", and
  // never once the server is shutting down. The handler writes the matching
  // Connection header; the server closes after the response when false.
  bool keep_alive = true;
  int version = 11;  // 10 or 11
};

// The promise of one response, for a request answered after Handle returned
// (e.g. after an RPC). Move-only; an empty one (default-constructed, moved
// from, or completed) does nothing. Until it completes, the connection keeps
// the requests that follow unanswered, so responses stay in request order.
class DeferredResponse {
 public:
  DeferredResponse() = default;
  DeferredResponse(DeferredResponse&& other) noexcept;
  // Abandons the response this one held (see the destructor), then takes
  // other's.
  DeferredResponse& operator=(DeferredResponse&& other) noexcept;
  DeferredResponse(const DeferredResponse&) = delete;
  DeferredResponse& operator=(const DeferredResponse&) = delete;
  // If neither completed nor moved from: the server sends a 500 with
  // Connection: close for the request and closes the connection.
  ~DeferredResponse();

  // Delivers the bytes of one complete response (copied here; the call does
  // not wait for the loop). They are written after the responses to earlier
  // requests, then the connection goes on with the requests that follow; if
  // the request had keep_alive false, the connection is closed once they are
  // written. Call at most once, from any thread; later calls do nothing, as
  // do calls after the server was shut down.
  void Complete(absl::string_view response_bytes);

  // True until Complete, a move, or destruction.
  bool pending() const { return gate_ != nullptr; }

 private:
  friend class internal::ConnectionProtocol;
  DeferredResponse(std::shared_ptr<internal::LoopGate> gate, internal::DeferredTarget* target);
  void Resolve(std::string bytes, bool completed);

  std::shared_ptr<internal::LoopGate> gate_;
  internal::DeferredTarget* target_ = nullptr;
};

// What the handler gets for one request: the request, and where the answer
// goes. One per connection, reused; only valid during Handle.
class Exchange {
 public:
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  const Request& request() const { return request_; }
  // The connection's output buffer: append the complete response (status
  // line, headers, body) to answer now. Bytes already there belong to
  // earlier responses and must be left alone.
  std::string& out() { return *out_; }
  // Answer later instead (at most once per request; a second call, or one
  // outside Handle, returns an empty DeferredResponse).
  DeferredResponse Defer();
  // The current time as an IMF-fixdate for the Date header, formatted at
  // most once per second by this loop.
  absl::string_view http_date() const;
  // This loop's coarse monotonic clock (CLOCK_MONOTONIC_COARSE, ns), read
  // once per batch of requests.
  int64_t now_ns() const;
  // When this request arrived: the loop's clock (as now_ns) at the read
  // that brought its first byte. Earlier than now_ns() when the request
  // waited in the connection's buffer behind earlier ones (pipelining, a
  // deferred response before it); never later than the true arrival (when
  // several reads are buffered it may be an earlier read's time).
  int64_t arrival_ns() const { return arrival_ns_; }
  // Which loop runs this connection: 0 .. threads-1 (for per-thread metrics).
  int loop_index() const { return loop_index_; }

 private:
  friend class internal::ConnectionProtocol;
  Exchange(internal::ConnectionProtocol* protocol, const internal::LoopContext* loop,
           std::string* out, int loop_index)
      : protocol_(protocol), loop_(loop), out_(out), loop_index_(loop_index) {}

  Request request_;
  internal::ConnectionProtocol* protocol_;
  const internal::LoopContext* loop_;
  std::string* out_;
  int loop_index_;
  int64_t arrival_ns_ = 0;
  bool in_handle_ = false;
  bool deferred_ = false;
};

class Handler {
 public:
  virtual ~Handler() = default;
  // Called on the connection's loop thread, once per request, in order.
  // Must append one complete response to exchange.out() or call
  // exchange.Defer() (and complete the DeferredResponse later). Must not
  // block and must not throw.
  virtual void Handle(Exchange& exchange) = 0;
};

// The statuses the server answers with itself (PlanForProtocolError in
// edge/http_status.h); anything else it is asked for becomes a 500.
inline constexpr std::array<int, 6> kServerResponseStatuses = {400, 413, 414, 431, 500, 505};

// Index of `status` in kServerResponseStatuses (500's for unknown ones).
constexpr size_t ServerResponseSlot(int status) {
  for (size_t i = 0; i < kServerResponseStatuses.size(); ++i) {
    if (kServerResponseStatuses[i] == status) return i;
  }
  return 4;
}

// Why the server refused a request itself (see the header comment); the
// status follows from it (RequestRefusalStatus).
enum class RequestRefusal : uint8_t {
  kMalformed = 0,     // 400: syntax, line ends, control characters, NUL
  kObsFold,           // 400: a folded field line
  kTransferEncoding,  // 400: any Transfer-Encoding (the edge takes no bodies)
  kContentLength,     // 400: repeated, a list, or not 1*DIGIT
  kHost,              // 400: missing in HTTP/1.1, repeated, or malformed
  kBodyTooLarge,      // 413
  kLineTooLong,       // 414
  kHeadTooLarge,      // 431: over max_header_bytes
  kTooManyFields,     // 431: over max_header_fields
  kVersion,           // 505
};
inline constexpr size_t kRequestRefusalCount = 10;

constexpr int RequestRefusalStatus(RequestRefusal refusal) {
  switch (refusal) {
    case RequestRefusal::kBodyTooLarge:
      return 413;
    case RequestRefusal::kLineTooLong:
      return 414;
    case RequestRefusal::kHeadTooLarge:
    case RequestRefusal::kTooManyFields:
      return 431;
    case RequestRefusal::kVersion:
      return 505;
    default:
      return 400;
  }
}

// "malformed", "obs_fold", "transfer_encoding", "content_length", "host",
// "body_too_large", "line_too_long", "head_too_large", "too_many_fields",
// "version": for metric labels.
absl::string_view RequestRefusalName(RequestRefusal refusal);

// Counters since Start, summed over the loops when read.
struct HttpServerStats {
  uint64_t connections_accepted = 0;
  // Accepted and closed at once: over max_connections (or during Shutdown).
  uint64_t connections_refused = 0;
  // Accepted and closed at once: over max_connections_per_client.
  uint64_t connections_refused_per_client = 0;
  uint64_t requests = 0;           // handed to the handler
  uint64_t deferred_requests = 0;  // of which answered with Defer()
  // Requests answered by the server itself with 400/413/414/431/505, and the
  // same by reason (indexed by RequestRefusal).
  uint64_t protocol_errors = 0;
  std::array<uint64_t, kRequestRefusalCount> refused_requests{};
  // DeferredResponses dropped without Complete, and Handle calls that
  // neither answered nor deferred (both answered 500).
  uint64_t handler_errors = 0;
  uint64_t idle_timeouts = 0;     // keep-alive connection idle too long
  uint64_t request_timeouts = 0;  // request head/body not complete in time
  uint64_t write_timeouts = 0;    // client not reading its responses
  size_t open_connections = 0;
  // The limits in force (HttpServerOptions), for gauges.
  size_t max_connections = 0;
  size_t max_connections_per_client = 0;
  // Times a connection stopped handling requests because its unwritten
  // responses had reached max_output_bytes.
  uint64_t output_pauses = 0;
  // The most bytes of responses one connection held unwritten at once (the
  // largest over the loops).
  size_t peak_connection_output_bytes = 0;
  // Bytes of buffers (read buffer, output, kept head values) the open
  // connections hold now.
  size_t connection_buffer_bytes = 0;
  // Responses the server wrote itself (never seen by the handler), by
  // kServerResponseStatuses slot.
  std::array<uint64_t, kServerResponseStatuses.size()> server_responses{};
};

class HttpServer {
 public:
  // Validates the options, binds every loop's acceptor and starts the
  // threads. `handler` is not owned and must outlive the server.
  // Fails with INVALID_ARGUMENT for bad options or a host that is not an IP
  // address (or not one of this machine's), UNAVAILABLE if the port is in
  // use, PERMISSION_DENIED for a privileged port; the message names
  // host:port.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(HttpServerOptions options,
                                                           Handler* handler);
  // Shutdown(absl::ZeroDuration()) if still running.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The port listened on (the chosen one if options.port was 0).
  int port() const { return port_; }

  // Graceful stop: closes the acceptors (new connections are refused),
  // closes idle keep-alive connections at once, lets requests in progress
  // finish (deferred ones included: one deferred before the drain keeps the
  // Connection header its handler wrote; requests handled after it get
  // keep_alive false) and closes each connection once its responses are
  // written. Returns when every connection is closed, or when `grace` has
  // passed: then the rest are closed without their responses and
  // DeferredResponses still held become no-ops. The loops are stopped and
  // joined either way. Idempotent; from any thread but a loop thread.
  void Shutdown(absl::Duration grace);

  HttpServerStats Stats() const;

 private:
  explicit HttpServer(HttpServerOptions options);

  const HttpServerOptions options_;
  int port_ = 0;
  // Connections open over all loops, for max_connections.
  std::atomic<size_t> open_connections_{0};
  // Per client, for max_connections_per_client; null without that limit.
  std::unique_ptr<internal::ClientConnectionCounts> clients_;
  std::vector<std::unique_ptr<internal::EventLoop>> loops_;
  // std::mutex rather than absl::Mutex: TSan sees through it (this build's
  // abseil is not instrumented).
  std::mutex shutdown_mu_;
  bool stopped_ = false;  // guarded by shutdown_mu_
};

}  // namespace shortener::edge::http

#endif  // SHORTENER_EDGE_HTTP_HTTP_SERVER_H_
