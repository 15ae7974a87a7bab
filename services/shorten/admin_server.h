// shorten-service's admin listener (--admin_listen): GET|HEAD /metrics
// (ServiceMetrics, Prometheus text), /healthz (200 while the process runs)
// and /readyz (Readiness: 200 "ready" or 503 "not ready"), answered exactly
// as the edge's admin listener answers them (edge/app/admin_handler.h: the
// same handler on the same HTTP server, edge/http/http_server.h), so both
// processes are probed and scraped alike. Its own address: loopback by
// default, the pod's address in Kubernetes.
//
// Bounds (each has a test in tests/services/shorten/e2e/metrics_e2e_test.cc):
// kAdminMaxConnections connections at once (more are closed unanswered), a
// request head of at most kAdminMaxHeaderBytes (431 beyond), a request line
// of kAdminMaxRequestLine (414), no request body (413), one loop thread.
//
// GatherStats reads every part's Stats for one scrape.
//
// Thread safety: StartAdminServer on the server's thread; GatherStats from
// any thread while the parts live.
#ifndef SHORTENER_SERVICES_SHORTEN_ADMIN_SERVER_H_
#define SHORTENER_SERVICES_SHORTEN_ADMIN_SERVER_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "edge/http/http_server.h"
#include "services/shorten/service_metrics.h"
#include "services/shorten/service_parts.h"

namespace shortener::service {

inline constexpr size_t kAdminMaxConnections = 16;
inline constexpr size_t kAdminMaxHeaderBytes = 8 * 1024;
inline constexpr size_t kAdminMaxRequestLine = 2 * 1024;

// Starts the listener on `listen` ("host:port"; port 0: any free one) and
// logs "admin listener (/metrics, /healthz, /readyz) on HOST:PORT" (tests
// read the port from it). `handler` outlives the server. INVALID_ARGUMENT
// naming --admin_listen for a malformed address; UNAVAILABLE naming it when
// the address cannot be bound.
absl::StatusOr<std::unique_ptr<edge::http::HttpServer>> StartAdminServer(
    const std::string& listen, edge::http::Handler* handler);

// Every part's figures, for ServiceMetrics (`config`: the queues' limits;
// `http_api`: the HTTP/JSON API's server, or null when it is off). The parts
// must all be built (BuildParts) and not yet stopped.
ServiceStats GatherStats(const ServiceParts& parts, const ServerConfig& config,
                         const edge::http::HttpServer* http_api);

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_ADMIN_SERVER_H_
