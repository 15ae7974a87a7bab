// One event loop of the HTTP server (internal to edge_http): an io_context
// run by one thread, its acceptor, its connections, its timeout sweep, and
// the LoopContext they share (clock, Date string, counters, limits).
//
// Timeouts: no timer per connection. Each connection keeps a deadline (idle,
// request or linger, and one for a pending write); a per-loop timer walks the
// connections every min(idle_timeout, header_timeout) / 4 (between 5 ms and
// 1 s) and closes the expired ones. So a timeout fires up to one period late.
// The same walk lets connections idle since the previous one shrink their
// buffers.
//
// Accepting: a new connection over max_connections (counted over all loops
// without a lock), or over max_connections_per_client (the shared
// ClientConnectionCounts, one lock per accept and per close), is closed at
// once without a response: answering would mean reading the request first
// (closing with unread input resets the connection and can destroy the
// answer), which is the work being shed; clients treat a closed connection
// as "try again later" either way.
//
// Thread safety: everything runs on the loop's thread except the methods
// marked otherwise, which HttpServer calls from its own thread.
#ifndef SHORTENER_EDGE_HTTP_EVENT_LOOP_H_
#define SHORTENER_EDGE_HTTP_EVENT_LOOP_H_

#include <array>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <ctime>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "edge/http/client_connection_counts.h"
#include "edge/http/http_server.h"
#include "edge/http/loop_context.h"

namespace shortener::edge::http::internal {

class Connection;

// Host and port as "127.0.0.1:80" or "[::1]:80", for messages.
std::string HostPort(const boost::asio::ip::tcp::endpoint& endpoint);

// OK if nothing listens on `endpoint` (a bind without SO_REUSEPORT works);
// the error Listen would give otherwise. Used before binding with
// SO_REUSEPORT, which would silently share a port with another
// SO_REUSEPORT listener of the same user.
absl::Status CheckPortFree(boost::asio::io_context& io_context,
                           const boost::asio::ip::tcp::endpoint& endpoint);

class EventLoop final : public DeferredSink {
 public:
  // `options`, `handler`, `open_connections` and `clients` (shared by all
  // loops; null without a per-client limit) must outlive the loop.
  EventLoop(int index, const HttpServerOptions& options, Handler* handler,
            std::atomic<size_t>* open_connections, ClientConnectionCounts* clients);
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // --- Called by HttpServer, from its thread. ---
  // Opens, binds and listens, before StartThread. Errors name host:port:
  // UNAVAILABLE (in use), PERMISSION_DENIED, INVALID_ARGUMENT (address not
  // local), INTERNAL.
  absl::Status Listen(const boost::asio::ip::tcp::endpoint& endpoint, bool reuse_port);
  int local_port() const;
  void StartThread();
  // Posts the start of draining (see HttpServer::Shutdown).
  void BeginDrain();
  // Waits until draining closed every connection, or `deadline`.
  void WaitDrained(absl::Time deadline);
  // Stops the io_context and joins the thread.
  void StopAndJoin();
  // After StopAndJoin: closes the gate and destroys the connections left.
  void Teardown();
  // Adds this loop's counters; any thread.
  void AddTo(HttpServerStats* stats) const;

  // --- For connections, on the loop thread. ---
  boost::asio::io_context& io_context() { return io_context_; }
  LoopContext& context() { return context_; }
  int64_t now_ns() const { return context_.now_ns; }
  int64_t idle_timeout_ns() const { return context_.idle_timeout_ns; }
  void UpdateClock() { context_.UpdateClock(); }
  // Deletes `connection` if it is closed with nothing pending.
  void DestroyIfDone(Connection* connection);

  // DeferredSink: posts the delivery to this loop's io_context.
  void Post(DeferredTarget* target, std::string bytes, bool completed) override;

 private:
  void Accept();
  void OnAccepted(boost::asio::ip::tcp::socket socket);
  void ScheduleSweep();
  void Sweep();
  void Drain();
  void Link(Connection* connection);
  void Unlink(Connection* connection);
  void NotifyIfDrained();

  const int index_;
  const HttpServerOptions& options_;
  std::atomic<size_t>* const open_connections_;
  ClientConnectionCounts* const clients_;
  const std::chrono::milliseconds sweep_period_;

  LoopContext context_;
  boost::asio::io_context io_context_{1};
  boost::asio::ip::tcp::acceptor acceptor_{io_context_};
  boost::asio::steady_timer sweep_timer_{io_context_};
  // Re-arms accepting after an error such as EMFILE, instead of spinning.
  boost::asio::steady_timer accept_retry_timer_{io_context_};
  std::thread thread_;

  Connection* connections_ = nullptr;  // intrusive list
  // Set by the loop thread once draining closed every connection.
  std::mutex drained_mu_;
  std::condition_variable drained_cv_;
  bool drained_ = false;  // guarded by drained_mu_
  bool torn_down_ = false;
};

}  // namespace shortener::edge::http::internal

#endif  // SHORTENER_EDGE_HTTP_EVENT_LOOP_H_
