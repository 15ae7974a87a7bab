// The handler of the edge's admin listener (--admin_listen): /metrics,
// /healthz and /readyz on an address of their own, so that what /metrics
// tells (traffic by status, cache and click-queue figures, connection
// counts, whether the service is reachable) reaches only those who can reach
// that address: loopback by default, a pod's own address in Kubernetes. The
// public port answers /metrics 404 like any unknown path (http_status.h).
//
//   GET|HEAD /metrics  200, Prometheus text (Cache-Control: no-store)
//   GET|HEAD /healthz  200 "ok"
//   GET|HEAD /readyz   200 "ready" or 503 "not ready" (Retry-After: 1)
//   any other path     404, the public port's bytes for an unknown code
//   any other method   405 (Allow: GET, HEAD)
// The query string is ignored. Responses use the public port's status table
// (http_status.h), so both ports say the same thing the same way. Requests
// here are not counted in edge_http_responses_total, which counts the
// public traffic.
//
// Thread safety: Handle runs on the admin server's loop thread; the sources
// are called from it and must be thread-safe (RedirectHandler's are).
#ifndef SHORTENER_EDGE_APP_ADMIN_HANDLER_H_
#define SHORTENER_EDGE_APP_ADMIN_HANDLER_H_

#include <functional>
#include <string>

#include "edge/http/http_server.h"

namespace shortener::edge {

// Where the admin answers come from.
struct AdminSources {
  std::function<std::string()> metrics_text;  // the /metrics body
  std::function<bool()> ready;                // /readyz: can the edge serve misses?
};

class AdminHandler : public http::Handler {
 public:
  explicit AdminHandler(AdminSources sources) : sources_(std::move(sources)) {}

  void Handle(http::Exchange& exchange) override;

 private:
  const AdminSources sources_;
};

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_APP_ADMIN_HANDLER_H_
