// A blocking HTTP/1.1 client for end-to-end tests of the redirect edge:
// raw bytes out, parsed responses in, so tests can send exactly what a
// misbehaving client would (pipelined requests, bad targets, huge lines).
#ifndef SHORTENER_TESTS_SUPPORT_HTTP_CLIENT_H_
#define SHORTENER_TESTS_SUPPORT_HTTP_CLIENT_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace shortener::testing {

struct HttpResponse {
  int status = 0;
  std::string reason;
  // Field names lower-cased; repeated fields joined with ", ".
  std::map<std::string, std::string> headers;
  std::string body;
  std::string raw_head;  // status line and header lines as received

  bool Has(const std::string& name) const { return headers.count(name) > 0; }
  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

class HttpConnection {
 public:
  // Connects to 127.0.0.1:port.
  static absl::StatusOr<HttpConnection> Connect(int port,
                                                absl::Duration timeout = absl::Seconds(5));
  HttpConnection(HttpConnection&& other) noexcept;
  HttpConnection& operator=(HttpConnection&& other) noexcept;
  ~HttpConnection();

  absl::Status Send(const std::string& bytes);
  // Reads one response. `head_request`: the response has no body whatever
  // Content-Length says. UNAVAILABLE if the peer closed first,
  // DEADLINE_EXCEEDED on timeout.
  absl::StatusOr<HttpResponse> Read(bool head_request = false,
                                    absl::Duration timeout = absl::Seconds(10));
  // True if the peer closed the connection (reads EOF) within `timeout`.
  bool WaitClosed(absl::Duration timeout = absl::Seconds(5));

 private:
  explicit HttpConnection(int fd) : fd_(fd) {}
  int fd_ = -1;
  std::string buffer_;  // received, not yet consumed
};

// `count` keep-alive connections to `port`, each sent "GET `target`" and
// answered (so the server has surely counted it), for tests of connection
// limits. The first failure's status otherwise.
absl::StatusOr<std::vector<HttpConnection>> OpenAnsweredConnections(int port, int count,
                                                                    const std::string& target);

// One request on a fresh connection: "GET /x" with Host and Connection: close.
absl::StatusOr<HttpResponse> HttpGet(int port, const std::string& target,
                                     const std::string& method = "GET",
                                     const std::string& extra_headers = "");

// Every sample of the Prometheus text at GET /metrics on `port` (an admin
// listener, the edge's or the service's): "name{labels}" -> value, as
// rendered. Empty when the request fails or is not answered 200.
std::map<std::string, double> ScrapeMetrics(int port);

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SUPPORT_HTTP_CLIENT_H_
