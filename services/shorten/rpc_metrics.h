// RpcMetrics: every finished ShortenService call counted by method and gRPC
// status code, and the unary calls' latency by method, as prometheus-cpp
// counters and histograms registered in a prometheus::Registry
// (shorten_rpcs_total, shorten_rpc_duration_seconds: docs/operations.md,
// "Metrics"). The series exist from the start (every method with every
// code, at 0), so a rate over a code that never happened yet is 0, not
// absent.
//
// RpcMetricsInterceptorFactory feeds it from a gRPC server interceptor: it
// sees every call of the service whatever path finished it (the handler, a
// refusal before it, a deadline), so no handler has to remember to count.
// Calls of other services (health, reflection) are not counted.
//
// Cost per call (docs/decisions.md, "Service metrics"): one counter
// increment (an atomic add) and one histogram observation (a short mutex of
// the method's histogram), plus the interceptor gRPC allocates per call.
//
// Thread-safe.
#ifndef SHORTENER_SERVICES_SHORTEN_RPC_METRICS_H_
#define SHORTENER_SERVICES_SHORTEN_RPC_METRICS_H_

#include <grpcpp/support/server_interceptor.h>
#include <grpcpp/support/status.h>
#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <optional>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "services/shorten/rpc_counters.h"

namespace shortener::service {

class RpcMetrics {
 public:
  // gRPC status codes 0..16.
  static constexpr int kCodeCount = 17;
  // Upper bounds of shorten_rpc_duration_seconds, in seconds.
  static const std::vector<double>& LatencyBuckets();

  // Registers the families in `registry`, which must outlive this.
  explicit RpcMetrics(prometheus::Registry& registry);

  // One finished call of `rpc`. `latency` is ignored for the streaming
  // WatchInvalidations (a stream's life is not a latency).
  void Observe(Rpc rpc, grpc::StatusCode code, absl::Duration latency);

  // "/shortener.v1.ShortenService/Shorten" -> kShorten; nullopt for any
  // other method.
  static std::optional<Rpc> RpcOfMethod(absl::string_view method);

 private:
  std::array<std::array<prometheus::Counter*, kCodeCount>, kRpcCount> calls_{};
  std::array<prometheus::Histogram*, kRpcCount> latency_{};
};

class RpcMetricsInterceptorFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  // `metrics` outlives the server.
  explicit RpcMetricsInterceptorFactory(RpcMetrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  RpcMetrics* const metrics_;
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_RPC_METRICS_H_
