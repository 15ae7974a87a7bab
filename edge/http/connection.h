// One client connection of the HTTP server (internal to edge_http): reads,
// parses and answers requests in order, keep-alive and pipelined.
//
// Flow: Continue() is the one driver. It handles every complete request in
// the read buffer (Process), writes all their responses with one
// non-blocking write (async_write only for what the socket buffer did not
// take), then starts the next async_read_some. One read, one write, at most
// one operation of each kind pending. Processing pauses while a response is
// deferred; reading pauses while an asynchronous write is pending
// (back-pressure on clients that do not read). A deferred response that
// completes during such a write lets the requests already in the read
// buffer be processed; their bytes queue behind the write, in order.
//
// Read buffer: a flat array, 4 KiB at first, grown once to
// max_header_bytes + 4 KiB if a request head or a pipelined batch needs it.
// A request head is parsed in place; Request's views point into it. When the
// buffer must be compacted in the middle of a request head, the parser is
// restarted on the moved bytes (rare: only a head split across reads at the
// end of the buffer); once a head is complete and its body has to be waited
// for, the views are copied out (PinViews) so the body can stream through.
//
// Closing: once the last response is written (after an error response, a
// Connection: close response, or at shutdown) the connection is closed at
// once if no input can be pending. Otherwise (a refused request whose body
// may still be coming, pipelined bytes after the last request, bytes in the
// socket) the server half-closes (FIN) and discards input until the client
// closes or 2 s pass: closing a socket with unread input sends a reset,
// which can destroy the last response before the client reads it.
//
// Lifetime: owned by its EventLoop; deleted (EventLoop::DestroyIfDone) once
// closed with no asynchronous operation and no deferred response pending, so
// completion handlers may capture `this`.
//
// Thread safety: loop thread only.
#ifndef SHORTENER_EDGE_HTTP_CONNECTION_H_
#define SHORTENER_EDGE_HTTP_CONNECTION_H_

#include <boost/asio/ip/tcp.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "edge/http/http_server.h"
#include "edge/http/request_parser.h"

namespace shortener::edge::http::internal {

class EventLoop;

class Connection {
 public:
  // `socket` is connected, non-blocking, with TCP_NODELAY.
  Connection(EventLoop* loop, boost::asio::ip::tcp::socket socket, const PeerAddress& peer);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // The caller (EventLoop) calls DestroyIfDone after each of these three.
  // Starts reading.
  void Start();
  // The server is shutting down: closes the connection if it is idle; a busy
  // one closes after its current responses.
  void Drain();
  // Closes the connection if its deadline has passed; true if it did.
  bool ExpireIfDue(int64_t now_ns);

  // Closed, with no asynchronous operation or deferred response pending.
  bool Done() const { return closed_ && !read_pending_ && !write_pending_ && !deferred_pending_; }

  // Exchange::Defer.
  DeferredResponse Defer();
  // A DeferredResponse resolved: posted to the loop. `completed` false: it
  // was dropped (answer 500). Calls DestroyIfDone.
  void OnDeferredDone(std::string bytes, bool completed);

  // The loop's intrusive list.
  Connection* prev = nullptr;
  Connection* next = nullptr;

 private:
  void Continue();
  // Handles the complete requests in the read buffer, in order, until one is
  // deferred, the connection is finishing, or more bytes are needed.
  void Process();
  // Starts a request at read_begin_ if there are bytes; false otherwise
  // (idle, or finishing at EOF or shutdown).
  bool BeginRequest();
  // Feeds the parser what is buffered of the request in progress. False if
  // it must wait for more bytes or the request failed (answered, finishing).
  bool Parse();
  void Dispatch();
  void Fail(int status);
  void AppendServerError(int status);
  bool WriteOut();
  void OnWriteDone(const boost::system::error_code& ec);
  void StartRead();
  void OnRead(const boost::system::error_code& ec, size_t n);
  size_t PrepareRead();
  // Whether closing now could reset the connection (unread input makes
  // close() send RST, which can destroy the responses not yet read).
  bool MayHaveUnreadInput();
  void StartLinger();
  void Close();

  EventLoop* const loop_;
  boost::asio::ip::tcp::socket socket_;
  Exchange exchange_;
  std::optional<RequestParser> parser_;

  // Read buffer: [0, read_begin_) consumed, [read_begin_, read_end_) not yet
  // parsed; the request in progress started at request_start_.
  std::unique_ptr<char[]> read_buffer_;
  size_t read_capacity_;
  const size_t max_read_capacity_;
  size_t read_begin_ = 0;
  size_t read_end_ = 0;
  size_t request_start_ = 0;

  std::string out_;          // responses not yet handed to the socket
  std::string writing_;      // responses an async_write is sending
  std::string xff_storage_;  // joined X-Forwarded-For
  std::string pinned_;       // request views while its body is read

  // Idle, request or linger deadline (not while a response is deferred);
  // the write deadline while an async_write is pending.
  int64_t deadline_ns_ = 0;
  int64_t write_deadline_ns_ = 0;

  bool request_in_progress_ = false;  // bytes of a request not answered yet
  bool views_pinned_ = false;
  bool deferred_pending_ = false;
  bool deferred_keep_alive_ = false;
  bool read_pending_ = false;
  bool write_pending_ = false;
  bool finishing_ = false;  // no further request: close once written
  bool failed_ = false;     // answered a request the server refused
  bool lingering_ = false;  // FIN sent, discarding input until EOF
  bool peer_eof_ = false;
  bool closed_ = false;
};

}  // namespace shortener::edge::http::internal

#endif  // SHORTENER_EDGE_HTTP_CONNECTION_H_
