#include "edge/http/connection.h"

#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>
#include <cstring>
#include <limits>
#include <utility>

#include "edge/http/event_loop.h"
#include "edge/http_status.h"
#include "edge/response_builder.h"

namespace shortener::edge::http::internal {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

constexpr size_t kInitialReadCapacity = 4 * 1024;
// Read only into at least this much room; compact or grow otherwise.
constexpr size_t kMinReadSpace = 1024;
constexpr size_t kReadSlack = 4 * 1024;
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
constexpr int64_t kLingerNs = 2'000'000'000;

bool WouldBlock(const error_code& ec) {
  return ec == asio::error::would_block || ec == asio::error::try_again;
}

}  // namespace

Connection::Connection(EventLoop* loop, asio::ip::tcp::socket socket, const PeerAddress& peer)
    : loop_(loop),
      socket_(std::move(socket)),
      exchange_(this, loop, &out_, loop->index()),
      read_capacity_(std::min(kInitialReadCapacity, loop->limits().max_header_bytes + kReadSlack)),
      max_read_capacity_(loop->limits().max_header_bytes + kReadSlack),
      write_deadline_ns_(kNever) {
  exchange_.request_.peer = peer;
  read_buffer_.reset(new char[read_capacity_]);
}

void Connection::Start() {
  deadline_ns_ = loop_->now_ns() + loop_->idle_timeout_ns();
  Continue();
}

void Connection::Continue() {
  if (closed_) return;
  if (!deferred_pending_ && !finishing_) Process();
  if (!out_.empty() && !write_pending_ && !WriteOut()) return;
  if (write_pending_ || deferred_pending_) return;  // resumed by their completion
  if (finishing_ && !lingering_) {
    if (peer_eof_ || !MayHaveUnreadInput()) return Close();
    StartLinger();
  }
  if (peer_eof_) return Close();  // not reached: Process finishes at EOF
  StartRead();
}

void Connection::Process() {
  while (!finishing_ && !deferred_pending_) {
    if (!request_in_progress_ && !BeginRequest()) return;
    if (read_begin_ == read_end_) {  // the request in progress needs more bytes
      if (peer_eof_) finishing_ = true;
      return;
    }
    if (!Parse()) return;
    if (parser_->is_done()) Dispatch();
  }
}

bool Connection::BeginRequest() {
  if (read_begin_ == read_end_) {
    if (peer_eof_ || loop_->draining()) {
      finishing_ = true;
    } else {
      deadline_ns_ = loop_->now_ns() + loop_->idle_timeout_ns();
    }
    return false;
  }
  request_in_progress_ = true;
  request_start_ = read_begin_;
  deadline_ns_ = loop_->now_ns() + loop_->header_timeout_ns();
  return true;
}

bool Connection::Parse() {
  const ParserLimits& limits = loop_->limits();
  if (!parser_) parser_.emplace(limits, &xff_storage_);
  // A head may span at most max_header_bytes from the request's first byte
  // (Beast's own limit counts from where each put() starts).
  size_t end = read_end_;
  if (!parser_->is_header_done()) end = std::min(end, request_start_ + limits.max_header_bytes);
  boost::beast::error_code ec;
  const size_t n =
      parser_->put(asio::const_buffer(read_buffer_.get() + read_begin_, end - read_begin_), ec);
  read_begin_ += n;
  if (!views_pinned_ && parser_->is_header_done() && !parser_->is_done()) {
    // A body to wait for: the buffer will be reused under the head.
    parser_->PinViews(&pinned_);
    views_pinned_ = true;
  }
  const absl::string_view received(read_buffer_.get() + request_start_, read_end_ - request_start_);
  if (ec == boost::beast::http::error::need_more) {
    if (!parser_->is_header_done() && (received.size() >= limits.max_header_bytes ||
                                       RequestLineTooLong(received, limits.max_request_line))) {
      Fail(StatusForParseError(boost::beast::http::error::header_limit, received,
                               limits.max_request_line));
    } else if (peer_eof_) {
      finishing_ = true;  // cut short: nothing to answer
    }
    return false;
  }
  if (ec) {
    Fail(StatusForParseError(ec, received, limits.max_request_line));
    return false;
  }
  return n > 0 || parser_->is_done();
}

void Connection::Dispatch() {
  const RequestParser& parser = *parser_;
  Request& request = exchange_.request_;
  request.method = parser.method();
  request.target = parser.target();
  request.x_forwarded_for = parser.x_forwarded_for();
  request.user_agent = parser.user_agent();
  request.referer = parser.referer();
  request.purpose = parser.purpose();
  request.sec_purpose = parser.sec_purpose();
  request.version = parser.http_version();
  request.keep_alive = parser.keep_alive() && !loop_->draining();
  LoopCounters& counters = loop_->counters();
  Bump(counters.requests);

  const size_t before = out_.size();
  exchange_.in_handle_ = true;
  exchange_.deferred_ = false;
  loop_->handler()->Handle(exchange_);
  exchange_.in_handle_ = false;

  if (exchange_.deferred_) {
    Bump(counters.deferred);
    deferred_pending_ = true;
    deferred_keep_alive_ = request.keep_alive;
  } else if (out_.size() == before) {
    Bump(counters.handler_errors);
    AppendServerError(500);
    finishing_ = true;
  } else if (!request.keep_alive) {
    finishing_ = true;
  }
  parser_.reset();
  views_pinned_ = false;
  request_in_progress_ = false;
}

void Connection::Fail(int status) {
  Bump(loop_->counters().protocol_errors);
  failed_ = true;
  AppendServerError(status);
  parser_.reset();
  request_in_progress_ = false;
  finishing_ = true;
}

void Connection::AppendServerError(int status) {
  ResponseOptions options;
  options.keep_alive = false;
  options.date = loop_->http_date();
  const ResponsePlan plan = PlanForProtocolError(status);
  Bump(loop_->counters().server_responses[ServerResponseSlot(plan.status)]);
  const size_t size = ResponseSize(plan, options);
  const size_t at = out_.size();
  out_.resize(at + size);
  WriteResponse(plan, options, out_.data() + at, size);
}

bool Connection::WriteOut() {
  error_code ec;
  const size_t n = socket_.write_some(asio::buffer(out_), ec);
  if (ec && !WouldBlock(ec)) {
    Close();
    return false;
  }
  if (n == out_.size()) {
    out_.clear();
    return true;
  }
  // The socket buffer is full: send the rest asynchronously (the strings
  // swap, so both keep their capacity) and stop reading until it is out.
  writing_.swap(out_);
  out_.clear();
  write_pending_ = true;
  write_deadline_ns_ = loop_->now_ns() + loop_->idle_timeout_ns();
  asio::async_write(socket_, asio::buffer(writing_.data() + n, writing_.size() - n),
                    [this](const error_code& write_ec, size_t) { OnWriteDone(write_ec); });
  return true;
}

void Connection::OnWriteDone(const error_code& ec) {
  write_pending_ = false;
  write_deadline_ns_ = kNever;
  writing_.clear();
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
  const size_t space = PrepareRead();
  // Cannot happen: a head is capped well below the capacity.
  if (space == 0) return Close();
  read_pending_ = true;
  // Asio tries the recv at once only if the last one filled its buffer or
  // epoll reported the socket readable since; otherwise the read is queued
  // without a system call. So a request costs one recv and one send.
  socket_.async_read_some(asio::buffer(read_buffer_.get() + read_end_, space),
                          [this](const error_code& ec, size_t n) { OnRead(ec, n); });
}

void Connection::OnRead(const error_code& ec, size_t n) {
  read_pending_ = false;
  if (!closed_) {
    if (ec == asio::error::eof && !lingering_ && !peer_eof_) {
      // Half-close: answer the complete requests received, then close.
      peer_eof_ = true;
      Continue();
    } else if (ec) {
      Close();
    } else {
      if (!lingering_) read_end_ += n;  // lingering: discarded
      loop_->UpdateClock();
      Continue();
    }
  }
  loop_->DestroyIfDone(this);
}

size_t Connection::PrepareRead() {
  if (lingering_) {
    read_begin_ = read_end_ = request_start_ = 0;
    return read_capacity_;
  }
  // The head of a request in progress is kept whole (its views point into
  // it); otherwise, and once the views are pinned, only unparsed bytes.
  const bool in_head = request_in_progress_ && !views_pinned_;
  const size_t keep_from = in_head ? request_start_ : read_begin_;
  if (keep_from == read_end_) {
    // Nothing to keep. (A started head always has bytes, so no views die.)
    read_begin_ = read_end_ = request_start_ = 0;
    return read_capacity_;
  }
  if (read_capacity_ - read_end_ >= kMinReadSpace) return read_capacity_ - read_end_;

  if (in_head) {
    // The parser holds views into the bytes about to move: parse the head
    // again from its first byte.
    parser_.reset();
    read_begin_ = keep_from;
  }
  const size_t kept = read_end_ - keep_from;
  if (read_capacity_ - kept < kMinReadSpace && read_capacity_ < max_read_capacity_) {
    std::unique_ptr<char[]> bigger(new char[max_read_capacity_]);
    std::memcpy(bigger.get(), read_buffer_.get() + keep_from, kept);
    read_buffer_ = std::move(bigger);
    read_capacity_ = max_read_capacity_;
  } else if (keep_from > 0) {
    std::memmove(read_buffer_.get(), read_buffer_.get() + keep_from, kept);
  }
  read_begin_ -= keep_from;
  request_start_ = request_start_ >= keep_from ? request_start_ - keep_from : 0;
  read_end_ = kept;
  return read_capacity_ - read_end_;
}

bool Connection::MayHaveUnreadInput() {
  if (failed_ || request_in_progress_ || read_begin_ != read_end_) return true;
  error_code ec;
  return socket_.available(ec) > 0 || ec;
}

void Connection::StartLinger() {
  lingering_ = true;
  parser_.reset();
  request_in_progress_ = false;
  error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
  deadline_ns_ = loop_->now_ns() + std::min(kLingerNs, loop_->idle_timeout_ns());
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
  const bool idle = !request_in_progress_ && !deferred_pending_ && !write_pending_ && !finishing_ &&
                    out_.empty() && read_begin_ == read_end_;
  // A busy connection sees draining() when its current request is done.
  if (idle) Close();
}

bool Connection::ExpireIfDue(int64_t now_ns) {
  if (closed_) return false;
  LoopCounters& counters = loop_->counters();
  if (write_pending_) {
    if (now_ns < write_deadline_ns_) return false;
    Bump(counters.write_timeouts);
  } else {
    // A deferred response has its own deadline (the handler's).
    if (deferred_pending_ || now_ns < deadline_ns_) return false;
    if (request_in_progress_) {
      Bump(counters.request_timeouts);
    } else if (!lingering_) {
      Bump(counters.idle_timeouts);
    }
  }
  Close();
  return true;
}

DeferredResponse Connection::Defer() {
  if (!exchange_.in_handle_ || exchange_.deferred_) return DeferredResponse();
  exchange_.deferred_ = true;
  return DeferredResponse(loop_->gate(), this);
}

void Connection::OnDeferredDone(std::string bytes, bool completed) {
  deferred_pending_ = false;
  if (!closed_) {
    loop_->UpdateClock();
    if (completed) {
      out_.append(bytes);
      if (!deferred_keep_alive_) finishing_ = true;
    } else {
      Bump(loop_->counters().handler_errors);
      AppendServerError(500);
      finishing_ = true;
    }
    Continue();
  }
  loop_->DestroyIfDone(this);
}

}  // namespace shortener::edge::http::internal
