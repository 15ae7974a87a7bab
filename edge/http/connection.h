// One client connection of the HTTP server (internal to edge_http): drives a
// ConnectionProtocol (connection_protocol.h: parsing, the handler,
// responses, limits) from a socket on an event loop.
//
// Flow: Continue() is the one driver. It lets the protocol handle every
// complete request in the read buffer, writes all their responses with one
// non-blocking write (async_write only for what the socket buffer did not
// take), then starts the next async_read_some. One read, one write, at most
// one operation of each kind pending. Processing pauses while a response is
// deferred or the unwritten output is at max_output_bytes; reading pauses
// while an asynchronous write is pending (back-pressure on clients that do
// not read). A deferred response that completes during such a write lets
// the requests already in the read buffer be processed; their bytes queue
// behind the write, in order, up to max_output_bytes.
//
// Closing: once the last response is written (after an error response, a
// Connection: close response, or at shutdown) the connection is closed at
// once if no input can be pending. Otherwise (a refused request whose body
// may still be coming, pipelined bytes after the last request, bytes in the
// socket) the server half-closes (FIN) and discards input until the client
// closes or 2 s pass: closing a socket with unread input sends a reset,
// which can destroy the last response before the client reads it.
//
// Memory: the loop's sweep calls ReleaseIdleBuffers; a connection idle since
// the previous sweep with grown buffers cancels its pending read (the read
// buffer must not move under it), shrinks them, and reads again.
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
#include <string>

#include "edge/http/connection_protocol.h"
#include "edge/http/http_server.h"
#include "edge/http/loop_context.h"

namespace shortener::edge::http::internal {

class EventLoop;

class Connection final : public DeferredTarget {
 public:
  // `socket` is connected, non-blocking, with TCP_NODELAY. `counted_per_client`:
  // the connection holds a slot of its peer in ClientConnectionCounts.
  Connection(EventLoop* loop, boost::asio::ip::tcp::socket socket, const PeerAddress& peer,
             bool counted_per_client);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // The caller (EventLoop) calls DestroyIfDone after each of these four.
  // Starts reading.
  void Start();
  // The server is shutting down: closes the connection if it is idle; a busy
  // one closes after its current responses.
  void Drain();
  // Closes the connection if its deadline has passed; true if it did.
  bool ExpireIfDue(int64_t now_ns);
  // Once per sweep: shrinks buffers that grew for a burst, once idle.
  void ReleaseIdleBuffers();

  // Closed, with no asynchronous operation or deferred response pending.
  bool Done() const {
    return closed_ && !read_pending_ && !write_pending_ && !protocol_.deferred_pending();
  }

  // DeferredTarget: a DeferredResponse resolved (posted to the loop). Calls
  // DestroyIfDone.
  void OnDeferredDone(std::string bytes, bool completed) override;

  const PeerAddress& peer() const { return peer_; }
  bool counted_per_client() const { return counted_per_client_; }

  // The loop's intrusive list.
  Connection* prev = nullptr;
  Connection* next = nullptr;

 private:
  void Continue();
  bool WriteOut();
  void OnWriteDone(const boost::system::error_code& ec);
  void StartRead();
  void OnRead(const boost::system::error_code& ec, size_t n);
  // Whether closing now could reset the connection (unread input makes
  // close() send RST, which can destroy the responses not yet read).
  bool MayHaveUnreadInput();
  void StartLinger();
  void Close();

  EventLoop* const loop_;
  boost::asio::ip::tcp::socket socket_;
  const PeerAddress peer_;
  const bool counted_per_client_;
  ConnectionProtocol protocol_;

  int64_t write_deadline_ns_;  // while an async_write is pending
  bool read_pending_ = false;
  bool write_pending_ = false;
  bool releasing_ = false;  // the pending read was cancelled to shrink buffers
  bool closed_ = false;
};

}  // namespace shortener::edge::http::internal

#endif  // SHORTENER_EDGE_HTTP_CONNECTION_H_
