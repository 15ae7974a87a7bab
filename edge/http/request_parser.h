// Parsing of one HTTP/1.x request for the edge's server: Boost.Beast's
// basic_parser, keeping only what Request (http_server.h) exposes, as views
// into the caller's buffer, and skipping the body. No sockets, so it is
// tested (and can be fuzzed) directly.
//
// Use: emplace a RequestParser per request (no allocation), put() the bytes
// from the request's first byte on; when the head is done and a body has to
// be waited for, PinViews() before the buffer moves. The free functions say
// which status the server answers a failed request with.
//
// Thread safety: a RequestParser is used by one thread; the free functions
// are pure.
#ifndef SHORTENER_EDGE_HTTP_REQUEST_PARSER_H_
#define SHORTENER_EDGE_HTTP_REQUEST_PARSER_H_

#include <boost/beast/http/basic_parser.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace shortener::edge::http {

struct ParserLimits {
  size_t max_request_line = 8 * 1024;  // see HttpServerOptions
  size_t max_header_bytes = 16 * 1024;
  size_t max_body_bytes = 64 * 1024;
};

class RequestParser : public boost::beast::http::basic_parser<true> {
 public:
  // `xff_storage` holds the joined value when X-Forwarded-For is repeated;
  // it is cleared here and must outlive the parser's views.
  RequestParser(const ParserLimits& limits, std::string* xff_storage);

  absl::string_view method() const { return method_; }
  absl::string_view target() const { return target_; }
  absl::string_view x_forwarded_for() const { return x_forwarded_for_; }
  absl::string_view user_agent() const { return user_agent_; }
  absl::string_view referer() const { return referer_; }
  absl::string_view purpose() const { return purpose_; }
  absl::string_view sec_purpose() const { return sec_purpose_; }
  int http_version() const { return version_; }

  // Copies every view that points into the parsed buffer into `storage` and
  // re-points it there, so the buffer may be reused while a body is read.
  void PinViews(std::string* storage);

 private:
  void on_request_impl(boost::beast::http::verb method, boost::beast::string_view method_str,
                       boost::beast::string_view target, int version,
                       boost::beast::error_code& ec) override;
  void on_response_impl(int, boost::beast::string_view, int, boost::beast::error_code&) override {}
  void on_field_impl(boost::beast::http::field name, boost::beast::string_view name_string,
                     boost::beast::string_view value, boost::beast::error_code& ec) override;
  void on_header_impl(boost::beast::error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>&,
                         boost::beast::error_code&) override {}
  size_t on_body_impl(boost::beast::string_view body, boost::beast::error_code&) override {
    return body.size();  // discarded
  }
  void on_chunk_header_impl(std::uint64_t, boost::beast::string_view,
                            boost::beast::error_code&) override {}
  size_t on_chunk_body_impl(std::uint64_t, boost::beast::string_view body,
                            boost::beast::error_code&) override {
    return body.size();  // discarded
  }
  void on_finish_impl(boost::beast::error_code&) override {}

  void AddForwardedFor(absl::string_view value);

  size_t max_request_line_;
  std::string* xff_storage_;
  bool xff_joined_ = false;  // x_forwarded_for_ points into *xff_storage_
  absl::string_view method_;
  absl::string_view target_;
  absl::string_view x_forwarded_for_;
  absl::string_view user_agent_;
  absl::string_view referer_;
  absl::string_view purpose_;
  absl::string_view sec_purpose_;
  int version_ = 11;
};

// True if `pending` (the bytes of a request from its first one, head not
// complete yet) already shows a request line longer than max_request_line:
// no line end within its first max_request_line + 2 bytes.
bool RequestLineTooLong(absl::string_view pending, size_t max_request_line);

// The status for a request whose parse failed with `ec` (not need_more);
// `request_bytes` are the bytes received of it, from its first byte.
//   body_limit -> 413.
//   header_limit -> 414 if the request line has no end in request_bytes or
//     is longer than max_request_line, else 431.
//   bad_version with a well-formed "HTTP/d.d" that is not 1.0/1.1 -> 505.
//   anything else -> 400.
int StatusForParseError(const boost::beast::error_code& ec, absl::string_view request_bytes,
                        size_t max_request_line);

}  // namespace shortener::edge::http

#endif  // SHORTENER_EDGE_HTTP_REQUEST_PARSER_H_
