// One event loop of the HTTP server (internal to edge_http): an io_context
// run by one thread, its acceptor, its connections, its clock and Date
// string, its timeout sweep and its counters.
//
// Timeouts: no timer per connection. Each connection keeps a deadline (idle,
// request or linger, and one for a pending write); a per-loop timer walks the
// connections every min(idle_timeout, header_timeout) / 4 (between 5 ms and
// 1 s) and closes the expired ones. So a timeout fires up to one period late.
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
#include "edge/http/http_server.h"
#include "edge/http/request_parser.h"
#include "edge/response_builder.h"

namespace shortener::edge::http::internal {

class Connection;

// What a DeferredResponse posts through: the loop's io_context while it may
// still run handlers, null once the loop is torn down. Shared, so that a
// DeferredResponse outliving the server finds it closed. (std::mutex, not
// absl::Mutex: TSan sees through it; this build's abseil is not
// instrumented.)
struct LoopGate {
  std::mutex mu;
  boost::asio::io_context* io_context = nullptr;  // guarded by mu
};

// Written by the loop thread only (relaxed load + store, no locked
// instruction), read by Stats() from any thread. On its own cache lines.
struct alignas(64) LoopCounters {
  std::atomic<uint64_t> accepted{0};
  std::atomic<uint64_t> refused{0};
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> deferred{0};
  std::atomic<uint64_t> protocol_errors{0};
  std::atomic<uint64_t> handler_errors{0};
  std::atomic<uint64_t> idle_timeouts{0};
  std::atomic<uint64_t> request_timeouts{0};
  std::atomic<uint64_t> write_timeouts{0};
  std::atomic<uint64_t> open{0};
  // Responses the server wrote itself, by kServerResponseStatuses slot.
  std::array<std::atomic<uint64_t>, kServerResponseStatuses.size()> server_responses{};
};

inline void Bump(std::atomic<uint64_t>& counter, int64_t by = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + static_cast<uint64_t>(by),
                std::memory_order_relaxed);
}

// Host and port as "127.0.0.1:80" or "[::1]:80", for messages.
std::string HostPort(const boost::asio::ip::tcp::endpoint& endpoint);

// OK if nothing listens on `endpoint` (a bind without SO_REUSEPORT works);
// the error Listen would give otherwise. Used before binding with
// SO_REUSEPORT, which would silently share a port with another
// SO_REUSEPORT listener of the same user.
absl::Status CheckPortFree(boost::asio::io_context& io_context,
                           const boost::asio::ip::tcp::endpoint& endpoint);

class EventLoop {
 public:
  // `options`, `handler` and `open_connections` (shared by all loops) must
  // outlive the loop.
  EventLoop(int index, const HttpServerOptions& options, Handler* handler,
            std::atomic<size_t>* open_connections);
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
  Handler* handler() const { return handler_; }
  const ParserLimits& limits() const { return limits_; }
  int index() const { return index_; }
  bool draining() const { return draining_; }
  LoopCounters& counters() { return counters_; }
  const std::shared_ptr<LoopGate>& gate() const { return gate_; }
  int64_t now_ns() const { return now_ns_; }
  absl::string_view http_date() const { return absl::string_view(date_, kHttpDateLength); }
  int64_t idle_timeout_ns() const { return idle_timeout_ns_; }
  int64_t header_timeout_ns() const { return header_timeout_ns_; }
  // Refreshes now_ns() and, when the second changed, http_date().
  void UpdateClock();
  // Deletes `connection` if it is closed with nothing pending.
  void DestroyIfDone(Connection* connection);

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
  Handler* const handler_;
  std::atomic<size_t>* const open_connections_;
  const ParserLimits limits_;
  const int64_t idle_timeout_ns_;
  const int64_t header_timeout_ns_;
  const std::chrono::milliseconds sweep_period_;

  LoopCounters counters_;
  boost::asio::io_context io_context_{1};
  boost::asio::ip::tcp::acceptor acceptor_{io_context_};
  boost::asio::steady_timer sweep_timer_{io_context_};
  // Re-arms accepting after an error such as EMFILE, instead of spinning.
  boost::asio::steady_timer accept_retry_timer_{io_context_};
  std::shared_ptr<LoopGate> gate_;
  std::thread thread_;

  Connection* connections_ = nullptr;  // intrusive list
  bool draining_ = false;
  // Set by the loop thread once draining closed every connection.
  std::mutex drained_mu_;
  std::condition_variable drained_cv_;
  bool drained_ = false;  // guarded by drained_mu_
  bool torn_down_ = false;

  int64_t now_ns_ = 0;
  std::time_t date_second_ = 0;
  char date_[kHttpDateLength] = {};
};

}  // namespace shortener::edge::http::internal

#endif  // SHORTENER_EDGE_HTTP_EVENT_LOOP_H_
