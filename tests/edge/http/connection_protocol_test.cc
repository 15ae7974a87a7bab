// The connection protocol without a socket (ProtocolHarness): ordering,
// deferral, refusals, the output bound, buffer release; and the per-client
// connection table. Deterministic: no threads, no clock.
#include "edge/http/connection_protocol.h"

#include <catch2/catch.hpp>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "edge/http/client_connection_counts.h"
#include "tests/edge/http/protocol_harness.h"

namespace shortener::edge::http {
namespace {

using testing::ProtocolHarness;

// Answers "HTTP/1.1 200 OK" with body "#<n>" (n counts requests from 0),
// padded to ?bytes=M; "/defer" is deferred and held for the test, "/drop"
// deferred and dropped, "/silent" not answered. Records targets and
// User-Agents.
class ScriptedHandler : public Handler {
 public:
  void Handle(Exchange& exchange) override {
    const Request& request = exchange.request();
    targets.emplace_back(request.target);
    user_agents.emplace_back(request.user_agent);
    arrivals.push_back(exchange.arrival_ns());
    handled_at.push_back(exchange.now_ns());
    const std::string answer = Answer(request);
    if (absl::StartsWith(request.target, "/defer")) {
      deferred.push_back(exchange.Defer());
      answers.push_back(answer);
    } else if (absl::StartsWith(request.target, "/drop")) {
      exchange.Defer();
    } else if (!absl::StartsWith(request.target, "/silent")) {
      exchange.out() += answer;
    }
  }

  // Completes the oldest held deferred response.
  void CompleteOldest() {
    deferred.front().Complete(answers.front());
    deferred.pop_front();
    answers.pop_front();
  }

  std::vector<std::string> targets, user_agents;
  std::vector<int64_t> arrivals, handled_at;
  std::deque<DeferredResponse> deferred;
  std::deque<std::string> answers;

 private:
  std::string Answer(const Request& request) {
    std::string body = absl::StrCat("#", count_++);
    const size_t at = request.target.find("bytes=");
    size_t bytes = 0;
    if (at != absl::string_view::npos && absl::SimpleAtoi(request.target.substr(at + 6), &bytes) &&
        bytes > body.size()) {
      body.resize(bytes, '.');
    }
    return absl::StrCat("HTTP/1.1 200 OK\r\nContent-Length: ", body.size(),
                        "\r\nConnection: ", request.keep_alive ? "keep-alive" : "close", "\r\n\r\n",
                        body);
  }
  int count_ = 0;
};

std::string Get(const std::string& target, const std::string& extra = "") {
  return absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: sho.rt\r\n", extra, "\r\n");
}

// The status codes and bodies of the responses in `bytes`, in order.
std::vector<std::string> Responses(const std::string& bytes) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < bytes.size()) {
    const size_t head_end = bytes.find("\r\n\r\n", at);
    REQUIRE(head_end != std::string::npos);
    const std::string head = bytes.substr(at, head_end - at);
    const size_t cl = head.find("Content-Length: ");
    REQUIRE(cl != std::string::npos);
    size_t length = 0;
    REQUIRE(absl::SimpleAtoi(head.substr(cl + 16, head.find("\r\n", cl) - cl - 16), &length));
    out.push_back(head.substr(9, 3) + " " + bytes.substr(head_end + 4, length).substr(0, 8));
    at = head_end + 4 + length;
  }
  return out;
}

TEST_CASE("pipelined requests are answered in order around a deferred one",
          "[edge/http][protocol]") {
  ScriptedHandler handler;
  ProtocolHarness h(HttpServerOptions(), &handler);
  h.Send(Get("/a") + Get("/defer") + Get("/b") + Get("/c"));
  // /b and /c wait behind the deferred response, unparsed.
  CHECK(Responses(h.TakeReceived()) == std::vector<std::string>{"200 #0"});
  CHECK(handler.targets.size() == 2);
  CHECK(h.protocol().deferred_pending());
  handler.CompleteOldest();
  CHECK(h.DeliverDeferred() == 1);
  h.Run();
  CHECK(Responses(h.TakeReceived()) == std::vector<std::string>{"200 #1", "200 #2", "200 #3"});
  CHECK(h.context().counters.deferred.load() == 1);
  CHECK(h.protocol().Idle());
}

TEST_CASE("a request's arrival is the read of its first byte, not when it is handled",
          "[edge/http][protocol]") {
  ScriptedHandler handler;
  ProtocolHarness h(HttpServerOptions(), &handler);
  constexpr int64_t kSecond = 1'000'000'000;
  const int64_t t0 = ProtocolHarness::kStartNs;
  auto at = [&](int64_t ns) { h.context().SetClock(ns, ProtocolHarness::kUnixSecond); };

  // Three requests in one read; the last two wait behind the deferred one.
  at(t0);
  h.Send(Get("/a") + Get("/defer") + Get("/b"));
  // More arrives while they wait: a whole request, then half of one.
  at(t0 + 2 * kSecond);
  h.Receive(Get("/c"));
  at(t0 + 3 * kSecond);
  const std::string d = Get("/d");
  h.Receive(d.substr(0, 10));
  at(t0 + 5 * kSecond);
  handler.CompleteOldest();
  REQUIRE(h.DeliverDeferred() == 1);
  h.Run();
  // The rest of /d comes later still: /d arrived with its first byte.
  at(t0 + 6 * kSecond);
  h.Send(d.substr(10));
  // An idle connection's next request arrives when it is read.
  at(t0 + 9 * kSecond);
  h.Send(Get("/e"));

  REQUIRE(handler.targets == std::vector<std::string>{"/a", "/defer", "/b", "/c", "/d", "/e"});
  CHECK(handler.handled_at == std::vector<int64_t>{t0, t0, t0 + 5 * kSecond, t0 + 5 * kSecond,
                                                   t0 + 6 * kSecond, t0 + 9 * kSecond});
  // /c came in the read at +2 s but began before the latest read (+3 s):
  // it is given the earliest unparsed read's time, never a later one.
  CHECK(handler.arrivals ==
        std::vector<int64_t>{t0, t0, t0, t0, t0 + 3 * kSecond, t0 + 9 * kSecond});
}

TEST_CASE("after a refused request nothing more is handled or written", "[edge/http][protocol]") {
  ScriptedHandler handler;
  ProtocolHarness h(HttpServerOptions(), &handler);
  h.Send(Get("/a") + "GET /b HTTP/1.1\r\nTransfer-Encoding: chunked\r\nHost: a\r\n\r\n" +
         Get("/c"));
  const std::string received = h.TakeReceived();
  CHECK(Responses(received) == std::vector<std::string>{"200 #0", "400 bad requ"});
  CHECK(absl::StrContains(received, "Connection: close\r\n"));
  CHECK(absl::StrContains(received, "Date: Tue, 02 Jan 2024 03:04:05 GMT\r\n"));
  CHECK(h.protocol().finishing());
  CHECK(h.protocol().MayHaveUnreadInput());
  // Bytes arriving later are not even parsed.
  h.Receive(Get("/d"));
  CHECK_FALSE(h.protocol().Process());
  CHECK(h.protocol().output().empty());
  CHECK(handler.targets == std::vector<std::string>{"/a"});
  CHECK(h.context()
            .counters.refused_requests[static_cast<size_t>(RequestRefusal::kTransferEncoding)]
            .load() == 1);
}

TEST_CASE("a dropped or missing response is answered 500 and ends the connection",
          "[edge/http][protocol]") {
  for (const char* path : {"/drop", "/silent"}) {
    INFO(path);
    ScriptedHandler handler;
    ProtocolHarness h(HttpServerOptions(), &handler);
    h.Send(Get(path) + Get("/after"));
    h.DeliverDeferred();
    h.Run();
    CHECK(Responses(h.TakeReceived()) == std::vector<std::string>{"500 internal"});
    CHECK(h.protocol().finishing());
    CHECK(handler.targets.size() == 1);
  }
}

TEST_CASE("Connection: close and HTTP/1.0 end the connection after their response",
          "[edge/http][protocol]") {
  for (const std::string& request :
       {Get("/a", "Connection: close\r\n"), std::string("GET /a HTTP/1.0\r\n\r\n")}) {
    ScriptedHandler handler;
    ProtocolHarness h(HttpServerOptions(), &handler);
    h.Send(request + Get("/b"));
    CHECK(Responses(h.TakeReceived()) == std::vector<std::string>{"200 #0"});
    CHECK(h.protocol().finishing());
  }
}

TEST_CASE("no request is handled while the unwritten output is at max_output_bytes",
          "[edge/http][protocol]") {
  HttpServerOptions options;
  options.max_output_bytes = 1000;
  ScriptedHandler handler;
  ProtocolHarness h(options, &handler);
  std::string burst;
  for (int i = 0; i < 10; ++i) burst += Get("/x?bytes=300");
  REQUIRE(h.Receive(burst) == burst.size());
  // The client reads nothing: Process stops once 1000 bytes wait.
  CHECK(h.protocol().Process());
  const size_t held = h.protocol().output().size();
  CHECK(held >= 1000);
  CHECK(held < 1000 + 400);
  CHECK(handler.targets.size() == 3);
  CHECK(h.protocol().Process());  // still full: still nothing
  CHECK(handler.targets.size() == 3);
  CHECK(h.context().counters.output_pauses.load() == 2);
  // An asynchronous write in progress counts too.
  h.protocol().BeginAsyncWrite();
  CHECK(h.protocol().Process());
  CHECK(handler.targets.size() == 3);
  h.protocol().AsyncWriteDone();
  h.Run();  // the client reads from now on
  CHECK(handler.targets.size() == 10);
  CHECK(h.context().counters.peak_output.load() == held);
}

TEST_CASE("heads split across reads anywhere give the same requests", "[edge/http][protocol]") {
  std::mt19937 random(42);
  std::vector<std::string> targets, agents;
  std::string stream;
  for (int i = 0; i < 300; ++i) {
    targets.push_back(absl::StrCat("/r", i, "?pad=", std::string(random() % 2000, 'p')));
    agents.push_back(std::string(random() % 3000, static_cast<char>('a' + i % 26)));
    stream += Get(targets.back(), "User-Agent: " + agents.back() + "\r\n");
  }
  ScriptedHandler handler;
  ProtocolHarness h(HttpServerOptions(), &handler);
  for (size_t at = 0; at < stream.size();) {
    const size_t chunk = 1 + random() % 5000;
    at += h.Receive(absl::string_view(stream).substr(at, chunk));
    h.Run();
  }
  CHECK(handler.targets == targets);
  CHECK(handler.user_agents == agents);
  CHECK(Responses(h.received()).size() == 300);
}

TEST_CASE("grown buffers are released after an idle period, not while in use",
          "[edge/http][protocol]") {
  ScriptedHandler handler;
  ProtocolHarness h(HttpServerOptions(), &handler);
  const size_t small = h.protocol().buffer_bytes();
  CHECK(h.context().counters.buffer_bytes.load() == small);
  h.Send(Get("/x?bytes=30000", "User-Agent: " + std::string(12000, 'u') + "\r\n"));
  const size_t grown = h.protocol().buffer_bytes();
  CHECK(grown > small + 40000);
  CHECK(h.context().counters.buffer_bytes.load() == grown);
  CHECK_FALSE(h.protocol().ShouldReleaseBuffers());  // a request in this period
  CHECK(h.protocol().ShouldReleaseBuffers());
  h.protocol().ReleaseBuffers();
  CHECK(h.protocol().buffer_bytes() <= small + 256);
  CHECK(h.context().counters.buffer_bytes.load() == h.protocol().buffer_bytes());
  CHECK_FALSE(h.protocol().ShouldReleaseBuffers());  // nothing left to release
  h.Send(Get("/y"));
  CHECK(Responses(h.TakeReceived()).size() == 2);
}

TEST_CASE("a response far over max_output_bytes is not kept once written",
          "[edge/http][protocol]") {
  HttpServerOptions options;
  options.max_output_bytes = 1000;
  ScriptedHandler handler;
  ProtocolHarness h(options, &handler);
  h.Send(Get("/x?bytes=100000"));
  CHECK(h.protocol().buffer_bytes() < 16 * 1024);
}

TEST_CASE("the buffer gauge counts each connection's buffers until it goes",
          "[edge/http][protocol]") {
  ScriptedHandler handler;
  internal::LoopContext context(0, HttpServerOptions(), &handler,
                                std::make_shared<internal::LoopGate>());
  const auto gauge = [&context] { return context.counters.buffer_bytes.load(); };
  {
    internal::ConnectionProtocol a(&context, nullptr, PeerAddress());
    CHECK(gauge() == a.buffer_bytes());
    {
      internal::ConnectionProtocol b(&context, nullptr, PeerAddress());
      CHECK(gauge() == a.buffer_bytes() + b.buffer_bytes());
    }
    CHECK(gauge() == a.buffer_bytes());
  }
  CHECK(gauge() == 0);
}

PeerAddress V4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  PeerAddress peer;
  peer.bytes = {a, b, c, d};
  return peer;
}

PeerAddress V6(std::array<uint8_t, 16> bytes) {
  PeerAddress peer;
  peer.is_v6 = true;
  peer.bytes = bytes;
  return peer;
}

// Records what the service's HTTP/JSON API reads of a request and answers
// 200 with an empty body.
class BodyHandler : public Handler {
 public:
  void Handle(Exchange& exchange) override {
    const Request& request = exchange.request();
    bodies.emplace_back(request.body);
    authorizations.emplace_back(request.authorization);
    content_types.emplace_back(request.content_type);
    exchange.out() += "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
  }
  std::vector<std::string> bodies, authorizations, content_types;
};

std::string Post(const std::string& body, const std::string& extra = "") {
  return absl::StrCat("POST /v1/links HTTP/1.1\r\nHost: a\r\nContent-Length: ", body.size(), "\r\n",
                      extra, "\r\n", body);
}

TEST_CASE("with keep_body the handler gets the body, Authorization and Content-Type",
          "[edge/http][protocol]") {
  HttpServerOptions options;
  options.keep_body = true;
  options.max_body_bytes = 100 * 1000;
  BodyHandler handler;
  ProtocolHarness h(options, &handler);
  const std::string big(90 * 1000, 'b');  // spans many reads of the 4 KiB buffer
  h.Send(Post("{\"longUrl\":\"x\"}",
              "Authorization: Bearer k1\r\nContent-Type: application/json\r\n") +
         Post(big, "Authorization: Bearer a\r\nAuthorization: Bearer b\r\n") + Post(""));
  REQUIRE(handler.bodies.size() == 3);
  CHECK(handler.bodies[0] == "{\"longUrl\":\"x\"}");
  CHECK(handler.bodies[1] == big);
  CHECK(handler.bodies[2].empty());
  CHECK(handler.authorizations == std::vector<std::string>{"Bearer k1", "Bearer a, Bearer b", ""});
  CHECK(handler.content_types == std::vector<std::string>{"application/json", "", ""});
  CHECK(Responses(h.TakeReceived()).size() == 3);
}

TEST_CASE("without keep_body bodies are discarded and Expect: 100-continue is not answered",
          "[edge/http][protocol]") {
  BodyHandler handler;
  ProtocolHarness h(HttpServerOptions(), &handler);
  h.Send(absl::StrCat("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n",
                      "Expect: 100-continue\r\n\r\n"));
  CHECK(h.TakeReceived().empty());
  h.Send("abc");
  REQUIRE(handler.bodies.size() == 1);
  CHECK(handler.bodies[0].empty());
}

TEST_CASE("with keep_body Expect: 100-continue is answered once the head is accepted",
          "[edge/http][protocol]") {
  HttpServerOptions options;
  options.keep_body = true;
  options.max_body_bytes = 10;
  BodyHandler handler;
  ProtocolHarness h(options, &handler);
  h.Send(absl::StrCat("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n",
                      "Expect: 100-continue\r\n\r\n"));
  CHECK(h.TakeReceived() == "HTTP/1.1 100 Continue\r\n\r\n");
  h.Send("abc");
  REQUIRE(handler.bodies.size() == 1);
  CHECK(handler.bodies[0] == "abc");
  CHECK(Responses(h.TakeReceived()) == std::vector<std::string>{"200 "});
  SECTION("a body over the limit is refused before it is asked for") {
    h.Send(absl::StrCat("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n",
                        "Expect: 100-continue\r\n\r\n"));
    const std::string received = h.TakeReceived();
    CHECK(absl::StartsWith(received, "HTTP/1.1 413 "));
    CHECK_FALSE(absl::StrContains(received, "100 Continue"));
  }
}

TEST_CASE("an error_writer writes the server's own refusals", "[edge/http][protocol]") {
  HttpServerOptions options;
  options.error_writer = [](int status, absl::string_view date, std::string& out) {
    const std::string body = absl::StrCat("{\"status\":", status, "}");
    absl::StrAppend(&out, "HTTP/1.1 ", status, " X\r\nDate: ", date,
                    "\r\nContent-Length: ", body.size(), "\r\nConnection: close\r\n\r\n", body);
  };
  BodyHandler handler;
  ProtocolHarness h(options, &handler);
  h.Send(Post(std::string(options.max_body_bytes + 1, 'x')));
  const std::string received = h.TakeReceived();
  CHECK(Responses(received) == std::vector<std::string>{"413 {\"status"});
  CHECK(absl::StrContains(received, "Date: Tue, 02 Jan 2024 03:04:05 GMT\r\n"));
  CHECK(h.protocol().finishing());
  CHECK(handler.bodies.empty());
}

TEST_CASE("connections are counted per IPv4 address and per IPv6 /64", "[edge/http][limits]") {
  internal::ClientConnectionCounts counts(2);
  const PeerAddress a = V4(192, 0, 2, 1);
  CHECK(counts.TryAdd(a));
  CHECK(counts.TryAdd(a));
  CHECK_FALSE(counts.TryAdd(a));
  CHECK(counts.CountFor(a) == 2);
  CHECK(counts.TryAdd(V4(192, 0, 2, 2)));  // another address
  counts.Remove(a);
  CHECK(counts.TryAdd(a));
  // Two addresses of one /64 are one client; the next /64 is another.
  const PeerAddress x = V6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1});
  const PeerAddress y = V6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0xff, 0, 0, 0, 0, 0, 0, 2});
  const PeerAddress z = V6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1});
  CHECK(counts.TryAdd(x));
  CHECK(counts.TryAdd(y));
  CHECK_FALSE(counts.TryAdd(x));
  CHECK(counts.TryAdd(z));
  CHECK(counts.CountFor(y) == 2);
  // An IPv4 address never shares a count with an IPv6 prefix.
  const PeerAddress zero4 = V4(0, 0, 0, 0);
  const PeerAddress zero6 = V6({});
  CHECK(counts.TryAdd(zero4));
  CHECK(counts.TryAdd(zero6));
  CHECK(counts.CountFor(zero4) == 1);
  // Removing the last connection of a client forgets it.
  counts.Remove(x);
  counts.Remove(y);
  CHECK(counts.CountFor(x) == 0);
}

}  // namespace
}  // namespace shortener::edge::http
