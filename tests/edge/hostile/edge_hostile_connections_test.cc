// Hostile connections against the real redirect-edge (issue 17, item 5,
// scenarios 5-7): 10 000 pipelined requests in one write from a client that
// reads slowly, 500 slowloris clients, and the edge under a low open-file
// limit with connections opened past the limit it derives from it. While
// each runs, the canary's redirects stay fast, revocations reach the edge
// within a second, the edge's memory stays bounded, and every redirect is
// counted as exactly one click.
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/edge/hostile/hostile_clients.h"
#include "tests/edge/hostile/hostile_fixture.h"

namespace shortener::testing {
namespace {

// What a slow reader got back from one burst of pipelined requests.
struct PipelineFigures {
  bool all_sent = false;  // the one send() returned having sent every byte
  int answered = 0;
  int out_of_order = 0;  // answers whose Location is not the one asked for at that place
  int not_302 = 0;
  std::string first_problem;
  // Edge figures read while the client had read nothing yet.
  double output_pauses = 0;
  double peak_output_bytes = 0;
  double buffer_bytes = 0;
  // Buffers of all connections before the burst, and a moment after the
  // last answer was read (the burst's connection still open), with the
  // number of connections open then.
  double buffer_bytes_before = 0;
  double buffer_bytes_after = 0;
  double connections_after = 0;
  absl::Duration read_time;
};

// What one connection's buffers hold between bursts: the 4 KiB read buffer
// and the short header values of its last request, with room to spare
// (measured: about 4.4 KiB).
constexpr double kIdleConnectionBufferBytes = 6 * 1024;

// Sends `burst` in one write (a thread of its own: the send blocks once the
// edge stops reading) on a connection with a small receive buffer, and reads
// the answers slowly: nothing for a second, then at most 16 KiB every 2 ms.
// `expected[i]` is the Location of answer i.
PipelineFigures SendPipelined(const EdgeProcess& edge, const std::string& burst,
                              const std::vector<std::string>& expected) {
  PipelineFigures p;
  p.buffer_bytes_before = edge.Metric("edge_http_connection_buffer_bytes");
  absl::StatusOr<int> fd = ConnectLoopback(edge.port(), 16 * 1024);
  if (!fd.ok()) {
    p.first_problem = fd.status().ToString();
    return p;
  }
  std::thread writer([&] {
    const ssize_t n = ::send(*fd, burst.data(), burst.size(), MSG_NOSIGNAL);
    p.all_sent = n == static_cast<ssize_t>(burst.size());
  });
  absl::SleepFor(absl::Seconds(1));
  const std::map<std::string, double> m = ReadEdgeMetrics(edge);
  p.output_pauses = MetricOr0(m, "edge_http_output_pauses_total");
  p.peak_output_bytes = MetricOr0(m, "edge_http_peak_connection_output_bytes");
  p.buffer_bytes = MetricOr0(m, "edge_http_connection_buffer_bytes");
  const absl::Time start = absl::Now();
  std::string in;
  char chunk[16384];
  while (p.answered < static_cast<int>(expected.size()) &&
         absl::Now() - start < absl::Seconds(60)) {
    const ssize_t n = ::recv(*fd, chunk, sizeof(chunk), 0);
    if (n <= 0) {
      p.first_problem = "connection closed after " + std::to_string(p.answered) + " answers";
      break;
    }
    in.append(chunk, static_cast<size_t>(n));
    Answer answer;
    Take taken;
    while ((taken = TakeAnswer(in, &answer)) == Take::kAnswer) {
      const int i = p.answered++;
      if (answer.status != 302) ++p.not_302;
      if (i < static_cast<int>(expected.size()) && answer.location != expected[i]) ++p.out_of_order;
      if ((answer.status != 302 || answer.location != expected[i]) && p.first_problem.empty()) {
        p.first_problem = absl::StrCat("answer ", i, ": ", answer.status, " ", answer.location);
      }
    }
    if (taken == Take::kMalformed) {
      p.first_problem = "malformed answer after " + std::to_string(p.answered);
      break;
    }
    absl::SleepFor(absl::Milliseconds(2));
  }
  p.read_time = absl::Now() - start;
  // Buffers that grew for the burst go back to their small size once the
  // connection has been idle for a sweep (at most 1 s).
  // Judged per open connection, not against buffer_bytes_before: the
  // canary's and revoker's connections may open after that was read.
  const absl::Time settle = absl::Now() + absl::Seconds(3);
  do {
    absl::SleepFor(absl::Milliseconds(100));
    const std::map<std::string, double> now = ReadEdgeMetrics(edge);
    p.buffer_bytes_after = MetricOr0(now, "edge_http_connection_buffer_bytes");
    p.connections_after = MetricOr0(now, "edge_http_open_connections");
  } while (p.buffer_bytes_after > p.connections_after * kIdleConnectionBufferBytes &&
           absl::Now() < settle);
  shutdown(*fd, SHUT_RDWR);  // unblocks the writer if it still waits
  writer.join();
  close(*fd);
  return p;
}

TEST_CASE(
    "hostile: 10000 pipelined requests in one write, read slowly, are answered in order "
    "with bounded output and counted exactly",
    "[edge/hostile][e2e][hostile]") {
  HostileFixture f;
  // Long Locations (answers of ~1.2 KB, 12 MB in all): more than the
  // kernel's socket buffers hold (tcp_wmem's 4 MiB at most on the edge's
  // side), so the edge's own output bound is what holds the rest back.
  const std::string path(1000, 'p');
  const v1::ShortenResponse a = f.CachedLink(*f.edge, "https://example.com/a/" + path);
  const v1::ShortenResponse b = f.CachedLink(*f.edge, "https://example.com/b/" + path);
  constexpr int kRequests = 10000;
  // Every third request is for b: the Locations show the order. Requests
  // as short as they come (~37 bytes), so one read of the edge's 4 KiB
  // buffer holds about a hundred: 130 KB of answers, past its output bound.
  std::string burst;
  std::vector<std::string> expected;
  for (int i = 0; i < kRequests; ++i) {
    const v1::ShortenResponse& link = i % 3 == 2 ? b : a;
    absl::StrAppend(&burst, "GET /", link.code(), " HTTP/1.1\r\nHost: s\r\n\r\n");
    expected.push_back(link.link().long_url());
  }
  PipelineFigures p;
  const ScenarioFigures figures =
      f.Run("pipelining", *f.edge, [&] { p = SendPipelined(*f.edge, burst, expected); });
  std::fprintf(stderr,
               "hostile[pipelining]: %d answers to %zu bytes of requests in %s of slow reading; "
               "while unread: %.0f output pauses, %.0f bytes of output held at most, %.0f bytes "
               "of connection buffers (%.0f before, %.0f after over %.0f connections)\n",
               p.answered, burst.size(), absl::FormatDuration(p.read_time).c_str(), p.output_pauses,
               p.peak_output_bytes, p.buffer_bytes, p.buffer_bytes_before, p.buffer_bytes_after,
               p.connections_after);
  HostileFixture::CheckScenario(figures);
  INFO(p.first_problem);
  CHECK(p.all_sent);
  CHECK(p.answered == kRequests);
  CHECK(p.not_302 == 0);
  CHECK(p.out_of_order == 0);
  // The edge stopped reading at --max_output_bytes' default (64 KiB, one
  // response may overshoot it) instead of answering all 10 000 into memory.
  CHECK(p.output_pauses >= 1);
  CHECK(p.peak_output_bytes <= 64 * 1024 + 2 * 1024);
  // Every open connection's buffers together (the canary's and revoker's
  // too): the output above, a read buffer of at most 16 + 4 KiB, the head.
  CHECK(p.buffer_bytes <= 256 * 1024);
  // ... and shrank back afterwards: the burst's connection holds what any
  // other does (a 4 KiB read buffer and a few short header values).
  CHECK(p.connections_after >= 1);
  CHECK(p.buffer_bytes_after <= p.connections_after * kIdleConnectionBufferBytes);
  const int64_t to_b = kRequests / 3;
  f.CheckClicks(*f.edge, figures, {{a.code(), kRequests - to_b}, {b.code(), to_b}});
}

TEST_CASE(
    "hostile: 500 slowloris clients are held until the header timeout without slowing "
    "anyone",
    "[edge/hostile][e2e][hostile]") {
  HostileFixture f;
  constexpr int kClients = 500;
  // A head for the canary's code that never ends: were it ever answered, the
  // canary would count a click too many.
  const std::string head = absl::StrCat("GET /", f.canary.code(), " HTTP/1.1\r\nHost: sho.rt\r\n",
                                        "User-Agent: ", kChrome, "\r\nX-Slow: ");
  SlowFigures slow;
  int held = 0;
  double edge_open = 0;
  const ScenarioFigures figures = f.Run("slowloris", *f.edge, [&] {
    SlowClients clients(f.edge->port(), kClients, head, absl::Milliseconds(300));
    absl::SleepFor(absl::Seconds(4));
    held = clients.open();
    edge_open = f.edge->Metric("edge_http_open_connections");
    // The edge drops each one --header_timeout (10 s) after its first byte,
    // within one sweep (1 s).
    const absl::Time deadline = absl::Now() + absl::Seconds(14);
    while (clients.open() > 0 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(100));
    slow = clients.Stop();
  });
  std::fprintf(stderr,
               "hostile[slowloris]: %d clients connected, %d held after 4 s (edge: %.0f open), "
               "%llu bytes trickled; closed by the edge %d, %s to %s after their first byte\n",
               slow.connected, held, edge_open, static_cast<unsigned long long>(slow.bytes_sent),
               slow.closed_by_edge, absl::FormatDuration(slow.min_life).c_str(),
               absl::FormatDuration(slow.max_life).c_str());
  HostileFixture::CheckScenario(figures);
  CHECK(slow.connected == kClients);
  CHECK(held == kClients);
  CHECK(edge_open >= kClients + kCanaryConnections + 1);
  CHECK(slow.closed_by_edge == kClients);
  CHECK(slow.min_life >= absl::Milliseconds(9500));
  CHECK(slow.max_life <= absl::Seconds(13));
  CHECK(slow.bytes_received == 0);  // dropped, never answered
  f.CheckClicks(*f.edge, figures);
}

TEST_CASE(
    "hostile: under a 256-descriptor limit the edge refuses connections past its derived "
    "limit while the canary and clicks go on",
    "[edge/hostile][e2e][hostile]") {
  HostileOptions options;
  options.start_edge = false;
  HostileFixture f(options);
  EdgeProcessOptions edge_options;
  edge_options.launcher = {"/usr/bin/prlimit", "--nofile=256:256"};
  std::unique_ptr<EdgeProcess> edge = f.StartEdge(edge_options);
  const double limit = edge->Metric("edge_http_max_connections");
  INFO(edge->Log());
  REQUIRE(limit > 16);
  REQUIRE(limit < 256);
  const v1::ShortenResponse decoy = f.CachedLink(*edge, "https://example.com/decoy/descriptors");
  const std::string request = GetRequest("/" + decoy.code());
  constexpr int kPast = 40;
  int served = 0, refused = 0, served_again = 0;
  bool fresh_served = false;
  double refused_metric = 0, open_at_limit = 0;
  const ScenarioFigures figures = f.Run("descriptor limit", *edge, [&] {
    // Open now: the canary's and the revoker's (the caching HEADs' are closed).
    REQUIRE(WaitForMetric(*edge, "edge_http_open_connections", kCanaryConnections + 1,
                          absl::Seconds(10)));
    std::vector<HttpConnection> held;
    for (int i = 0; i < static_cast<int>(limit) + kPast; ++i) {
      absl::StatusOr<HttpConnection> c = HttpConnection::Connect(edge->port());
      if (!c.ok()) {
        ++refused;
        continue;
      }
      (void)c->Send(request);
      absl::StatusOr<HttpResponse> r = c->Read(false, absl::Seconds(5));
      if (r.ok() && r->status == 302) {
        ++served;
        held.push_back(*std::move(c));
      } else {
        ++refused;
      }
    }
    open_at_limit = edge->Metric("edge_http_open_connections");
    refused_metric =
        edge->Metric("edge_http_connections_refused_total{reason=\"max_connections\"}");
    absl::SleepFor(absl::Seconds(1));
    // Every connection held is still served.
    for (HttpConnection& c : held) {
      absl::StatusOr<HttpResponse> r =
          c.Send(request).ok() ? c.Read()
                               : absl::StatusOr<HttpResponse>(absl::UnavailableError("send"));
      if (r.ok() && r->status == 302) ++served_again;
    }
    // Room again once some close.
    held.erase(held.begin() + static_cast<std::ptrdiff_t>(held.size() / 2), held.end());
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!fresh_served && absl::Now() < deadline) {
      absl::StatusOr<HttpResponse> r = HttpGet(edge->port(), "/" + decoy.code(), "GET",
                                               absl::StrCat("User-Agent: ", kChrome, "\r\n"));
      fresh_served = r.ok() && r->status == 302;
      if (!fresh_served) absl::SleepFor(absl::Milliseconds(50));
    }
  });
  std::fprintf(stderr,
               "hostile[descriptor limit]: --max_connections derived %.0f under 256 descriptors; "
               "%d more served, %d refused (metric %.0f), %.0f open at the limit\n",
               limit, served, refused, refused_metric, open_at_limit);
  HostileFixture::CheckScenario(figures);
  CHECK(served == static_cast<int>(limit) - kCanaryConnections - 1);
  CHECK(refused == kPast + kCanaryConnections + 1);
  CHECK(refused_metric == refused);
  CHECK(open_at_limit == limit);
  CHECK(served_again == served);
  CHECK(fresh_served);
  CHECK(edge->Metric("edge_click_rpc_failures_total") == 0);
  f.CheckClicks(*edge, figures, {{decoy.code(), served + served_again + (fresh_served ? 1 : 0)}});
}

}  // namespace
}  // namespace shortener::testing
