#include "edge/http/connection_protocol.h"

#include <algorithm>
#include <boost/beast/http/error.hpp>
#include <cstring>
#include <utility>

#include "edge/http_status.h"
#include "edge/response_builder.h"

namespace shortener::edge::http::internal {
namespace {

constexpr size_t kInitialReadCapacity = 4 * 1024;
// Read only into at least this much room; compact or grow otherwise.
constexpr size_t kMinReadSpace = 1024;
constexpr size_t kReadSlack = 4 * 1024;
// After an idle period, output buffers over this are freed, and head values
// over kIdleHeadValueCapacity (a browser's User-Agent is 100-300 bytes).
constexpr size_t kIdleOutputCapacity = 4 * 1024;
constexpr size_t kIdleHeadValueCapacity = 1024;

}  // namespace

ConnectionProtocol::ConnectionProtocol(LoopContext* loop, DeferredTarget* owner,
                                       const PeerAddress& peer)
    : loop_(loop),
      owner_(owner),
      exchange_(this, loop, &out_, loop->index),
      initial_read_capacity_(
          std::min(kInitialReadCapacity, loop->limits.max_header_bytes + kReadSlack)),
      max_read_capacity_(loop->limits.max_header_bytes + kReadSlack),
      read_capacity_(initial_read_capacity_),
      deadline_ns_(loop->now_ns + loop->idle_timeout_ns) {
  exchange_.request_.peer = peer;
  read_buffer_.reset(new char[read_capacity_]);
  Account();
}

ConnectionProtocol::~ConnectionProtocol() {
  Bump(loop_->counters.buffer_bytes, -static_cast<int64_t>(accounted_bytes_));
}

bool ConnectionProtocol::Process() {
  bool paused = false;
  while (!finishing_ && !deferred_pending_) {
    if (read_begin_ != read_end_ && out_.size() + writing_.size() >= loop_->max_output_bytes) {
      // Stop here, and so stop reading: the client gets no further answer
      // until it has read enough of these.
      Bump(loop_->counters.output_pauses);
      paused = true;
      break;
    }
    if (!request_in_progress_ && !BeginRequest()) break;
    if (read_begin_ == read_end_) {  // the request in progress needs more bytes
      if (peer_eof_) finishing_ = true;
      break;
    }
    if (!Parse()) break;
    if (parser_->is_done()) Dispatch();
  }
  Account();
  return paused;
}

bool ConnectionProtocol::BeginRequest() {
  if (read_begin_ == read_end_) {
    if (peer_eof_ || loop_->draining) {
      finishing_ = true;
    } else {
      deadline_ns_ = loop_->now_ns + loop_->idle_timeout_ns;
    }
    return false;
  }
  request_in_progress_ = true;
  continue_sent_ = false;
  active_ = true;
  request_start_ = read_begin_;
  if (request_start_ >= last_read_offset_) {
    // Everything unparsed came with the latest read.
    unparsed_since_ns_ = last_read_ns_;
  }
  exchange_.arrival_ns_ = unparsed_since_ns_;
  deadline_ns_ = loop_->now_ns + loop_->header_timeout_ns;
  return true;
}

bool ConnectionProtocol::Parse() {
  const ParserLimits& limits = loop_->limits;
  if (!parser_) parser_.emplace(limits, &head_);
  // A head may span at most max_header_bytes from the request's first byte
  // (Beast's own limit counts from where each put() starts).
  size_t end = read_end_;
  if (!parser_->is_header_done()) end = std::min(end, request_start_ + limits.max_header_bytes);
  boost::beast::error_code ec;
  const size_t n =
      parser_->Put(absl::string_view(read_buffer_.get() + read_begin_, end - read_begin_), ec);
  read_begin_ += n;
  const absl::string_view received(read_buffer_.get() + request_start_, read_end_ - request_start_);
  if (!ec || ec == boost::beast::http::error::need_more) MaybeSendContinue();
  if (ec == boost::beast::http::error::need_more) {
    if (!parser_->is_header_done() && (received.size() >= limits.max_header_bytes ||
                                       RequestLineTooLong(received, limits.max_request_line))) {
      Fail(RefusalForParseError(boost::beast::http::error::header_limit, received,
                                limits.max_request_line));
    } else if (peer_eof_) {
      finishing_ = true;  // cut short: nothing to answer
    }
    return false;
  }
  if (ec) {
    Fail(parser_->RefusalFor(ec, received));
    return false;
  }
  return n > 0 || parser_->is_done();
}

void ConnectionProtocol::Dispatch() {
  const RequestParser& parser = *parser_;
  Request& request = exchange_.request_;
  request.method = parser.method();
  request.target = parser.target();
  request.x_forwarded_for = parser.x_forwarded_for();
  request.user_agent = parser.user_agent();
  request.referer = parser.referer();
  request.purpose = parser.purpose();
  request.sec_purpose = parser.sec_purpose();
  request.authorization = parser.authorization();
  request.content_type = parser.content_type();
  request.body = parser.body();
  request.version = parser.http_version();
  request.keep_alive = parser.keep_alive() && !loop_->draining;
  LoopCounters& counters = loop_->counters;
  Bump(counters.requests);

  const size_t before = out_.size();
  exchange_.in_handle_ = true;
  exchange_.deferred_ = false;
  loop_->handler->Handle(exchange_);
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
  request_in_progress_ = false;
}

void ConnectionProtocol::MaybeSendContinue() {
  // RFC 9110 10.1.1: the head was accepted and the body is wanted. Only
  // where bodies are kept; at most once per request.
  if (!loop_->limits.keep_body || continue_sent_ || !parser_->is_header_done() ||
      parser_->is_done() || !parser_->expect_continue() || parser_->http_version() != 11) {
    return;
  }
  continue_sent_ = true;
  out_.append("HTTP/1.1 100 Continue\r\n\r\n");
}

void ConnectionProtocol::Fail(RequestRefusal refusal) {
  LoopCounters& counters = loop_->counters;
  Bump(counters.protocol_errors);
  Bump(counters.refused_requests[static_cast<size_t>(refusal)]);
  failed_ = true;
  AppendServerError(RequestRefusalStatus(refusal));
  parser_.reset();
  request_in_progress_ = false;
  finishing_ = true;
}

void ConnectionProtocol::AppendServerError(int status) {
  ResponseOptions options;
  options.keep_alive = false;
  options.date = loop_->http_date();
  const ResponsePlan plan = PlanForProtocolError(status);
  Bump(loop_->counters.server_responses[ServerResponseSlot(plan.status)]);
  if (loop_->error_writer) {
    loop_->error_writer(plan.status, options.date, out_);
    return;
  }
  AppendResponse(out_, plan, options);
}

DeferredResponse ConnectionProtocol::Defer() {
  if (!exchange_.in_handle_ || exchange_.deferred_) return DeferredResponse();
  exchange_.deferred_ = true;
  return DeferredResponse(loop_->gate, owner_);
}

void ConnectionProtocol::OnDeferredDone(std::string bytes, bool completed) {
  deferred_pending_ = false;
  if (completed) {
    out_.append(bytes);
    if (!deferred_keep_alive_) finishing_ = true;
  } else {
    Bump(loop_->counters.handler_errors);
    AppendServerError(500);
    finishing_ = true;
  }
}

absl::Span<char> ConnectionProtocol::ReadSpace() {
  if (discarding_) {
    read_begin_ = read_end_ = request_start_ = 0;
    return absl::Span<char>(read_buffer_.get(), read_capacity_);
  }
  // The head of a request in progress is kept whole (the limits count from
  // its first byte); otherwise only unparsed bytes.
  const bool in_head = request_in_progress_ && (!parser_ || !parser_->is_header_done());
  const size_t keep_from = in_head ? request_start_ : read_begin_;
  if (keep_from == read_end_) {
    read_begin_ = read_end_ = request_start_ = 0;
    return absl::Span<char>(read_buffer_.get(), read_capacity_);
  }
  if (read_capacity_ - read_end_ < kMinReadSpace) {
    if (in_head) {
      // Beast may have consumed part of the head already: parse it again
      // from its first byte once it has moved.
      parser_.reset();
      read_begin_ = keep_from;
    }
    const size_t kept = read_end_ - keep_from;
    if (read_capacity_ - kept < kMinReadSpace && read_capacity_ < max_read_capacity_) {
      std::unique_ptr<char[]> bigger(new char[max_read_capacity_]);
      std::memcpy(bigger.get(), read_buffer_.get() + keep_from, kept);
      read_buffer_ = std::move(bigger);
      read_capacity_ = max_read_capacity_;
      Account();
    } else if (keep_from > 0) {
      std::memmove(read_buffer_.get(), read_buffer_.get() + keep_from, kept);
    }
    read_begin_ -= keep_from;
    request_start_ = request_start_ >= keep_from ? request_start_ - keep_from : 0;
    last_read_offset_ = last_read_offset_ >= keep_from ? last_read_offset_ - keep_from : 0;
    read_end_ = kept;
  }
  return absl::Span<char>(read_buffer_.get() + read_end_, read_capacity_ - read_end_);
}

void ConnectionProtocol::Received(size_t n) {
  if (discarding_ || n == 0) return;
  const bool had_unparsed = request_in_progress_ || read_begin_ != read_end_;
  if (!had_unparsed) unparsed_since_ns_ = loop_->now_ns;
  last_read_ns_ = loop_->now_ns;
  last_read_offset_ = read_end_;
  read_end_ += n;
}

void ConnectionProtocol::ReceivedEof() { peer_eof_ = true; }

void ConnectionProtocol::OutputWritten() {
  out_.clear();
  ReleaseIfHuge(out_);
}

absl::string_view ConnectionProtocol::BeginAsyncWrite() {
  // The strings swap, so both keep their capacity.
  writing_.swap(out_);
  out_.clear();
  return writing_;
}

void ConnectionProtocol::AsyncWriteDone() {
  writing_.clear();
  ReleaseIfHuge(writing_);
}

void ConnectionProtocol::ReleaseIfHuge(std::string& buffer) {
  // One big response (or a burst) must not pin its size for the rest of
  // the connection's life; a normal pipelined batch stays under this, so
  // the steady state does not reallocate.
  if (buffer.capacity() > 4 * loop_->max_output_bytes) {
    std::string().swap(buffer);
    Account();
  }
}

void ConnectionProtocol::DiscardInput(int64_t linger_ns) {
  discarding_ = true;
  parser_.reset();
  request_in_progress_ = false;
  deadline_ns_ = loop_->now_ns + linger_ns;
}

bool ConnectionProtocol::Idle() const {
  return !request_in_progress_ && !deferred_pending_ && !finishing_ && out_.empty() &&
         writing_.empty() && read_begin_ == read_end_;
}

bool ConnectionProtocol::ShouldReleaseBuffers() {
  const bool was_active = std::exchange(active_, false);
  if (was_active || !Idle()) return false;
  return read_capacity_ > initial_read_capacity_ || out_.capacity() > kIdleOutputCapacity ||
         writing_.capacity() > kIdleOutputCapacity ||
         head_.LargestCapacity() > kIdleHeadValueCapacity;
}

void ConnectionProtocol::ReleaseBuffers() {
  if (read_capacity_ > initial_read_capacity_) {
    read_buffer_.reset(new char[initial_read_capacity_]);
    read_capacity_ = initial_read_capacity_;
  }
  read_begin_ = read_end_ = request_start_ = 0;
  if (out_.capacity() > kIdleOutputCapacity) std::string().swap(out_);
  if (writing_.capacity() > kIdleOutputCapacity) std::string().swap(writing_);
  head_.Release(kIdleHeadValueCapacity);
  Account();
}

size_t ConnectionProtocol::buffer_bytes() const {
  return read_capacity_ + out_.capacity() + writing_.capacity() + head_.Capacity();
}

void ConnectionProtocol::Account() {
  LoopCounters& counters = loop_->counters;
  RaiseTo(counters.peak_output, out_.size() + writing_.size());
  const size_t bytes = buffer_bytes();
  if (bytes != accounted_bytes_) {
    Bump(counters.buffer_bytes,
         static_cast<int64_t>(bytes) - static_cast<int64_t>(accounted_bytes_));
    accounted_bytes_ = bytes;
  }
}

}  // namespace shortener::edge::http::internal
