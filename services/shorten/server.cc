#include "services/shorten/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "edge/app/admin_handler.h"
#include "lib/common/log.h"
#include "lib/common/status_macros.h"
#include "lib/common/termination_signals.h"
#include "lib/grpcutil/tls.h"
#include "services/shorten/admin_server.h"
#include "services/shorten/http/api_handler.h"
#include "services/shorten/request_limits.h"
#include "services/shorten/rpc_metrics.h"
#include "services/shorten/service_metrics.h"
#include "services/shorten/service_parts.h"

namespace shortener::service {
namespace {

constexpr char kServiceName[] = "shortener.v1.ShortenService";

// SIGHUP: a GeoIP database again (the weekly or monthly update). A file
// that does not open, or is of the wrong kind, keeps the database in effect.
void ReloadGeoDb(geoip::GeoDbHolder* db) {
  if (db == nullptr) return;
  absl::Status reloaded = db->Reload();
  if (reloaded.ok()) {
    LogInfo("SIGHUP: GeoIP database reloaded: %s (%s)", db->Current()->description(), db->path());
  } else {
    LogWarning("SIGHUP: GeoIP database not reloaded, the previous one stays: %s",
               reloaded.ToString());
  }
}

// SIGHUP: the files that may change under a running service.
void ReloadFiles(ServiceParts& parts) {
  if (parts.deny_list == nullptr && parts.geo == nullptr) {
    LogInfo(
        "SIGHUP: nothing to reload (no --denied_domains_file, no --geoip_db, no --geoip_asn_db)");
    return;
  }
  // Logs the outcome; a failure keeps the list in effect.
  if (parts.deny_list != nullptr) parts.deny_list->Reload("SIGHUP").IgnoreError();
  if (parts.geo != nullptr) {
    ReloadGeoDb(parts.geo->location());
    ReloadGeoDb(parts.geo->network());
  }
}

// gRPC keepalive: the service pings idle connections every keepalive_time
// (streams included, however long they stay silent) and drops a connection
// whose ping goes unanswered for keepalive_timeout, so the subscription of an
// edge that vanished goes away. Edges (clients) may ping too, as often as
// every 5 s, also on a stream with no data: that is how an edge notices a
// dead service behind a silent WatchInvalidations stream.
void AddKeepaliveArgs(const ServerConfig& config, grpc::ServerBuilder& builder) {
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS,
                             static_cast<int>(absl::ToInt64Milliseconds(config.keepalive_time)));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                             static_cast<int>(absl::ToInt64Milliseconds(config.keepalive_timeout)));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
}

// "plaintext", "TLS (certificate F)" or "mTLS (certificate F, client
// certificates signed by G)": whoever reads the start line should not have
// to guess how clients must connect.
std::string DescribeTls(const grpcutil::ServerTlsOptions& tls) {
  const grpcutil::TlsMode mode = grpcutil::ServerTlsModeOf(tls);
  std::string text(grpcutil::TlsModeName(mode));
  if (mode == grpcutil::TlsMode::kTls) absl::StrAppend(&text, " (certificate ", tls.cert_file, ")");
  if (mode == grpcutil::TlsMode::kMutualTls) {
    absl::StrAppend(&text, " (certificate ", tls.cert_file, ", client certificates signed by ",
                    tls.client_ca_file, ")");
  }
  return text;
}

// The gRPC server of `service`, listening on config.listen, started.
absl::StatusOr<std::unique_ptr<grpc::Server>> StartGrpcServer(
    const ServerConfig& config, std::shared_ptr<grpc::ServerCredentials> credentials,
    ShortenServiceImpl* service, RpcMetrics* rpc_metrics) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // Counts and times every call (shorten_rpcs_total, rpc_metrics.h).
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<RpcMetricsInterceptorFactory>(rpc_metrics));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  int port = 0;
  builder.AddListeningPort(config.listen, credentials, &port);
  builder.RegisterService(service);
  // Sized for the largest legitimate request (a full BatchShorten: the
  // arithmetic is in request_limits.h), not more; each method has its own,
  // smaller limit on top.
  const size_t receive_limit = RequestLimits(config.max_url_length).ReceiveLimit();
  builder.SetMaxReceiveMessageSize(static_cast<int>(receive_limit));
  // One connection cannot hold more calls than this at once (the edge needs
  // a handful; a batch client tens).
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, config.max_concurrent_streams);
  // gRPC sets SO_REUSEPORT by default: a second process on the same port
  // (a misconfigured replica, a test that raced for a free port) would then
  // silently take half the connections. Fail to start instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // channelz keeps per-call counters for a debug service we do not register.
  builder.AddChannelArgument(GRPC_ARG_ENABLE_CHANNELZ, 0);
  AddKeepaliveArgs(config, builder);
  // Clients that resolve a name (edges on a headless Service's dns:/// name)
  // look it up again only when a connection closes: closing each now and
  // then lets them find replicas added since. The grace stays unlimited, so
  // a WatchInvalidations stream is not cut.
  if (config.max_connection_age > absl::ZeroDuration()) {
    builder.AddChannelArgument(
        GRPC_ARG_MAX_CONNECTION_AGE_MS,
        static_cast<int>(absl::ToInt64Milliseconds(config.max_connection_age)));
  }
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return absl::UnavailableError(absl::StrCat("--listen: cannot listen on ", config.listen));
  }
  server->GetHealthCheckService()->SetServingStatus(kServiceName, true);
  LogInfo(
      "shorten-service listening on %s (port %d) over %s, base_url %s; requests up to %d "
      "bytes, %d calls per connection",
      config.listen, port, DescribeTls(config.tls), config.base_url, receive_limit,
      config.max_concurrent_streams);
  return server;
}

// The shutdown summary: calls served per method (a stable format that tests
// parse: docs/operations.md), then how well reads and invalidations batched.
void LogServed(const ServiceParts& parts) {
  LogInfo("%s", parts.service->counters().Summary());
  store::ReadBatcher::Stats reads = parts.reads->GetStats();
  InvalidationHub::Stats hub = parts.hub->GetStats();
  LogInfo(
      "resolve batching: %d look-ups in %d queries; invalidations: %d codes in %d batches, "
      "%d drop_all(s) from the listener, %d for slow subscribers",
      reads.lookups, reads.queries, hub.codes, hub.batches, hub.drop_alls, hub.overflows);
  const ThreadPool::Stats blocking = parts.blocking_pool->GetStats();
  const ThreadPool::Stats keys = parts.key_lookup_pool->GetStats();
  LogInfo(
      "refused for full queues: blocking pool %d, key look-up pool %d, read batcher %d, "
      "group committer %d links",
      blocking.refused, keys.refused, reads.refused, parts.committer->GetStats().refused);
}

// Last resort: if draining hangs (a database that accepts connections but
// never answers), exit non-zero instead of hanging forever.
void StartShutdownWatchdog(absl::Duration limit) {
  std::thread([limit] {
    absl::SleepFor(limit);
    LogError("shutdown did not finish within %s: exiting", absl::FormatDuration(limit));
    std::_Exit(1);
  }).detach();
}

// The HTTP/JSON API, if --http_listen is set: routes from the service's
// google.api.http options, calls through `server`'s in-process channel.
// `handler` is set before the listener starts and must outlive it.
absl::StatusOr<std::unique_ptr<edge::http::HttpServer>> StartHttpApi(
    const ServerConfig& config, grpc::Server& server, std::unique_ptr<http::ApiHandler>& handler) {
  if (config.http_listen.empty()) return std::unique_ptr<edge::http::HttpServer>();
  SHORTENER_ASSIGN_OR_RETURN(http::RouteTable routes, http::LoadShortenServiceRoutes());
  grpc::ChannelArguments args;
  // Answers are ours and as large as the RPC makes them (a 4096 px SVG).
  args.SetMaxReceiveMessageSize(-1);
  http::HttpApiOptions options;
  options.listen = config.http_listen;
  options.max_connections = static_cast<size_t>(config.http_max_connections);
  options.max_body_bytes = static_cast<size_t>(config.http_max_body_bytes);
  handler = std::make_unique<http::ApiHandler>(std::move(routes), server.InProcessChannel(args),
                                               options.call_timeout);
  return http::StartApiServer(options, handler.get());
}

// Stops `server` after a termination signal: no new calls, streams ended,
// calls in flight given the grace period; then the parts, in order.
void Drain(const ServerConfig& config, int signo, grpc::Server& server, ServiceParts& parts,
           edge::http::HttpServer* admin, edge::http::HttpServer* http_api) {
  LogInfo("signal %d: draining (grace %s)", signo, absl::FormatDuration(config.shutdown_grace));
  StartShutdownWatchdog(config.shutdown_grace + absl::Seconds(20));
  server.GetHealthCheckService()->SetServingStatus(false);
  parts.readiness->SetServing(false);  // /readyz 503; /metrics stays until the parts stop
  // WatchInvalidations streams never end by themselves: end them now (the
  // edges resubscribe elsewhere) or Shutdown would wait the whole grace.
  parts.hub->Close();
  // The HTTP API drains alongside (within the same grace): no new
  // connections, its requests in flight finish as the gRPC calls they are;
  // one arriving on an open connection from now on is refused UNAVAILABLE
  // (503) by the stopping server, and its connection closed.
  std::thread http_drain;
  if (http_api != nullptr) {
    http_drain = std::thread([http_api, &config] { http_api->Shutdown(config.shutdown_grace); });
  }
  // Stops accepting, lets in-flight calls finish until the grace period ends,
  // then cancels the rest. In-flight Shorten calls complete when their batch
  // commits, which the committer keeps doing until it is destroyed.
  server.Shutdown(std::chrono::system_clock::now() + absl::ToChronoSeconds(config.shutdown_grace));
  server.Wait();
  if (http_drain.joinable()) http_drain.join();
  LogServed(parts);
  if (admin != nullptr) admin->Shutdown(absl::Seconds(1));  // it reads the parts
  parts.Stop();
}

}  // namespace

absl::Status RunServer(const ServerConfig& unchecked) {
  SHORTENER_ASSIGN_OR_RETURN(const ValidServerConfig valid, ValidateConfig(unchecked));
  const ServerConfig& config = *valid;
  if (config.migrate == MigrateMode::kOnly) {
    SHORTENER_RETURN_IF_ERROR(MigrateOnly(valid));
    LogInfo("--migrate=only: schema migrations done, exiting");
    return absl::OkStatus();
  }
  // Before the database: a bad certificate or key should stop the start at
  // once, not after migrations.
  SHORTENER_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                             grpcutil::MakeServerCredentials(config.tls));
  SHORTENER_ASSIGN_OR_RETURN(std::unique_ptr<ServiceParts> parts, BuildParts(valid));
  // Set once the HTTP/JSON API listens; read by scrapes on the admin thread.
  std::atomic<const edge::http::HttpServer*> http_api_stats{nullptr};
  ServiceMetrics metrics([&parts, &config, &http_api_stats] {
    return GatherStats(*parts, config, http_api_stats.load());
  });
  edge::AdminHandler admin_handler(edge::AdminSources{
      [&metrics] { return metrics.Render(); }, [&parts] { return parts->readiness->Ready(); }});
  std::unique_ptr<edge::http::HttpServer> admin;
  if (config.admin_listen.empty()) {
    LogInfo("--admin_listen is empty: no /metrics, /healthz, /readyz");
  } else {
    SHORTENER_ASSIGN_OR_RETURN(admin, StartAdminServer(config.admin_listen, &admin_handler));
  }
  SHORTENER_ASSIGN_OR_RETURN(
      std::unique_ptr<grpc::Server> server,
      StartGrpcServer(config, credentials, parts->service.get(), &metrics.rpcs()));
  std::unique_ptr<http::ApiHandler> api_handler;
  SHORTENER_ASSIGN_OR_RETURN(std::unique_ptr<edge::http::HttpServer> http_api,
                             StartHttpApi(config, *server, api_handler));
  http_api_stats.store(http_api.get());
  parts->readiness->SetServing(true);
  const int signo = ::shortener::WaitForTermination([&parts] { ReloadFiles(*parts); });
  Drain(config, signo, *server, *parts, admin.get(), http_api.get());
  LogInfo("shorten-service stopped");
  return absl::OkStatus();
}

}  // namespace shortener::service
