// The HTTP server over real sockets on 127.0.0.1, with TestHandler.
// Every test runs the server's loop thread(s) next to the test thread:
// labelled "concurrent" for the TSan pass. Catch2 assertions only here, on
// the test thread.
#include "edge/http/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/edge/http/test_handler.h"
#include "tests/support/http_client.h"
#include "tests/support/status_matchers.h"

namespace shortener::edge::http {
namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::HttpConnection;
using ::shortener::testing::HttpResponse;
using ::shortener::testing::IsOk;
using testing::Get;
using testing::TestHandler;

// A started server with its handler (declared first: it outlives the server).
struct Server {
  explicit Server(HttpServerOptions options = {}) {
    auto started = HttpServer::Start(std::move(options), &handler);
    REQUIRE_THAT(started, IsOk());
    server = std::move(*started);
  }
  HttpConnection Connect() {
    auto connection = HttpConnection::Connect(server->port());
    REQUIRE_THAT(connection, IsOk());
    return std::move(*connection);
  }
  TestHandler handler;
  std::unique_ptr<HttpServer> server;
};

HttpResponse ReadOk(HttpConnection& connection) {
  auto response = connection.Read();
  REQUIRE_THAT(response, IsOk());
  return std::move(*response);
}

// Sends `bytes`, then expects one response with `status` and the close.
void ExpectRefusedWith(Server& s, const std::string& bytes, int status) {
  HttpConnection connection = s.Connect();
  REQUIRE_THAT(connection.Send(bytes), IsOk());
  HttpResponse response = ReadOk(connection);
  CHECK(response.status == status);
  CHECK(response.Header("connection") == "close");
  CHECK(response.Header("cache-control") == "no-store");
  CHECK(absl::StartsWith(response.Header("content-type"), "text/plain"));
  CHECK(response.Has("date"));
  CHECK(connection.WaitClosed());
}

HttpServerOptions ShortTimeouts() {
  HttpServerOptions options;
  options.idle_timeout = absl::Milliseconds(400);
  options.header_timeout = absl::Milliseconds(300);
  return options;
}

TEST_CASE("a keep-alive connection is served many requests", "[edge/http][server][concurrent]") {
  Server s;
  HttpConnection connection = s.Connect();
  for (int i = 0; i < 1000; ++i) {
    REQUIRE_THAT(connection.Send(Get(absl::StrCat("/x?i=", i))), IsOk());
    HttpResponse response = ReadOk(connection);
    REQUIRE(response.status == 200);
    REQUIRE(response.body == absl::StrCat("GET ", i));
    REQUIRE(response.Header("connection") == "keep-alive");
  }
  CHECK(s.server->Stats().requests == 1000);
  CHECK(s.server->Stats().connections_accepted == 1);
}

TEST_CASE("pipelined requests are answered in order with deferred ones among them",
          "[edge/http][server][concurrent]") {
  Server s;
  HttpConnection connection = s.Connect();
  std::string burst;
  for (int i = 0; i < 50; ++i) {
    // Deferred ones complete after 0-10 ms from other threads.
    burst += i % 7 == 3 ? Get(absl::StrCat("/defer?i=", i, "&ms=", i % 3 * 5))
                        : Get(absl::StrCat("/x?i=", i));
  }
  REQUIRE_THAT(connection.Send(burst), IsOk());
  for (int i = 0; i < 50; ++i) {
    HttpResponse response = ReadOk(connection);
    REQUIRE(response.body == absl::StrCat("GET ", i));
  }
  REQUIRE_THAT(connection.Send(Get("/x?i=99")), IsOk());
  CHECK(ReadOk(connection).body == "GET 99");
  CHECK(s.handler.deferred() == 7);
  CHECK_FALSE(s.handler.second_defer_was_pending());
}

TEST_CASE("hundreds of pipelined requests of varied sizes cross the read buffer in order",
          "[edge/http][server][concurrent]") {
  Server s;
  HttpConnection connection = s.Connect();
  std::mt19937 random(7);
  std::string burst;
  constexpr int kRequests = 400;
  for (int i = 0; i < kRequests; ++i) {
    const std::string padding(random() % 300, 'p');
    burst += Get(absl::StrCat("/x?i=", i, "&pad=", padding),
                 absl::StrCat("User-Agent: ", std::string(random() % 200, 'u'), "\r\n"));
  }
  std::thread sender([&] { (void)connection.Send(burst); });  // no assertion off the main thread
  for (int i = 0; i < kRequests; ++i) {
    auto response = connection.Read();
    if (!response.ok() || response->body != absl::StrCat("GET ", i)) {
      sender.join();
      FAIL("response " << i << " wrong: " << response.status() << " "
                       << (response.ok() ? response->body : ""));
    }
  }
  sender.join();
}

TEST_CASE("HTTP/1.0 closes after the response unless it asks for keep-alive",
          "[edge/http][server][concurrent]") {
  Server s;
  HttpConnection connection = s.Connect();
  REQUIRE_THAT(connection.Send("GET /x?i=1 HTTP/1.0\r\n\r\n"), IsOk());
  HttpResponse response = ReadOk(connection);
  CHECK(response.Header("connection") == "close");
  CHECK(connection.WaitClosed());

  HttpConnection kept = s.Connect();
  for (int i = 0; i < 2; ++i) {
    REQUIRE_THAT(kept.Send("GET /x HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"), IsOk());
    CHECK(ReadOk(kept).Header("connection") == "keep-alive");
  }
  const std::vector<testing::SeenRequest> seen = s.handler.Seen();
  REQUIRE(seen.size() == 3);
  CHECK(seen[0].version == 10);
  CHECK_FALSE(seen[0].keep_alive);
  CHECK(seen[1].keep_alive);
}

TEST_CASE("Connection: close is honoured and later pipelined requests are not answered",
          "[edge/http][server][concurrent]") {
  Server s;
  HttpConnection connection = s.Connect();
  REQUIRE_THAT(connection.Send(Get("/x?i=1", "Connection: close\r\n") + Get("/x?i=2")), IsOk());
  HttpResponse response = ReadOk(connection);
  CHECK(response.body == "GET 1");
  CHECK(response.Header("connection") == "close");
  CHECK(connection.WaitClosed());
  CHECK(s.handler.handled() == 1);
}

TEST_CASE("the request's fields reach the handler", "[edge/http][server][concurrent]") {
  Server s;
  HttpConnection connection = s.Connect();
  REQUIRE_THAT(connection.Send(Get("/x?i=5",
                                   "X-Forwarded-For: 203.0.113.9\r\n"
                                   "User-Agent: test-agent\r\n"
                                   "Referer: https://ref.example/\r\n"
                                   "x-forwarded-for: 198.51.100.7\r\n"
                                   "Purpose: prefetch\r\n"
                                   "Sec-Purpose: prefetch\r\n")),
               IsOk());
  ReadOk(connection);
  const std::vector<testing::SeenRequest> seen = s.handler.Seen();
  REQUIRE(seen.size() == 1);
  const testing::SeenRequest& r = seen[0];
  CHECK(r.method == "GET");
  CHECK(r.target == "/x?i=5");
  CHECK(r.x_forwarded_for == "203.0.113.9, 198.51.100.7");
  CHECK(r.user_agent == "test-agent");
  CHECK(r.referer == "https://ref.example/");
  CHECK(r.purpose == "prefetch");
  CHECK(r.sec_purpose == "prefetch");
  CHECK(r.version == 11);
  CHECK(r.keep_alive);
  CHECK(r.loop == 0);
  CHECK_FALSE(r.peer.is_v6);
  CHECK(r.peer.bytes[0] == 127);
  CHECK(r.peer.bytes[3] == 1);
  CHECK(r.peer.port != 0);
  REQUIRE(r.http_date.size() == 29);
  CHECK(absl::EndsWith(r.http_date, " GMT"));
}

TEST_CASE("an over-long request line gets 414 and the connection closes",
          "[edge/http][server][concurrent]") {
  HttpServerOptions options;
  options.max_request_line = 1024;
  Server s(options);
  ExpectRefusedWith(s, Get("/" + std::string(1100, 'a')), 414);
  // Known before the line ends: no need to wait for the rest.
  ExpectRefusedWith(s, "GET /" + std::string(1100, 'a'), 414);
  CHECK(s.server->Stats().protocol_errors == 2);
  CHECK(s.handler.handled() == 0);
}

TEST_CASE("a header block over the limit gets 431", "[edge/http][server][concurrent]") {
  HttpServerOptions options;
  options.max_header_bytes = 4096;
  Server s(options);
  std::string fields;
  for (int i = 0; i < 100; ++i)
    fields += absl::StrCat("X-Field-", i, ": ", std::string(50, 'v'), "\r\n");
  ExpectRefusedWith(s, Get("/x", fields), 431);
}

TEST_CASE("a head over the limit whose request line has not ended gets 414",
          "[edge/http][server][concurrent]") {
  HttpServerOptions options;
  options.max_header_bytes = 4096;  // below max_request_line
  Server s(options);
  ExpectRefusedWith(s, "GET /" + std::string(5000, 'a'), 414);
}

TEST_CASE("a body over the limit gets 413 and the connection closes",
          "[edge/http][server][concurrent]") {
  HttpServerOptions options;
  options.max_body_bytes = 1024;
  Server s(options);
  ExpectRefusedWith(
      s, "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n" + std::string(5000, 'b'),
      413);
  CHECK(s.server->Stats().refused_requests[static_cast<size_t>(RequestRefusal::kBodyTooLarge)] ==
        1);
}

TEST_CASE("a small body is discarded and the next pipelined request is served",
          "[edge/http][server][concurrent]") {
  Server s;
  HttpConnection connection = s.Connect();
  REQUIRE_THAT(
      connection.Send("POST /x?i=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789" +
                      Get("/x?i=2") +
                      "POST /x?i=3 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc" +
                      Get("/x?i=4")),
      IsOk());
  CHECK(ReadOk(connection).body == "POST 1");
  CHECK(ReadOk(connection).body == "GET 2");
  CHECK(ReadOk(connection).body == "POST 3");
  CHECK(ReadOk(connection).body == "GET 4");
}

TEST_CASE("a body larger than the read buffer streams through and keeps the request's fields",
          "[edge/http][server][concurrent]") {
  Server s;
  HttpConnection connection = s.Connect();
  const std::string body(40000, 'b');
  REQUIRE_THAT(connection.Send(
                   "POST /x?i=1 HTTP/1.1\r\nHost: a\r\nUser-Agent: big-poster\r\nContent-Length: " +
                   std::to_string(body.size()) + "\r\n\r\n" + body.substr(0, 100)),
               IsOk());
  absl::SleepFor(absl::Milliseconds(20));  // the head arrives on its own
  REQUIRE_THAT(connection.Send(body.substr(100) + Get("/x?i=2")), IsOk());
  CHECK(ReadOk(connection).body == "POST 1");
  CHECK(ReadOk(connection).body == "GET 2");
  const std::vector<testing::SeenRequest> seen = s.handler.Seen();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].target == "/x?i=1");
  CHECK(seen[0].user_agent == "big-poster");
}

TEST_CASE("garbage gets 400 and an unsupported version 505", "[edge/http][server][concurrent]") {
  Server s;
  ExpectRefusedWith(s, "HELLO THERE\r\n\r\n", 400);
  ExpectRefusedWith(s, "GET /x HTTP/1.1\r\nNo colon here\r\n\r\n", 400);
  ExpectRefusedWith(s, "GET /x HTTP/2.0\r\n\r\n", 505);
  // The answer to a bad request never carries its bytes.
  HttpConnection connection = s.Connect();
  REQUIRE_THAT(connection.Send("GET /<script> HTTP/1.1\r\nEvil: <script>\r\nx\r\n\r\n"), IsOk());
  HttpResponse response = ReadOk(connection);
  CHECK(response.status == 400);
  CHECK_FALSE(absl::StrContains(response.raw_head + response.body, "script"));
  CHECK(s.server->Stats().protocol_errors == 4);
}

TEST_CASE("a request trickling in byte by byte is served", "[edge/http][server][concurrent]") {
  Server s;
  HttpConnection connection = s.Connect();
  const std::string request = Get("/x?i=8", "User-Agent: slow\r\n");
  for (char c : request) {
    REQUIRE_THAT(connection.Send(std::string(1, c)), IsOk());
    absl::SleepFor(absl::Microseconds(200));
  }
  CHECK(ReadOk(connection).body == "GET 8");
  CHECK(s.handler.Seen().at(0).user_agent == "slow");
}

TEST_CASE("a half-closed client gets the answers to its complete requests",
          "[edge/http][server][concurrent]") {
  Server s;
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(s.server->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  const std::string requests = Get("/x?i=1") + Get("/defer?i=2&ms=5") + Get("/x?i=3");
  REQUIRE(send(fd, requests.data(), requests.size(), 0) == static_cast<ssize_t>(requests.size()));
  REQUIRE(shutdown(fd, SHUT_WR) == 0);
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  std::string received;
  char chunk[4096];
  ssize_t n;
  while ((n = recv(fd, chunk, sizeof(chunk), 0)) > 0)
    received.append(chunk, static_cast<size_t>(n));
  close(fd);
  CHECK(n == 0);  // EOF, not a timeout or a reset
  CHECK(absl::StrContains(received, "GET 1"));
  CHECK(absl::StrContains(received, "GET 2"));
  CHECK(absl::StrContains(received, "GET 3"));
}

TEST_CASE("a dropped deferred response and a silent handler are answered 500",
          "[edge/http][server][concurrent]") {
  Server s;
  for (const char* path : {"/drop", "/silent"}) {
    INFO(path);
    HttpConnection connection = s.Connect();
    REQUIRE_THAT(connection.Send(Get(path) + Get("/x")), IsOk());
    HttpResponse response = ReadOk(connection);
    CHECK(response.status == 500);
    CHECK(response.Header("connection") == "close");
    CHECK(connection.WaitClosed());
  }
  CHECK(s.server->Stats().handler_errors == 2);
}

TEST_CASE("a response larger than the socket buffer is written and the connection goes on",
          "[edge/http][server][concurrent]") {
  Server s;
  HttpConnection connection = s.Connect();
  REQUIRE_THAT(connection.Send(Get("/big?i=1") + Get("/x?i=2")), IsOk());
  HttpResponse big = ReadOk(connection);
  CHECK(big.body.size() == (4u << 20));
  CHECK(absl::StartsWith(big.body, "GET 1"));
  CHECK(ReadOk(connection).body == "GET 2");
  REQUIRE_THAT(connection.Send(Get("/x?i=3")), IsOk());
  CHECK(ReadOk(connection).body == "GET 3");
}

TEST_CASE("a client that stops in the middle of a head is closed after header_timeout",
          "[edge/http][server][timeout][concurrent]") {
  Server s(ShortTimeouts());
  HttpConnection connection = s.Connect();
  const absl::Time start = absl::Now();
  REQUIRE_THAT(connection.Send("GET /x HTTP/1.1\r\nHost: a\r\n"), IsOk());
  CHECK(connection.WaitClosed(absl::Seconds(3)));
  CHECK(absl::Now() - start >= absl::Milliseconds(250));
  CHECK(s.server->Stats().request_timeouts == 1);
  CHECK(s.handler.handled() == 0);
}

TEST_CASE("a client trickling a head slower than header_timeout is closed",
          "[edge/http][server][timeout][concurrent]") {
  Server s(ShortTimeouts());
  HttpConnection connection = s.Connect();
  const absl::Time start = absl::Now();
  bool closed = false;
  // One byte every 50 ms: each byte is activity, but the head never
  // completes within 300 ms.
  for (int i = 0; i < 40 && !closed; ++i) {
    closed =
        !connection.Send(i == 0 ? "G" : "a").ok() || connection.WaitClosed(absl::Milliseconds(50));
  }
  CHECK(closed);
  CHECK(absl::Now() - start < absl::Seconds(1));
  CHECK(s.server->Stats().request_timeouts == 1);
}

TEST_CASE("an idle keep-alive connection is closed after idle_timeout",
          "[edge/http][server][timeout][concurrent]") {
  Server s(ShortTimeouts());
  HttpConnection connection = s.Connect();
  REQUIRE_THAT(connection.Send(Get("/x")), IsOk());
  ReadOk(connection);
  const absl::Time start = absl::Now();
  CHECK(connection.WaitClosed(absl::Seconds(3)));
  CHECK(absl::Now() - start >= absl::Milliseconds(350));
  CHECK(s.server->Stats().idle_timeouts == 1);
}

TEST_CASE("connections over max_connections are closed at once and counted",
          "[edge/http][server][concurrent]") {
  HttpServerOptions options;
  options.max_connections = 2;
  Server s(options);
  HttpConnection first = s.Connect();
  HttpConnection second = s.Connect();
  for (HttpConnection* c : {&first, &second}) {
    REQUIRE_THAT(c->Send(Get("/x")), IsOk());
    ReadOk(*c);
  }
  HttpConnection third = s.Connect();
  CHECK(third.WaitClosed());
  CHECK(s.server->Stats().connections_refused == 1);
  CHECK(s.server->Stats().open_connections == 2);
}

TEST_CASE("Shutdown finishes a deferred request then closes and refuses new connections",
          "[edge/http][server][shutdown][concurrent]") {
  Server s;
  const int port = s.server->port();
  HttpConnection busy = s.Connect();
  HttpConnection idle = s.Connect();
  REQUIRE_THAT(idle.Send(Get("/x")), IsOk());
  ReadOk(idle);
  REQUIRE_THAT(busy.Send(Get("/defer?i=4&ms=300")), IsOk());
  for (int i = 0; i < 200 && s.handler.handled() < 2; ++i) absl::SleepFor(absl::Milliseconds(5));
  REQUIRE(s.handler.handled() == 2);

  std::atomic<bool> returned{false};
  const absl::Time start = absl::Now();
  std::thread stopper([&] {
    s.server->Shutdown(absl::Seconds(10));
    returned = true;
  });
  CHECK(idle.WaitClosed(absl::Seconds(2)));  // idle: closed at once
  HttpResponse response = ReadOk(busy);
  CHECK(response.body == "GET 4");
  CHECK(busy.WaitClosed(absl::Seconds(2)));
  stopper.join();
  CHECK(returned);
  CHECK(absl::Now() - start < absl::Seconds(2));  // when the last connection closed
  CHECK_THAT(HttpConnection::Connect(port, absl::ZeroDuration()),
             HasCode(absl::StatusCode::kUnavailable));
  s.server->Shutdown(absl::Seconds(1));  // idempotent
  CHECK(s.server->Stats().open_connections == 0);
}

TEST_CASE(
    "Shutdown past its grace closes a late deferred request and the late Complete is harmless",
    "[edge/http][server][shutdown][concurrent]") {
  Server s;
  HttpConnection busy = s.Connect();
  REQUIRE_THAT(busy.Send(Get("/defer?i=1&ms=500")), IsOk());
  for (int i = 0; i < 200 && s.handler.handled() < 1; ++i) absl::SleepFor(absl::Milliseconds(5));
  const absl::Time start = absl::Now();
  s.server->Shutdown(absl::Milliseconds(100));
  CHECK(absl::Now() - start < absl::Milliseconds(400));
  CHECK(busy.WaitClosed(absl::Seconds(2)));
  s.server.reset();
  // The handler's thread completes at 500 ms into a closed gate (the
  // handler's destructor joins it).
}

TEST_CASE("two loops both serve connections", "[edge/http][server][threads][concurrent]") {
  HttpServerOptions options;
  options.threads = 2;
  Server s(options);
  std::set<std::string> loops;
  // SO_REUSEPORT hashes each connection to a listener: 64 connections all
  // landing on one of two loops has a chance of 2^-63.
  for (int i = 0; i < 64 && loops.size() < 2; ++i) {
    HttpConnection connection = s.Connect();
    REQUIRE_THAT(connection.Send(Get("/x")), IsOk());
    loops.insert(ReadOk(connection).Header("x-loop"));
  }
  CHECK(loops == std::set<std::string>{"0", "1"});
}

TEST_CASE("a port in use is a clear error", "[edge/http][server][concurrent]") {
  Server first;
  const std::string port = std::to_string(first.server->port());
  for (int threads : {1, 2}) {
    INFO("threads " << threads);
    HttpServerOptions options;
    options.port = first.server->port();
    options.threads = threads;
    TestHandler handler;
    CHECK_THAT(HttpServer::Start(options, &handler),
               HasCodeAndMessage(absl::StatusCode::kUnavailable, "127.0.0.1:" + port));
  }
  // And a port held by two SO_REUSEPORT loops refuses a third server too.
  HttpServerOptions two;
  two.threads = 2;
  Server shared(two);
  HttpServerOptions again = two;
  again.port = shared.server->port();
  TestHandler handler;
  CHECK_THAT(HttpServer::Start(again, &handler), HasCode(absl::StatusCode::kUnavailable));
}

TEST_CASE("bad options and hosts are INVALID_ARGUMENT", "[edge/http][server][concurrent]") {
  TestHandler handler;
  HttpServerOptions options;
  options.host = "localhost";
  CHECK_THAT(HttpServer::Start(options, &handler),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "\"localhost\""));
  options = HttpServerOptions();
  options.host = "192.0.2.1";  // TEST-NET: not an address of this machine
  CHECK_THAT(HttpServer::Start(options, &handler),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "192.0.2.1:0"));
  options = HttpServerOptions();
  options.threads = 0;
  CHECK_THAT(HttpServer::Start(options, &handler), HasCode(absl::StatusCode::kInvalidArgument));
  options = HttpServerOptions();
  options.port = 70000;
  CHECK_THAT(HttpServer::Start(options, &handler), HasCode(absl::StatusCode::kInvalidArgument));
  CHECK_THAT(HttpServer::Start(HttpServerOptions(), nullptr),
             HasCode(absl::StatusCode::kInvalidArgument));
}

size_t Refused(const HttpServerStats& stats, RequestRefusal reason) {
  return stats.refused_requests[static_cast<size_t>(reason)];
}

TEST_CASE("each request shape the server refuses gets its status and its reason counted",
          "[edge/http][server][concurrent]") {
  struct Case {
    const char* what;
    std::string bytes;
    int status;
    RequestRefusal reason;
  };
  std::string many_fields;
  for (int i = 0; i < 100; ++i) many_fields += absl::StrCat("X-", i, ": v\r\n");
  const std::string nul(1, '\0');
  const std::vector<Case> cases = {
      {"obs-fold", Get("/x", "User-Agent: a\r\n b\r\n"), 400, RequestRefusal::kObsFold},
      {"obs-fold, empty first line", Get("/x", "Referer:\r\n\tr\r\n"), 400,
       RequestRefusal::kObsFold},
      {"TE: chunked with obs-fold",
       "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n", 400,
       RequestRefusal::kObsFold},
      {"TE: chunked", "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       400, RequestRefusal::kTransferEncoding},
      {"TE: chunked, identity",
       "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", 400,
       RequestRefusal::kTransferEncoding},
      {"CL.TE",
       "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n"
       "0\r\n\r\nG",
       400, RequestRefusal::kTransferEncoding},
      {"TE.CL",
       "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n"
       "8\r\nSMUGGLED\r\n0\r\n\r\n",
       400, RequestRefusal::kTransferEncoding},
      {"CL: 5, 5", "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\nhello", 400,
       RequestRefusal::kContentLength},
      {"CL twice",
       "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello", 400,
       RequestRefusal::kContentLength},
      {"CL with a sign", "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\nhello", 400,
       RequestRefusal::kContentLength},
      {"CL with inner space", "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 1 0\r\n\r\nhello",
       400, RequestRefusal::kContentLength},
      {"no Host", "GET /x HTTP/1.1\r\nUser-Agent: u\r\n\r\n", 400, RequestRefusal::kHost},
      {"two Host", "GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, RequestRefusal::kHost},
      {"bad Host", "GET /x HTTP/1.1\r\nHost: a b@c\r\n\r\n", 400, RequestRefusal::kHost},
      {"control character", Get("/x", "User-Agent: a\x01z\r\n"), 400, RequestRefusal::kMalformed},
      {"DEL", Get("/x", "User-Agent: a\x7fz\r\n"), 400, RequestRefusal::kMalformed},
      {"NUL in a value", Get("/x", "User-Agent: a" + nul + "z\r\n"), 400,
       RequestRefusal::kMalformed},
      {"NUL in the request line", "GET /x" + nul + " HTTP/1.1\r\nHost: a\r\n\r\n", 400,
       RequestRefusal::kMalformed},
      {"bare LF", "GET /x HTTP/1.1\nHost: a\n\n", 400, RequestRefusal::kMalformed},
      {"bare LF after a field", "GET /x HTTP/1.1\r\nHost: a\nX: y\r\n\r\n", 400,
       RequestRefusal::kMalformed},
      {"101 fields", Get("/x", many_fields), 431, RequestRefusal::kTooManyFields},
  };
  Server s;
  for (const Case& c : cases) {
    INFO(c.what);
    ExpectRefusedWith(s, c.bytes, c.status);
  }
  const HttpServerStats stats = s.server->Stats();
  CHECK(stats.protocol_errors == cases.size());
  for (const Case& c : cases) {
    INFO(c.what);
    size_t expected = 0;
    for (const Case& other : cases) expected += other.reason == c.reason ? 1 : 0;
    CHECK(Refused(stats, c.reason) == expected);
  }
  CHECK(s.handler.handled() == 0);
  // Obs-text is legal: such a value reaches the handler as sent.
  HttpConnection connection = s.Connect();
  REQUIRE_THAT(connection.Send(Get("/x?i=1", "User-Agent: \xff\xfe\r\n")), IsOk());
  CHECK(ReadOk(connection).status == 200);
  CHECK(s.handler.Seen().at(0).user_agent == "\xff\xfe");
}

TEST_CASE("max_header_fields is an option", "[edge/http][server][concurrent]") {
  HttpServerOptions options;
  options.max_header_fields = 3;
  Server s(options);
  HttpConnection connection = s.Connect();
  REQUIRE_THAT(connection.Send(Get("/x?i=1", "A: 1\r\nB: 2\r\n")), IsOk());  // with Host: 3
  CHECK(ReadOk(connection).body == "GET 1");
  ExpectRefusedWith(s, Get("/x", "A: 1\r\nB: 2\r\nC: 3\r\n"), 431);
  CHECK(Refused(s.server->Stats(), RequestRefusal::kTooManyFields) == 1);
}

TEST_CASE(
    "10000 pipelined requests from a client that does not read hold at most "
    "max_output_bytes of responses",
    "[edge/http][server][limits][concurrent]") {
  Server s;
  const size_t bound = HttpServerOptions().max_output_bytes;
  REQUIRE(bound == 64 * 1024);
  constexpr int kRequests = 10000;
  constexpr int kBody = 1024;
  std::string burst;
  for (int i = 0; i < kRequests; ++i) burst += Get(absl::StrCat("/pad?i=", i, "&bytes=", kBody));
  HttpConnection connection = s.Connect();
  // One write of ~400 KB; it blocks until the server has read it all.
  std::thread sender([&] { (void)connection.Send(burst); });
  absl::SleepFor(absl::Milliseconds(500));  // not reading
  const HttpServerStats stalled = s.server->Stats();
  // The socket buffers took a few MB; then the server stopped.
  CHECK(stalled.requests < kRequests);
  for (int i = 0; i < kRequests; ++i) {
    auto response = connection.Read();
    if (!response.ok() || !absl::StartsWith(response->body, absl::StrCat("GET ", i, "."))) {
      sender.join();
      FAIL("response " << i << " wrong: " << response.status());
    }
  }
  sender.join();
  const HttpServerStats stats = s.server->Stats();
  CHECK(stats.requests == kRequests);
  CHECK(stats.output_pauses > 0);
  // One response (about kBody + 80 bytes) may overshoot the bound.
  INFO("peak " << stats.peak_connection_output_bytes << ", buffers while stalled "
               << stalled.connection_buffer_bytes);
  CHECK(stats.peak_connection_output_bytes >= bound);
  CHECK(stats.peak_connection_output_bytes < bound + kBody + 200);
  // Read buffer (max_header_bytes + 4 KiB), two output strings grown by
  // doubling to at most twice the peak, the head values: bounded whatever
  // the number of requests (the responses were 10 MB).
  CHECK(stalled.connection_buffer_bytes <= 20 * 1024 + 4 * (bound + kBody + 200) + 4096);
}

TEST_CASE("buffers grown for a burst shrink once the connection is idle",
          "[edge/http][server][limits][concurrent]") {
  HttpServerOptions options;
  options.header_timeout = absl::Milliseconds(200);  // the sweep runs every 50 ms
  Server s(options);
  HttpConnection connection = s.Connect();
  const size_t small = s.server->Stats().connection_buffer_bytes;
  CHECK(small <= 4096 + 256);
  std::string burst;
  for (int i = 0; i < 500; ++i) burst += Get(absl::StrCat("/pad?i=", i, "&bytes=2000"));
  burst += Get("/x?i=500", "User-Agent: " + std::string(8000, 'u') + "\r\n");
  std::thread sender([&] { (void)connection.Send(burst); });
  for (int i = 0; i <= 500; ++i) {
    auto response = connection.Read();
    if (!response.ok()) break;
  }
  sender.join();
  const size_t grown = s.server->Stats().connection_buffer_bytes;
  INFO("small " << small << ", grown " << grown);
  CHECK(grown > 64 * 1024);
  size_t now = grown;
  for (int i = 0; i < 100 && now > 16 * 1024; ++i) {
    absl::SleepFor(absl::Milliseconds(20));
    now = s.server->Stats().connection_buffer_bytes;
  }
  INFO("after idling " << now);
  CHECK(now <= 16 * 1024);
  // And it still serves.
  REQUIRE_THAT(connection.Send(Get("/x?i=7")), IsOk());
  CHECK(ReadOk(connection).body == "GET 7");
}

TEST_CASE("the buffer of a response far over max_output_bytes is freed once written",
          "[edge/http][server][limits][concurrent]") {
  Server s;  // the sweep runs every second: this is not the idle release
  HttpConnection connection = s.Connect();
  REQUIRE_THAT(connection.Send(Get("/big?i=1")), IsOk());
  CHECK(ReadOk(connection).body.size() == (4u << 20));
  size_t now = s.server->Stats().connection_buffer_bytes;
  for (int i = 0; i < 50 && now > 64 * 1024; ++i) {
    absl::SleepFor(absl::Milliseconds(5));
    now = s.server->Stats().connection_buffer_bytes;
  }
  CHECK(now <= 64 * 1024);
}

TEST_CASE("connections over max_connections_per_client are closed at once and counted",
          "[edge/http][server][limits][concurrent]") {
  HttpServerOptions options;
  options.max_connections_per_client = 2;
  Server s(options);
  std::optional<HttpConnection> first = s.Connect();
  HttpConnection second = s.Connect();
  for (HttpConnection* c : {&*first, &second}) {
    REQUIRE_THAT(c->Send(Get("/x")), IsOk());
    ReadOk(*c);
  }
  HttpConnection third = s.Connect();
  CHECK(third.WaitClosed());
  HttpServerStats stats = s.server->Stats();
  CHECK(stats.connections_refused_per_client == 1);
  CHECK(stats.connections_refused == 0);
  CHECK(stats.open_connections == 2);
  // A closed connection gives its slot back.
  first.reset();
  for (int i = 0; i < 200 && s.server->Stats().open_connections > 1; ++i) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  HttpConnection fourth = s.Connect();
  REQUIRE_THAT(fourth.Send(Get("/x?i=4")), IsOk());
  CHECK(ReadOk(fourth).body == "GET 4");
}

TEST_CASE("exempt peers are not limited per client", "[edge/http][server][limits][concurrent]") {
  HttpServerOptions options;
  options.max_connections_per_client = 1;
  std::atomic<int> asked{0};
  options.exempt_from_client_limit = [&asked](const PeerAddress& peer) {
    ++asked;
    return !peer.is_v6 && peer.bytes[0] == 127;
  };
  Server s(options);
  std::vector<HttpConnection> connections;
  for (int i = 0; i < 3; ++i) {
    connections.push_back(s.Connect());
    REQUIRE_THAT(connections.back().Send(Get(absl::StrCat("/x?i=", i))), IsOk());
    CHECK(ReadOk(connections.back()).body == absl::StrCat("GET ", i));
  }
  CHECK(asked == 3);
  CHECK(s.server->Stats().connections_refused_per_client == 0);
}

}  // namespace
}  // namespace shortener::edge::http
