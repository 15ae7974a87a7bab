// Throughput tool for the edge's HTTP server (not a test): serves a fixed
// 302 (built with the edge's response builder, Date included) so the server
// alone can be compared with nginx's `return 302` under wrk (Release build):
//   taskset -c 0 edge_http_bench --port=18080 &
//   taskset -c 1 wrk -t1 -c64 -d5s http://127.0.0.1:18080/abc
// wrk on one CPU is close to saturation on a 2-vCPU machine, so compare the
// server's CPU time per request too (utime+stime from /proc/PID/stat around
// the run). SIGINT/SIGTERM: drain, print the counters, exit 0.
#include <csignal>
#include <cstdio>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "edge/http/http_server.h"
#include "edge/http_status.h"
#include "edge/response_builder.h"

ABSL_FLAG(int, port, 18080, "port to listen on (127.0.0.1)");
ABSL_FLAG(int, threads, 1, "event loops");

namespace shortener::edge::http {
namespace {

class FixedRedirectHandler : public Handler {
 public:
  void Handle(Exchange& exchange) override {
    ResolveResult result;
    result.outcome = ResolveOutcome::kActive;
    result.location = "https://example.com/";
    ResponseOptions options;
    options.keep_alive = exchange.request().keep_alive;
    options.date = exchange.http_date();
    const ResponsePlan plan = PlanForOutcome(result);
    std::string& out = exchange.out();
    const size_t at = out.size();
    const size_t size = ResponseSize(plan, options);
    out.resize(at + size);
    WriteResponse(plan, options, out.data() + at, size);
  }
};

int Run(int port, int threads) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // the loop threads inherit it
  FixedRedirectHandler handler;
  HttpServerOptions options;
  options.port = port;
  options.threads = threads;
  auto server = HttpServer::Start(options, &handler);
  if (!server.ok()) {
    std::fprintf(stderr, "edge_http_bench: %s\n", server.status().ToString().c_str());
    return 1;
  }
  std::fprintf(stderr, "edge_http_bench: listening on 127.0.0.1:%d\n", (*server)->port());
  int signo = 0;
  sigwait(&signals, &signo);
  (*server)->Shutdown(absl::Seconds(1));
  const HttpServerStats stats = (*server)->Stats();
  std::fprintf(stderr, "edge_http_bench: %llu requests on %llu connections\n",
               static_cast<unsigned long long>(stats.requests),
               static_cast<unsigned long long>(stats.connections_accepted));
  return 0;
}

}  // namespace
}  // namespace shortener::edge::http

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return shortener::edge::http::Run(absl::GetFlag(FLAGS_port), absl::GetFlag(FLAGS_threads));
}
