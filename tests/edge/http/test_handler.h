// A Handler for the HTTP server's tests. It answers from a fixed set of
// responses and never puts request bytes in a response, so tests can tell
// responses apart and check their order:
//   /defer?i=N&ms=M  deferred; completed from another thread after M ms
//                    (default 20) with the plain answer below
//   /drop            deferred, then dropped without Complete (server: 500)
//   /silent          neither answers nor defers (server: 500)
//   /big?i=N         200 with a 4 MiB body (more than a socket buffer holds)
//   /pad?i=N&bytes=M 200 with a body of M bytes (the plain answer, padded)
//   anything else    200, body "<METHOD> <N>": METHOD one of GET, POST,
//                    OTHER; N the integer of ?i=N (0 if none)
// Every response carries "X-Loop: <loop index>" and a Connection header that
// matches request().keep_alive.
//
// Thread safety: Handle runs on loop threads; the accessors may be called
// from any thread.
#ifndef SHORTENER_TESTS_EDGE_HTTP_TEST_HANDLER_H_
#define SHORTENER_TESTS_EDGE_HTTP_TEST_HANDLER_H_

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "edge/http/http_server.h"

namespace shortener::edge::http::testing {

// A copy of what the handler saw of one request.
struct SeenRequest {
  std::string method, target, x_forwarded_for, user_agent, referer, purpose, sec_purpose;
  std::string http_date;
  PeerAddress peer;
  bool keep_alive = false;
  int version = 0;
  int loop = -1;
};

class TestHandler : public Handler {
 public:
  // Joins the threads completing deferred responses.
  ~TestHandler() override;

  void Handle(Exchange& exchange) override;

  std::vector<SeenRequest> Seen() const;
  size_t handled() const { return handled_.load(); }
  // Requests for which a deferred response was handed out, and whether a
  // second Defer() for the same request was ever non-empty (it must not be).
  size_t deferred() const { return deferred_.load(); }
  bool second_defer_was_pending() const { return second_defer_was_pending_.load(); }

 private:
  std::atomic<size_t> handled_{0};
  std::atomic<size_t> deferred_{0};
  std::atomic<bool> second_defer_was_pending_{false};
  mutable std::mutex mu_;                // std::mutex: visible to TSan
  std::vector<SeenRequest> seen_;        // guarded by mu_
  std::vector<std::thread> completers_;  // guarded by mu_
};

// "GET <target> HTTP/1.1" with a Host field, `extra` header lines (each
// ending in CRLF) and the blank line.
std::string Get(const std::string& target, const std::string& extra = "");

}  // namespace shortener::edge::http::testing

#endif  // SHORTENER_TESTS_EDGE_HTTP_TEST_HANDLER_H_
