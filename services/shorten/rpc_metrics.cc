#include "services/shorten/rpc_metrics.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/strip.h"

namespace shortener::service {
namespace {

constexpr absl::string_view kServicePrefix = "/shortener.v1.ShortenService/";

// Times one call and hands its outcome to RpcMetrics when the server sends
// its status. gRPC creates one per call and deletes it with the call.
class RpcMetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  RpcMetricsInterceptor(RpcMetrics* metrics, Rpc rpc)
      : metrics_(metrics), rpc_(rpc), start_(absl::Now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      metrics_->Observe(rpc_, methods->GetSendStatus().error_code(), absl::Now() - start_);
    }
    methods->Proceed();
  }

 private:
  RpcMetrics* const metrics_;
  const Rpc rpc_;
  const absl::Time start_;
};

}  // namespace

const std::vector<double>& RpcMetrics::LatencyBuckets() {
  static const std::vector<double>* const kBuckets = new std::vector<double>{
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10};
  return *kBuckets;
}

RpcMetrics::RpcMetrics(prometheus::Registry& registry) {
  auto& calls = prometheus::BuildCounter()
                    .Name("shorten_rpcs_total")
                    .Help("ShortenService calls finished, by method and gRPC status code.")
                    .Register(registry);
  auto& latency = prometheus::BuildHistogram()
                      .Name("shorten_rpc_duration_seconds")
                      .Help(
                          "Time from a unary ShortenService call's arrival to its status, by "
                          "method (WatchInvalidations streams are not timed).")
                      .Register(registry);
  for (size_t r = 0; r < kRpcCount; ++r) {
    const std::string method = RpcName(static_cast<Rpc>(r));
    for (int code = 0; code < kCodeCount; ++code) {
      const std::string name = absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
      calls_[r][code] = &calls.Add({{"method", method}, {"code", name}});
    }
    if (static_cast<Rpc>(r) != Rpc::kWatchInvalidations) {
      latency_[r] = &latency.Add({{"method", method}}, LatencyBuckets());
    }
  }
}

void RpcMetrics::Observe(Rpc rpc, grpc::StatusCode code, absl::Duration latency) {
  const size_t r = static_cast<size_t>(rpc);
  const int c = static_cast<int>(code);
  // A code outside the table (none exists today) is counted as UNKNOWN.
  calls_[r][c >= 0 && c < kCodeCount ? c : static_cast<int>(grpc::StatusCode::UNKNOWN)]
      ->Increment();
  if (latency_[r] != nullptr) latency_[r]->Observe(absl::ToDoubleSeconds(latency));
}

std::optional<Rpc> RpcMetrics::RpcOfMethod(absl::string_view method) {
  if (!absl::ConsumePrefix(&method, kServicePrefix)) return std::nullopt;
  for (size_t r = 0; r < kRpcCount; ++r) {
    if (method == RpcName(static_cast<Rpc>(r))) return static_cast<Rpc>(r);
  }
  return std::nullopt;
}

grpc::experimental::Interceptor* RpcMetricsInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  const std::optional<Rpc> rpc = RpcMetrics::RpcOfMethod(info->method());
  // gRPC skips a null interceptor: other services' calls cost nothing more.
  if (!rpc.has_value()) return nullptr;
  return new RpcMetricsInterceptor(metrics_, *rpc);
}

}  // namespace shortener::service
