// Assembles a complete HTTP/1.1 response (status line, headers, body) from a
// ResponsePlan (http_status.h) into a caller-provided buffer, without
// allocating once the buffer has grown to the largest response seen.
//
// Header order: status line, Date (if given), Location (if any), the plan's
// fixed lines, Content-Type (only with a body), Content-Length (except for
// 204), Connection. A HEAD response has the same headers (Content-Length is
// the length the body would have) and no body.
//
// Thread safety: WriteResponse/ResponseSize/FormatHttpDate are pure.
// A ResponseWriter is not thread-safe: use one per connection or per thread.
#ifndef SHORTENER_EDGE_RESPONSE_BUILDER_H_
#define SHORTENER_EDGE_RESPONSE_BUILDER_H_

#include <cstddef>
#include <ctime>
#include <string>

#include "absl/strings/string_view.h"
#include "edge/http_status.h"

namespace shortener::edge {

struct ResponseOptions {
  // Connection: keep-alive when true, close when false. Default true.
  bool keep_alive = true;
  // HEAD: headers only. Default false.
  bool head = false;
  // The Date header's value (an IMF-fixdate, see FormatHttpDate), formatted
  // once per second by the caller; empty: no Date header. Default empty.
  absl::string_view date;
};

// Length of an IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT".
inline constexpr size_t kHttpDateLength = 29;

// Writes `time` as an IMF-fixdate (RFC 9110 5.6.7) into `out`, which must
// hold kHttpDateLength bytes (no NUL is written). Locale-independent.
// Returns the view of `out`.
absl::string_view FormatHttpDate(std::time_t time, char (&out)[kHttpDateLength]);

// Exact number of bytes WriteResponse produces for this plan and options.
size_t ResponseSize(const ResponsePlan& plan, const ResponseOptions& options);

// Writes the response into [dst, dst + capacity). Returns the number of
// bytes written, or 0 (nothing usable written) if capacity is too small.
size_t WriteResponse(const ResponsePlan& plan, const ResponseOptions& options, char* dst,
                     size_t capacity);

// Appends the response to `out` (bytes already there are left alone) and
// returns its status: how handlers and the server answer into a
// connection's output buffer without a copy.
int AppendResponse(std::string& out, const ResponsePlan& plan, const ResponseOptions& options);

// Owns a reusable std::string buffer: Build() clears it and writes the
// response; the buffer only grows, so steady state does not allocate.
class ResponseWriter {
 public:
  // The response bytes, valid until the next Build() or destruction.
  absl::string_view Build(const ResponsePlan& plan, const ResponseOptions& options);

  size_t capacity() const { return buffer_.capacity(); }

 private:
  std::string buffer_;
};

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_RESPONSE_BUILDER_H_
