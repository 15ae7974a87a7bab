#include "edge/http/connection.h"

#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/asio/write.hpp>
#include <limits>
#include <utility>

#include "edge/http/event_loop.h"

namespace shortener::edge::http::internal {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
constexpr int64_t kLingerNs = 2'000'000'000;

bool WouldBlock(const error_code& ec) {
  return ec == asio::error::would_block || ec == asio::error::try_again;
}

}  // namespace

Connection::Connection(EventLoop* loop, asio::ip::tcp::socket socket, const PeerAddress& peer,
                       bool counted_per_client)
    : loop_(loop),
      socket_(std::move(socket)),
      peer_(peer),
      counted_per_client_(counted_per_client),
      protocol_(&loop->context(), this, peer),
      write_deadline_ns_(kNever) {}

void Connection::Start() { Continue(); }

void Connection::Continue() {
  if (closed_) return;
  for (bool more = true; more;) {
    // More: stopped at max_output_bytes; go on once the output is out.
    more = protocol_.Process();
    if (!protocol_.output().empty() && !write_pending_ && !WriteOut()) return;
    if (write_pending_ || protocol_.deferred_pending()) return;  // resumed by their completion
  }
  if (protocol_.finishing() && !protocol_.discarding()) {
    if (protocol_.peer_eof() || !MayHaveUnreadInput()) return Close();
    StartLinger();
  }
  if (protocol_.peer_eof()) return Close();  // not reached: Process finishes at EOF
  StartRead();
}

bool Connection::WriteOut() {
  const std::string& out = protocol_.output();
  error_code ec;
  const size_t n = socket_.write_some(asio::buffer(out), ec);
  if (ec && !WouldBlock(ec)) {
    Close();
    return false;
  }
  if (n == out.size()) {
    protocol_.OutputWritten();
    return true;
  }
  // The socket buffer is full: send the rest asynchronously and stop
  // reading until it is out.
  const absl::string_view writing = protocol_.BeginAsyncWrite();
  write_pending_ = true;
  write_deadline_ns_ = loop_->now_ns() + loop_->idle_timeout_ns();
  asio::async_write(socket_, asio::buffer(writing.data() + n, writing.size() - n),
                    [this](const error_code& write_ec, size_t) { OnWriteDone(write_ec); });
  return true;
}

void Connection::OnWriteDone(const error_code& ec) {
  write_pending_ = false;
  write_deadline_ns_ = kNever;
  protocol_.AsyncWriteDone();
  if (!closed_) {
    if (ec) {
      Close();
    } else {
      loop_->UpdateClock();
      Continue();
    }
  }
  loop_->DestroyIfDone(this);
}

void Connection::StartRead() {
  const absl::Span<char> space = protocol_.ReadSpace();
  // Cannot happen: a head is capped well below the capacity.
  if (space.empty()) return Close();
  read_pending_ = true;
  // Asio tries the recv at once only if the last one filled its buffer or
  // epoll reported the socket readable since; otherwise the read is queued
  // without a system call. So a request costs one recv and one send.
  socket_.async_read_some(asio::buffer(space.data(), space.size()),
                          [this](const error_code& ec, size_t n) { OnRead(ec, n); });
}

void Connection::OnRead(const error_code& ec, size_t n) {
  read_pending_ = false;
  if (!closed_) {
    if (releasing_ && ec == asio::error::operation_aborted) {
      // Cancelled by ReleaseIdleBuffers: nothing was read.
      releasing_ = false;
      if (protocol_.Idle()) protocol_.ReleaseBuffers();
      StartRead();
    } else if (ec == asio::error::eof && !protocol_.discarding() && !protocol_.peer_eof()) {
      // Half-close: answer the complete requests received, then close.
      releasing_ = false;
      protocol_.ReceivedEof();
      Continue();
    } else if (ec) {
      Close();
    } else {
      releasing_ = false;
      protocol_.Received(n);
      loop_->UpdateClock();
      Continue();
    }
  }
  loop_->DestroyIfDone(this);
}

bool Connection::MayHaveUnreadInput() {
  if (protocol_.MayHaveUnreadInput()) return true;
  error_code ec;
  return socket_.available(ec) > 0 || ec;
}

void Connection::StartLinger() {
  protocol_.DiscardInput(std::min(kLingerNs, loop_->idle_timeout_ns()));
  error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
}

void Connection::Close() {
  if (closed_) return;
  closed_ = true;
  error_code ec;
  // Cancels a pending wait or write: their handlers still run (aborted).
  socket_.close(ec);
}

void Connection::Drain() {
  if (closed_) return;
  // A busy connection sees draining when its current request is done.
  if (protocol_.Idle() && !write_pending_) Close();
}

bool Connection::ExpireIfDue(int64_t now_ns) {
  if (closed_) return false;
  LoopCounters& counters = loop_->context().counters;
  if (write_pending_) {
    if (now_ns < write_deadline_ns_) return false;
    Bump(counters.write_timeouts);
  } else {
    // A deferred response has its own deadline (the handler's).
    if (protocol_.deferred_pending() || now_ns < protocol_.deadline_ns()) return false;
    if (protocol_.request_in_progress()) {
      Bump(counters.request_timeouts);
    } else if (!protocol_.discarding()) {
      Bump(counters.idle_timeouts);
    }
  }
  Close();
  return true;
}

void Connection::ReleaseIdleBuffers() {
  if (closed_ || write_pending_ || releasing_ || !protocol_.ShouldReleaseBuffers()) return;
  if (!read_pending_) return protocol_.ReleaseBuffers();
  // The pending read writes into the buffer: take it back first (OnRead
  // shrinks and reads again). If the read completed meanwhile, its bytes
  // are handled as usual and the buffers wait for the next idle period.
  releasing_ = true;
  error_code ec;
  socket_.cancel(ec);
}

void Connection::OnDeferredDone(std::string bytes, bool completed) {
  if (closed_) {
    protocol_.AbandonDeferred();
  } else {
    loop_->UpdateClock();
    protocol_.OnDeferredDone(std::move(bytes), completed);
    Continue();
  }
  loop_->DestroyIfDone(this);
}

}  // namespace shortener::edge::http::internal
