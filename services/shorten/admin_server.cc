#include "services/shorten/admin_server.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "edge/http/host_port.h"
#include "lib/common/log.h"
#include "lib/common/status_macros.h"

namespace shortener::service {
namespace {

QueueStats PoolQueue(std::string name, const ThreadPool& pool) {
  const ThreadPool::Stats stats = pool.GetStats();
  return QueueStats{std::move(name), stats.queued, pool.max_queued(), stats.refused};
}

}  // namespace

absl::StatusOr<std::unique_ptr<edge::http::HttpServer>> StartAdminServer(
    const std::string& listen, edge::http::Handler* handler) {
  edge::http::HttpServerOptions options;
  SHORTENER_RETURN_IF_ERROR(
      edge::SplitHostPort("admin_listen", listen, &options.host, &options.port));
  options.threads = 1;
  options.max_connections = kAdminMaxConnections;
  options.max_connections_per_client = kAdminMaxConnections;
  options.max_header_bytes = kAdminMaxHeaderBytes;
  options.max_request_line = kAdminMaxRequestLine;
  options.max_body_bytes = 0;
  options.max_header_fields = 64;
  absl::StatusOr<std::unique_ptr<edge::http::HttpServer>> server =
      edge::http::HttpServer::Start(options, handler);
  if (!server.ok()) {
    return absl::Status(server.status().code(),
                        absl::StrCat("--admin_listen: ", server.status().message()));
  }
  LogInfo("admin listener (/metrics, /healthz, /readyz) on %s:%d", options.host, (*server)->port());
  return server;
}

ServiceStats GatherStats(const ServiceParts& parts, const ServerConfig& config,
                         const edge::http::HttpServer* http_api) {
  ServiceStats s;
  for (size_t r = 0; r < kRpcCount; ++r) {
    s.received[r] = parts.service->counters().Get(static_cast<Rpc>(r));
  }
  s.commits = parts.committer->GetStats();
  s.reads = parts.reads->GetStats();
  s.ids = parts.ids->GetStats();
  s.invalidations = parts.hub->GetStats();
  s.clicks = parts.click_recorder->GetStats();
  s.keys = parts.key_cache->GetStats();
  s.pools = {{"links", parts.link_store->pool_stats()},
             {"clicks", parts.click_store->pool_stats()},
             {"api_keys", parts.api_key_store->pool_stats()}};
  s.queues = {
      PoolQueue("blocking", *parts.blocking_pool),
      PoolQueue("key_lookup", *parts.key_lookup_pool),
      {"read_batcher", static_cast<uint64_t>(s.reads.queued),
       static_cast<uint64_t>(config.resolve_queue), static_cast<uint64_t>(s.reads.refused)},
      {"group_committer", static_cast<uint64_t>(s.commits.queued),
       static_cast<uint64_t>(config.group_commit_queue), static_cast<uint64_t>(s.commits.refused)}};
  s.ready = parts.readiness != nullptr && parts.readiness->Ready();
  if (http_api != nullptr) s.http_api = http_api->Stats();
  return s;
}

}  // namespace shortener::service
