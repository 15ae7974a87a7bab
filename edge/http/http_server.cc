#include "edge/http/http_server.h"

#include <boost/asio/ip/address.hpp>
#include <mutex>
#include <utility>

#include "absl/memory/memory.h"
#include "absl/strings/str_cat.h"
#include "edge/http/client_connection_counts.h"
#include "edge/http/connection_protocol.h"
#include "edge/http/event_loop.h"
#include "edge/http/loop_context.h"

namespace shortener::edge::http {
namespace {

absl::Status ValidateOptions(const HttpServerOptions& options, const Handler* handler) {
  auto bad = [](auto... pieces) {
    return absl::InvalidArgumentError(absl::StrCat("http server: ", pieces...));
  };
  if (handler == nullptr) return bad("a handler is required");
  if (options.port < 0 || options.port > 65535) {
    return bad("port must be in 0..65535, got ", options.port);
  }
  if (options.threads < 1 || options.threads > 256) {
    return bad("threads must be in 1..256, got ", options.threads);
  }
  if (options.max_request_line < 16) {
    return bad("max_request_line must be at least 16, got ", options.max_request_line);
  }
  if (options.max_header_bytes < 64 || options.max_header_bytes > (size_t{1} << 30)) {
    return bad("max_header_bytes must be in 64..2^30, got ", options.max_header_bytes);
  }
  if (options.idle_timeout <= absl::ZeroDuration()) {
    return bad("idle_timeout must be positive, got ", absl::FormatDuration(options.idle_timeout));
  }
  if (options.header_timeout <= absl::ZeroDuration()) {
    return bad("header_timeout must be positive, got ",
               absl::FormatDuration(options.header_timeout));
  }
  if (options.max_header_fields < 1) return bad("max_header_fields must be at least 1");
  if (options.max_output_bytes < 1) return bad("max_output_bytes must be at least 1");
  if (options.max_connections < 1) return bad("max_connections must be at least 1");
  return absl::OkStatus();
}

}  // namespace

HttpServer::HttpServer(HttpServerOptions options) : options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(HttpServerOptions options,
                                                              Handler* handler) {
  if (absl::Status valid = ValidateOptions(options, handler); !valid.ok()) return valid;
  boost::system::error_code ec;
  const boost::asio::ip::address address = boost::asio::ip::make_address(options.host, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("http server: host \"", options.host, "\" is not an IP address"));
  }
  auto server = absl::WrapUnique(new HttpServer(std::move(options)));
  if (server->options_.max_connections_per_client > 0) {
    server->clients_ = std::make_unique<internal::ClientConnectionCounts>(
        server->options_.max_connections_per_client);
  }
  const int threads = server->options_.threads;
  for (int i = 0; i < threads; ++i) {
    server->loops_.push_back(std::make_unique<internal::EventLoop>(
        i, server->options_, handler, &server->open_connections_, server->clients_.get()));
  }
  // One listener: no SO_REUSEPORT, so the bind itself says whether the port
  // is taken. Several: check first, SO_REUSEPORT would share it silently.
  const bool reuse_port = threads > 1;
  uint16_t port = static_cast<uint16_t>(server->options_.port);
  if (reuse_port && port != 0) {
    absl::Status free = internal::CheckPortFree(server->loops_[0]->io_context(),
                                                boost::asio::ip::tcp::endpoint(address, port));
    if (!free.ok()) return free;
  }
  for (auto& loop : server->loops_) {
    absl::Status listening =
        loop->Listen(boost::asio::ip::tcp::endpoint(address, port), reuse_port);
    if (!listening.ok()) return listening;
    port = static_cast<uint16_t>(loop->local_port());  // the chosen one, if 0 was asked
  }
  server->port_ = port;
  for (auto& loop : server->loops_) loop->StartThread();
  return server;
}

HttpServer::~HttpServer() { Shutdown(absl::ZeroDuration()); }

void HttpServer::Shutdown(absl::Duration grace) {
  std::lock_guard<std::mutex> lock(shutdown_mu_);
  if (stopped_) return;
  stopped_ = true;
  const absl::Time deadline = absl::Now() + grace;
  for (auto& loop : loops_) loop->BeginDrain();
  for (auto& loop : loops_) loop->WaitDrained(deadline);
  for (auto& loop : loops_) loop->StopAndJoin();
  for (auto& loop : loops_) loop->Teardown();
}

HttpServerStats HttpServer::Stats() const {
  HttpServerStats stats;
  stats.max_connections = options_.max_connections;
  stats.max_connections_per_client = options_.max_connections_per_client;
  for (const auto& loop : loops_) loop->AddTo(&stats);
  return stats;
}

// --- Exchange and DeferredResponse (public API) ---

DeferredResponse Exchange::Defer() { return protocol_->Defer(); }

absl::string_view Exchange::http_date() const { return loop_->http_date(); }

int64_t Exchange::now_ns() const { return loop_->now_ns; }

DeferredResponse::DeferredResponse(std::shared_ptr<internal::LoopGate> gate,
                                   internal::DeferredTarget* target)
    : gate_(std::move(gate)), target_(target) {}

DeferredResponse::DeferredResponse(DeferredResponse&& other) noexcept
    : gate_(std::move(other.gate_)), target_(std::exchange(other.target_, nullptr)) {}

DeferredResponse& DeferredResponse::operator=(DeferredResponse&& other) noexcept {
  if (this != &other) {
    Resolve(std::string(), false);
    gate_ = std::move(other.gate_);
    target_ = std::exchange(other.target_, nullptr);
  }
  return *this;
}

DeferredResponse::~DeferredResponse() { Resolve(std::string(), false); }

void DeferredResponse::Complete(absl::string_view response_bytes) {
  if (gate_ == nullptr) return;
  Resolve(std::string(response_bytes), true);
}

void DeferredResponse::Resolve(std::string bytes, bool completed) {
  std::shared_ptr<internal::LoopGate> gate = std::move(gate_);
  internal::DeferredTarget* target = std::exchange(target_, nullptr);
  if (gate == nullptr) return;
  std::lock_guard<std::mutex> lock(gate->mu);
  // Null once the loop is torn down: the connection is gone.
  if (gate->sink == nullptr) return;
  gate->sink->Post(target, std::move(bytes), completed);
}

}  // namespace shortener::edge::http
