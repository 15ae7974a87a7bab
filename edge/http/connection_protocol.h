// The protocol of one HTTP server connection without its socket (internal
// to edge_http): bytes in, requests to the handler in order, response bytes
// out; keep-alive, pipelining, deferred responses, the server's own error
// responses, the limits. Connection (connection.h) drives it from a socket
// on an event loop; tests and the fuzz target drive it directly.
//
// Driving it: read into ReadSpace() and report Received(n) (or
// ReceivedEof()); call Process(); write output() and report OutputWritten()
// (or, when the transport takes only part of it, BeginAsyncWrite() and
// later AsyncWriteDone()); repeat. Process() returns true when it stopped
// only because the unwritten output reached max_output_bytes: call it again
// once output is written. A deferred response comes back through the
// LoopGate to the owner (a DeferredTarget), which hands it to
// OnDeferredDone and calls Process() again.
//
// Read buffer: a flat array, 4 KiB at first, grown once to
// max_header_bytes + 4 KiB if a request head or a pipelined batch needs it.
// A head is parsed in place; what Request shows is copied into a RequestHead
// the protocol owns. While a head is incomplete its bytes are kept from its
// first one (the header limits count from there); when the buffer must be
// compacted in the middle of a head, the parser is restarted on the moved
// bytes (rare: only a head split across reads at the end of the buffer).
//
// Output: out_ collects responses; an asynchronous write sends from
// writing_ (swapped in, so out_ may grow meanwhile without moving the bytes
// being sent). No request is handled while out_ and writing_ together hold
// max_output_bytes or more. A buffer of more than 4 * max_output_bytes is
// freed once written; ReleaseBuffers() returns grown buffers to their
// small sizes after an idle period.
//
// Thread safety: loop thread only.
#ifndef SHORTENER_EDGE_HTTP_CONNECTION_PROTOCOL_H_
#define SHORTENER_EDGE_HTTP_CONNECTION_PROTOCOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "edge/http/http_server.h"
#include "edge/http/loop_context.h"
#include "edge/http/request_parser.h"

namespace shortener::edge::http::internal {

class ConnectionProtocol {
 public:
  // `loop` and `owner` (which receives this connection's deferred responses)
  // must outlive the protocol. Sets the idle deadline from loop->now_ns.
  ConnectionProtocol(LoopContext* loop, DeferredTarget* owner, const PeerAddress& peer);
  // Takes its buffers out of the loop's buffer_bytes gauge.
  ~ConnectionProtocol();
  ConnectionProtocol(const ConnectionProtocol&) = delete;
  ConnectionProtocol& operator=(const ConnectionProtocol&) = delete;

  // --- Input ---
  // Where the next bytes go (compacting or growing the buffer first). Stable
  // until Received, ReleaseBuffers or destruction. Empty only if the buffer
  // is full of one request, which the limits rule out.
  absl::Span<char> ReadSpace();
  // `n` bytes were written at the start of ReadSpace(); ignored while
  // discarding().
  void Received(size_t n);
  // The peer will send nothing more (half-close): the complete requests
  // received are answered, then the connection finishes.
  void ReceivedEof();

  // --- Requests ---
  // Handles the complete requests received, in order, until one is
  // deferred, the connection is finishing, more bytes are needed, or the
  // unwritten output reaches max_output_bytes; true only in the last case.
  bool Process();
  // Exchange::Defer.
  DeferredResponse Defer();
  // The deferred response came back (`completed` false: dropped, answer
  // 500). The caller then calls Process() again.
  void OnDeferredDone(std::string bytes, bool completed);
  // The deferred response came back after the connection was closed.
  void AbandonDeferred() { deferred_pending_ = false; }

  // --- Output ---
  // Responses not yet handed to the transport (appended in request order).
  const std::string& output() const { return out_; }
  // All of output() was written.
  void OutputWritten();
  // Moves output() into the write buffer and returns it, unchanged until
  // AsyncWriteDone; output() starts empty again behind it.
  absl::string_view BeginAsyncWrite();
  void AsyncWriteDone();

  // --- State ---
  // No further request will be handled: close once the output is written.
  bool finishing() const { return finishing_; }
  bool deferred_pending() const { return deferred_pending_; }
  bool request_in_progress() const { return request_in_progress_; }
  bool peer_eof() const { return peer_eof_; }
  // Whether input may be left unread: a refused request (its body may be
  // coming), a request cut short, or bytes after the last one.
  bool MayHaveUnreadInput() const {
    return failed_ || request_in_progress_ || read_begin_ != read_end_;
  }
  // From now on input is read and thrown away (a connection lingering after
  // its last response); the deadline becomes now + `linger_ns`.
  void DiscardInput(int64_t linger_ns);
  bool discarding() const { return discarding_; }
  // Nothing in progress, buffered, deferred or unwritten, not finishing.
  bool Idle() const;
  // The idle deadline between requests, the header deadline during one, the
  // linger deadline while discarding (loop->now_ns based). Not meaningful
  // while a response is deferred.
  int64_t deadline_ns() const { return deadline_ns_; }

  // --- Memory ---
  // Call once per sweep period: true if no request started since the
  // previous call, the connection is Idle() and a buffer is larger than its
  // small size. Starts the next period.
  bool ShouldReleaseBuffers();
  // Returns the read buffer to its initial size and frees grown output and
  // head buffers. Only while Idle() and with no read into ReadSpace()
  // pending.
  void ReleaseBuffers();
  // Bytes of buffers held now (read buffer, output, head values).
  size_t buffer_bytes() const;

 private:
  bool BeginRequest();
  bool Parse();
  void Dispatch();
  void Fail(RequestRefusal refusal);
  // "100 Continue" for a kept body the client waits to send.
  void MaybeSendContinue();
  void AppendServerError(int status);
  void ReleaseIfHuge(std::string& buffer);
  // Updates the loop's peak output and buffer_bytes gauge.
  void Account();

  LoopContext* const loop_;
  DeferredTarget* const owner_;
  Exchange exchange_;
  RequestHead head_;
  std::optional<RequestParser> parser_;

  // Read buffer: [0, read_begin_) consumed, [read_begin_, read_end_) not yet
  // parsed; the request in progress started at request_start_.
  std::unique_ptr<char[]> read_buffer_;
  const size_t initial_read_capacity_;
  const size_t max_read_capacity_;
  size_t read_capacity_;
  size_t read_begin_ = 0;
  size_t read_end_ = 0;
  size_t request_start_ = 0;

  std::string out_;      // responses not yet handed to the transport
  std::string writing_;  // responses an asynchronous write is sending

  // Arrival times (Exchange::arrival_ns): the loop's clock at the latest
  // read and where its bytes start, and at the earliest read whose bytes
  // may still be unparsed. Two marks, not one per read: a request that
  // began before the latest read gets the earlier time, never a later one.
  int64_t last_read_ns_ = 0;
  size_t last_read_offset_ = 0;
  int64_t unparsed_since_ns_ = 0;

  int64_t deadline_ns_ = 0;
  size_t accounted_bytes_ = 0;  // this connection's share of buffer_bytes

  bool request_in_progress_ = false;  // bytes of a request not answered yet
  bool deferred_pending_ = false;
  bool deferred_keep_alive_ = false;
  bool finishing_ = false;      // no further request: close once written
  bool failed_ = false;         // answered a request the server refused
  bool continue_sent_ = false;  // "100 Continue" sent for the request in progress
  bool discarding_ = false;
  bool peer_eof_ = false;
  bool active_ = false;  // a request started since the last sweep
};

}  // namespace shortener::edge::http::internal

#endif  // SHORTENER_EDGE_HTTP_CONNECTION_PROTOCOL_H_
