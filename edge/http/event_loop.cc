#include "edge/http/event_loop.h"

#include <pthread.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "edge/http/connection.h"

namespace shortener::edge::http::internal {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

using ReusePort = asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;

// The one translation of socket errors at startup into Status.
absl::Status ListenError(const error_code& ec, const tcp::endpoint& endpoint) {
  const std::string message =
      absl::StrCat("http server: cannot listen on ", HostPort(endpoint), ": ", ec.message());
  if (ec == asio::error::address_in_use) return absl::UnavailableError(message);
  if (ec == asio::error::access_denied || ec.value() == EPERM) {
    return absl::PermissionDeniedError(message);
  }
  if (ec.value() == EADDRNOTAVAIL || ec == asio::error::address_family_not_supported) {
    return absl::InvalidArgumentError(message);
  }
  return absl::InternalError(message);
}

PeerAddress ToPeer(const tcp::endpoint& endpoint) {
  PeerAddress peer;
  peer.port = endpoint.port();
  const asio::ip::address address = endpoint.address();
  if (address.is_v6()) {
    const asio::ip::address_v6 v6 = address.to_v6();
    if (v6.is_v4_mapped()) {
      const auto v4 = asio::ip::make_address_v4(asio::ip::v4_mapped, v6).to_bytes();
      std::copy(v4.begin(), v4.end(), peer.bytes.begin());
    } else {
      peer.is_v6 = true;
      const auto bytes = v6.to_bytes();
      std::copy(bytes.begin(), bytes.end(), peer.bytes.begin());
    }
  } else {
    const auto v4 = address.to_v4().to_bytes();
    std::copy(v4.begin(), v4.end(), peer.bytes.begin());
  }
  return peer;
}

std::chrono::milliseconds SweepPeriod(const HttpServerOptions& options) {
  const absl::Duration shortest = std::min(options.idle_timeout, options.header_timeout);
  const int64_t ms = absl::ToInt64Milliseconds(shortest / 4);
  return std::chrono::milliseconds(std::clamp<int64_t>(ms, 5, 1000));
}

}  // namespace

std::string HostPort(const tcp::endpoint& endpoint) {
  const asio::ip::address address = endpoint.address();
  if (address.is_v6()) return absl::StrCat("[", address.to_string(), "]:", endpoint.port());
  return absl::StrCat(address.to_string(), ":", endpoint.port());
}

absl::Status CheckPortFree(asio::io_context& io_context, const tcp::endpoint& endpoint) {
  tcp::acceptor probe(io_context);
  error_code ec;
  probe.open(endpoint.protocol(), ec);
  // SO_REUSEADDR: a TIME_WAIT left by an earlier run is no obstacle; a
  // listener is.
  if (!ec) probe.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) probe.bind(endpoint, ec);
  if (ec) return ListenError(ec, endpoint);
  return absl::OkStatus();
}

EventLoop::EventLoop(int index, const HttpServerOptions& options, Handler* handler,
                     std::atomic<size_t>* open_connections, ClientConnectionCounts* clients)
    : index_(index),
      options_(options),
      open_connections_(open_connections),
      clients_(clients),
      sweep_period_(SweepPeriod(options)),
      context_(index, options, handler, std::make_shared<LoopGate>()) {
  std::lock_guard<std::mutex> lock(context_.gate->mu);
  context_.gate->sink = this;
}

EventLoop::~EventLoop() {
  StopAndJoin();
  Teardown();
}

absl::Status EventLoop::Listen(const tcp::endpoint& endpoint, bool reuse_port) {
  error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec && reuse_port) acceptor_.set_option(ReusePort(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return ListenError(ec, endpoint);
  return absl::OkStatus();
}

int EventLoop::local_port() const {
  error_code ec;
  const tcp::endpoint endpoint = acceptor_.local_endpoint(ec);
  return ec ? 0 : endpoint.port();
}

void EventLoop::StartThread() {
  thread_ = std::thread([this] {
    const std::string name = absl::StrCat("edge-http-", index_);
    pthread_setname_np(pthread_self(), name.c_str());
    auto work = asio::make_work_guard(io_context_);
    UpdateClock();
    Accept();
    ScheduleSweep();
    io_context_.run();
  });
}

void EventLoop::BeginDrain() {
  asio::post(io_context_, [this] { Drain(); });
}

void EventLoop::WaitDrained(absl::Time deadline) {
  std::unique_lock<std::mutex> lock(drained_mu_);
  drained_cv_.wait_until(lock, absl::ToChronoTime(deadline), [this] { return drained_; });
}

void EventLoop::StopAndJoin() {
  io_context_.stop();
  if (thread_.joinable()) thread_.join();
}

void EventLoop::Teardown() {
  if (torn_down_) return;
  torn_down_ = true;
  {
    std::lock_guard<std::mutex> lock(context_.gate->mu);
    context_.gate->sink = nullptr;
  }
  error_code ec;
  acceptor_.close(ec);
  // The loop thread is gone: handlers still queued (which capture these
  // connections) are destroyed with the io_context, never run.
  while (Connection* connection = connections_) {
    Unlink(connection);
    delete connection;
  }
}

void EventLoop::AddTo(HttpServerStats* stats) const {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  const LoopCounters& counters = context_.counters;
  stats->connections_accepted += counters.accepted.load(kRelaxed);
  stats->connections_refused += counters.refused.load(kRelaxed);
  stats->connections_refused_per_client += counters.refused_per_client.load(kRelaxed);
  stats->requests += counters.requests.load(kRelaxed);
  stats->deferred_requests += counters.deferred.load(kRelaxed);
  stats->protocol_errors += counters.protocol_errors.load(kRelaxed);
  stats->handler_errors += counters.handler_errors.load(kRelaxed);
  stats->idle_timeouts += counters.idle_timeouts.load(kRelaxed);
  stats->request_timeouts += counters.request_timeouts.load(kRelaxed);
  stats->write_timeouts += counters.write_timeouts.load(kRelaxed);
  stats->open_connections += counters.open.load(kRelaxed);
  stats->output_pauses += counters.output_pauses.load(kRelaxed);
  stats->peak_connection_output_bytes =
      std::max<size_t>(stats->peak_connection_output_bytes, counters.peak_output.load(kRelaxed));
  stats->connection_buffer_bytes += counters.buffer_bytes.load(kRelaxed);
  for (size_t i = 0; i < kRequestRefusalCount; ++i) {
    stats->refused_requests[i] += counters.refused_requests[i].load(kRelaxed);
  }
  for (size_t i = 0; i < kServerResponseStatuses.size(); ++i) {
    stats->server_responses[i] += counters.server_responses[i].load(kRelaxed);
  }
}

void EventLoop::Post(DeferredTarget* target, std::string bytes, bool completed) {
  asio::post(io_context_, [target, bytes = std::move(bytes), completed]() mutable {
    target->OnDeferredDone(std::move(bytes), completed);
  });
}

void EventLoop::DestroyIfDone(Connection* connection) {
  if (!connection->Done()) return;
  Unlink(connection);
  delete connection;
  NotifyIfDrained();
}

void EventLoop::Accept() {
  acceptor_.async_accept([this](const error_code& ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      // EMFILE and the like: try again shortly rather than spin.
      accept_retry_timer_.expires_after(std::chrono::milliseconds(50));
      accept_retry_timer_.async_wait([this](const error_code& timer_ec) {
        if (!timer_ec && acceptor_.is_open()) Accept();
      });
      return;
    }
    OnAccepted(std::move(socket));
    Accept();
  });
}

void EventLoop::OnAccepted(tcp::socket socket) {
  LoopCounters& counters = context_.counters;
  error_code ec;
  if (context_.draining ||
      open_connections_->load(std::memory_order_relaxed) >= options_.max_connections) {
    Bump(counters.refused);
    socket.close(ec);
    return;
  }
  const tcp::endpoint remote = socket.remote_endpoint(ec);
  if (ec) return;  // gone already
  const PeerAddress peer = ToPeer(remote);
  bool counted = false;
  if (clients_ != nullptr &&
      !(options_.exempt_from_client_limit && options_.exempt_from_client_limit(peer))) {
    if (!clients_->TryAdd(peer)) {
      Bump(counters.refused_per_client);
      socket.close(ec);
      return;
    }
    counted = true;
  }
  socket.set_option(tcp::no_delay(true), ec);
  if (!ec) socket.non_blocking(true, ec);
  if (ec) {
    if (counted) clients_->Remove(peer);
    return;
  }
  Bump(counters.accepted);
  UpdateClock();
  auto* connection = new Connection(this, std::move(socket), peer, counted);
  Link(connection);
  connection->Start();
  DestroyIfDone(connection);
}

void EventLoop::ScheduleSweep() {
  sweep_timer_.expires_after(sweep_period_);
  sweep_timer_.async_wait([this](const error_code& ec) {
    if (ec) return;
    Sweep();
    ScheduleSweep();
  });
}

void EventLoop::Sweep() {
  UpdateClock();
  for (Connection* connection = connections_; connection != nullptr;) {
    Connection* next = connection->next;
    if (!connection->ExpireIfDue(context_.now_ns)) connection->ReleaseIdleBuffers();
    DestroyIfDone(connection);
    connection = next;
  }
}

void EventLoop::Drain() {
  context_.draining = true;
  error_code ec;
  acceptor_.close(ec);
  accept_retry_timer_.cancel();
  UpdateClock();
  for (Connection* connection = connections_; connection != nullptr;) {
    Connection* next = connection->next;
    connection->Drain();
    DestroyIfDone(connection);
    connection = next;
  }
  NotifyIfDrained();
}

void EventLoop::Link(Connection* connection) {
  connection->prev = nullptr;
  connection->next = connections_;
  if (connections_ != nullptr) connections_->prev = connection;
  connections_ = connection;
  open_connections_->fetch_add(1, std::memory_order_relaxed);
  Bump(context_.counters.open);
}

void EventLoop::Unlink(Connection* connection) {
  if (connection->prev != nullptr) {
    connection->prev->next = connection->next;
  } else {
    connections_ = connection->next;
  }
  if (connection->next != nullptr) connection->next->prev = connection->prev;
  connection->prev = connection->next = nullptr;
  open_connections_->fetch_sub(1, std::memory_order_relaxed);
  if (connection->counted_per_client()) clients_->Remove(connection->peer());
  Bump(context_.counters.open, -1);
}

void EventLoop::NotifyIfDrained() {
  if (!context_.draining || connections_ != nullptr) return;
  std::lock_guard<std::mutex> lock(drained_mu_);
  drained_ = true;
  drained_cv_.notify_all();
}

}  // namespace shortener::edge::http::internal
