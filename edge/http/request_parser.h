// Parsing of one HTTP/1.x request for the edge's server: Boost.Beast's
// basic_parser, the stricter rules of RFC 9112 the edge adds to it (see
// http_server.h), and copies of what Request exposes into storage the
// caller owns; the body is skipped unless the caller keeps it
// (ParserLimits::keep_body: the service's HTTP/JSON API). No sockets, so it is tested (and
// fuzzed) directly.
//
// Why copies: Beast hands a field value over as a view that is valid only
// during the callback. Usually it points into the bytes given to put(), but
// a folded value (obs-fold) is joined into a buffer on Beast's stack, gone
// when put() returns; and the caller's read buffer moves when it is
// compacted. So the parser copies the values it keeps into a RequestHead
// (per connection, reused: the strings keep their capacity, the steady
// state allocates nothing) and hands out views into that.
//
// Use: emplace a RequestParser per request (no allocation), Put() the bytes
// from the request's first byte on (each call from the first byte not yet
// consumed). When Put() fails, refusal() says why if it was one of the
// edge's own rules; otherwise RefusalForParseError maps Beast's error.
//
// Thread safety: a RequestParser is used by one thread; the free functions
// are pure.
#ifndef SHORTENER_EDGE_HTTP_REQUEST_PARSER_H_
#define SHORTENER_EDGE_HTTP_REQUEST_PARSER_H_

#include <boost/beast/http/basic_parser.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "edge/http/http_server.h"

namespace shortener::edge::http {

struct ParserLimits {
  size_t max_request_line = 8 * 1024;  // see HttpServerOptions
  size_t max_header_bytes = 16 * 1024;
  size_t max_header_fields = 100;
  size_t max_body_bytes = 64 * 1024;
  bool keep_body = false;  // see HttpServerOptions
};

// What the parser keeps of a request head, owned by the caller and reused
// request after request.
struct RequestHead {
  std::string method;
  std::string target;
  // All non-empty X-Forwarded-For values, in order, joined by ", ".
  std::string x_forwarded_for;
  // The first non-empty value of each.
  std::string user_agent;
  std::string referer;
  std::string purpose;
  std::string sec_purpose;
  // All Authorization values, joined by ", " (a repeated field is then no
  // valid credential); the first Content-Type.
  std::string authorization;
  std::string content_type;
  // The body, kept only with ParserLimits::keep_body.
  std::string body;
  // "Expect: 100-continue" was sent.
  bool expect_continue = false;

  void Clear();
  // Sum of the strings' capacities (what the head costs in memory).
  size_t Capacity() const;
  size_t LargestCapacity() const;
  // Frees the strings whose capacity is over `keep` bytes.
  void Release(size_t keep);
};

class RequestParser : private boost::beast::http::basic_parser<true> {
 public:
  // Clears `head`, which must outlive the parser.
  RequestParser(const ParserLimits& limits, RequestHead* head);

  // Parses `bytes` (see basic_parser::put): returns how many were consumed;
  // `ec` is need_more when more are needed, another error when the request
  // is refused.
  size_t Put(absl::string_view bytes, boost::beast::error_code& ec);

  using basic_parser::is_done;
  using basic_parser::is_header_done;
  using basic_parser::keep_alive;

  // Why the request is refused after Put() failed with `ec` (not
  // need_more): the edge's own rule that stopped it, or else
  // RefusalForParseError(ec, request_bytes, max_request_line).
  // `request_bytes`: the bytes received of the request, from its first one.
  RequestRefusal RefusalFor(const boost::beast::error_code& ec,
                            absl::string_view request_bytes) const;

  // Views into the RequestHead, valid while it is not cleared or changed.
  absl::string_view method() const { return head_->method; }
  absl::string_view target() const { return head_->target; }
  absl::string_view x_forwarded_for() const { return head_->x_forwarded_for; }
  absl::string_view user_agent() const { return head_->user_agent; }
  absl::string_view referer() const { return head_->referer; }
  absl::string_view purpose() const { return head_->purpose; }
  absl::string_view sec_purpose() const { return head_->sec_purpose; }
  absl::string_view authorization() const { return head_->authorization; }
  absl::string_view content_type() const { return head_->content_type; }
  absl::string_view body() const { return head_->body; }
  bool expect_continue() const { return head_->expect_continue; }
  int http_version() const { return version_; }

 private:
  void on_request_impl(boost::beast::http::verb method, boost::beast::string_view method_str,
                       boost::beast::string_view target, int version,
                       boost::beast::error_code& ec) override;
  void on_response_impl(int, boost::beast::string_view, int, boost::beast::error_code&) override {}
  void on_field_impl(boost::beast::http::field name, boost::beast::string_view name_string,
                     boost::beast::string_view value, boost::beast::error_code& ec) override;
  void on_header_impl(boost::beast::error_code& ec) override;
  void on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                         boost::beast::error_code&) override;
  size_t on_body_impl(boost::beast::string_view body, boost::beast::error_code&) override;
  // Never reached: Transfer-Encoding is refused before a chunk is parsed.
  void on_chunk_header_impl(std::uint64_t, boost::beast::string_view,
                            boost::beast::error_code&) override {}
  size_t on_chunk_body_impl(std::uint64_t, boost::beast::string_view body,
                            boost::beast::error_code&) override {
    return body.size();
  }
  void on_finish_impl(boost::beast::error_code&) override {}

  // Whether the field whose name ends at `colon` had its value folded.
  bool Folded(const char* colon, boost::beast::string_view value) const;
  void Refuse(RequestRefusal refusal, boost::beast::error_code& ec);

  const size_t max_request_line_;
  const size_t max_header_fields_;
  const bool keep_body_;
  RequestHead* const head_;
  // The bytes of the Put() in progress.
  const char* input_begin_ = nullptr;
  const char* input_end_ = nullptr;
  size_t fields_ = 0;
  int host_fields_ = 0;
  int content_length_fields_ = 0;
  int version_ = 11;
  std::optional<RequestRefusal> refusal_;
};

// True if `pending` (the bytes of a request from its first one, head not
// complete yet) already shows a request line longer than max_request_line:
// no line end within its first max_request_line + 2 bytes.
bool RequestLineTooLong(absl::string_view pending, size_t max_request_line);

// Why a request whose parse failed with Beast's `ec` (not need_more) is
// refused; `request_bytes` are the bytes received of it, from its first byte.
//   body_limit -> kBodyTooLarge.
//   header_limit -> kLineTooLong if the request line has no end in
//     request_bytes or is longer than max_request_line, else kHeadTooLarge.
//   bad_version with a well-formed "HTTP/d.d" that is not 1.0/1.1 -> kVersion.
//   bad_content_length, multiple_content_length -> kContentLength.
//   bad_transfer_encoding (after a Content-Length) -> kTransferEncoding.
//   anything else -> kMalformed.
RequestRefusal RefusalForParseError(const boost::beast::error_code& ec,
                                    absl::string_view request_bytes, size_t max_request_line);

// True if `host` is a valid Host field value: uri-host [ ":" port ]
// (RFC 9112 section 3.2, RFC 3986 section 3.2.2), or empty. Checks the
// characters and the brackets of an IP literal; not that a name resolves.
bool IsValidHostValue(absl::string_view host);

}  // namespace shortener::edge::http

#endif  // SHORTENER_EDGE_HTTP_REQUEST_PARSER_H_
