#include "edge/app/edge_server.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "edge/app/admin_handler.h"
#include "edge/app/edge_metrics.h"
#include "edge/app/redirect_handler.h"
#include "edge/clicks/click_spool.h"
#include "edge/clicks/click_transport.h"
#include "edge/client_ip.h"
#include "edge/descriptor_budget.h"
#include "edge/http/http_server.h"
#include "edge/upstream/invalidation_watcher.h"
#include "edge/upstream/resolve_batcher.h"
#include "edge/upstream/service_client.h"
#include "grpcpp/channel.h"
#include "lib/codec/short_codec.h"
#include "lib/common/log.h"
#include "lib/common/status_macros.h"
#include "lib/common/termination_signals.h"
#include "lib/grpcutil/api_key_channel.h"
#include "lib/url/url_policy.h"

namespace shortener::edge {

namespace {

absl::Status ValidateClickConfig(const EdgeClickConfig& c) {
  if (c.sender.batch_size < 1 || c.sender.batch_size > 10000) {
    return absl::InvalidArgumentError("--click_batch must be 1..10000");
  }
  if (c.sender.flush_interval <= absl::ZeroDuration() ||
      c.sender.rpc_timeout <= absl::ZeroDuration() || c.flush_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "--click_flush_interval and --click_rpc_timeout must be > 0, --click_flush_timeout >= 0");
  }
  if (c.queue.max_events < 1 || c.queue.max_bytes < 4096) {
    return absl::InvalidArgumentError(
        "--click_queue_events must be >= 1 and --click_queue_bytes >= 4096");
  }
  if (c.spool_max_bytes < 1024 * 1024) {
    return absl::InvalidArgumentError("--click_spool_max_bytes must be >= 1048576");
  }
  return absl::OkStatus();
}

// Connections the admin listener keeps open at most: scrapers and probes,
// not the public.
constexpr size_t kAdminMaxConnections = 64;

// --admin_listen: a host:port of its own, never the public port (whose
// connections would otherwise reach /metrics). The bind would fail anyway
// (HttpServer never shares a port it did not open); this says why, naming
// both flags, before anything starts.
absl::Status ValidateAdminListen(const EdgeConfig& c) {
  if (c.admin_listen.empty()) return absl::OkStatus();
  std::string host;
  int port = 0;
  int public_port = 0;
  SHORTENER_RETURN_IF_ERROR(SplitHostPort("admin_listen", c.admin_listen, &host, &port));
  SHORTENER_RETURN_IF_ERROR(SplitHostPort("listen", c.listen, &host, &public_port));
  if (port != 0 && port == public_port) {
    return absl::InvalidArgumentError(absl::StrCat("--admin_listen=\"", c.admin_listen,
                                                   "\": must not use the --listen port ", port,
                                                   " (/metrics must stay off the public port)"));
  }
  return absl::OkStatus();
}

// The admin listener (/metrics, /healthz, /readyz) on --admin_listen; null
// when it is empty.
absl::StatusOr<std::unique_ptr<http::HttpServer>> StartAdminServer(const std::string& admin_listen,
                                                                   http::Handler* handler) {
  if (admin_listen.empty()) {
    LogInfo("--admin_listen is empty: no /metrics");
    return std::unique_ptr<http::HttpServer>();
  }
  http::HttpServerOptions options;
  SHORTENER_RETURN_IF_ERROR(
      SplitHostPort("admin_listen", admin_listen, &options.host, &options.port));
  options.threads = 1;
  options.max_connections = kAdminMaxConnections;
  options.max_connections_per_client = kAdminMaxConnections;
  absl::StatusOr<std::unique_ptr<http::HttpServer>> server =
      http::HttpServer::Start(options, handler);
  if (!server.ok()) {
    return absl::Status(server.status().code(),
                        absl::StrCat("--admin_listen: ", server.status().message()));
  }
  LogInfo("admin listener (/metrics, /healthz, /readyz) on %s:%d", options.host, (*server)->port());
  return server;
}

// Raises the open-file soft limit to the hard one (the hard limit is the
// administrator's word, the soft one only a default), then fits
// --max_connections under it (descriptor_budget.h) and logs both.
absl::StatusOr<ConnectionBudget> BudgetConnections(const EdgeConfig& c, int threads) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return absl::InternalError(absl::StrCat("getrlimit(RLIMIT_NOFILE): ", std::strerror(errno)));
  }
  const rlim_t soft_before = limit.rlim_cur;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) != 0 && limit.rlim_max == RLIM_INFINITY) {
      // An unlimited hard limit still stops at the kernel's fs.nr_open.
      uint64_t nr_open = 0;
      std::ifstream("/proc/sys/fs/nr_open") >> nr_open;
      raised.rlim_cur = static_cast<rlim_t>(nr_open);
      if (nr_open > limit.rlim_cur) setrlimit(RLIMIT_NOFILE, &raised);
    }
    getrlimit(RLIMIT_NOFILE, &limit);
  }
  DescriptorNeeds needs;
  needs.event_loops = threads;
  needs.admin_connections = c.admin_listen.empty() ? 0 : kAdminMaxConnections;
  SHORTENER_ASSIGN_OR_RETURN(ConnectionBudget budget,
                             PlanConnections(limit.rlim_cur, needs, c.max_connections));
  LogInfo(
      "open-file limit %d (soft was %d, hard %d); --max_connections %d (%s; %d descriptors "
      "reserved); --max_connections_per_client %d",
      limit.rlim_cur, soft_before, limit.rlim_max, budget.max_connections,
      budget.derived ? "derived from the limit" : "as given", budget.reserved,
      c.max_connections_per_client);
  if (budget.derived && budget.max_connections < 1024) {
    LogWarning(
        "only %d client connections fit the open-file limit %d: raise it (ulimit -n, "
        "systemd LimitNOFILE=)",
        budget.max_connections, limit.rlim_cur);
  }
  return budget;
}

// The spool of --click_spool_dir, or an in-memory one without it.
absl::StatusOr<std::unique_ptr<ClickSpool>> OpenClickSpool(const EdgeClickConfig& c) {
  if (c.spool_dir.empty()) {
    // Capped like the queue, not by --click_spool_max_bytes: that one is
    // sized for a disk, and a service that refuses clicks for hours must
    // not grow the edge's memory by a gigabyte.
    LogWarning(
        "no --click_spool_dir: clicks that cannot be sent wait in memory (up to %d bytes, "
        "--click_queue_bytes) and are lost if the edge stops before the service takes them",
        c.queue.max_bytes);
    return std::unique_ptr<ClickSpool>(std::make_unique<InMemoryClickSpool>(c.queue.max_bytes));
  }
  FileClickSpoolOptions options;
  options.dir = c.spool_dir;
  options.max_bytes = c.spool_max_bytes;
  absl::StatusOr<std::unique_ptr<ClickSpool>> spool = OpenFileClickSpool(options);
  if (!spool.ok()) {
    return absl::Status(spool.status().code(),
                        absl::StrCat("--click_spool_dir: ", spool.status().message()));
  }
  return spool;
}

}  // namespace

absl::Status ValidateEdgeConfig(const EdgeConfig& c) {
  std::string host;
  int port = 0;
  SHORTENER_RETURN_IF_ERROR(SplitHostPort("listen", c.listen, &host, &port));
  if (c.service.empty()) return absl::InvalidArgumentError("--service is required (HOST:PORT)");
  if (c.codec_secret_file.empty()) {
    return absl::InvalidArgumentError(
        "--codec_secret_file is required (the shorten-service's secret file)");
  }
  if (c.api_key_file.empty()) {
    return absl::InvalidArgumentError(
        "--api_key_file is required (an infrastructure key with scopes "
        "resolve,record_clicks,watch_invalidations: `shortenctl keys create --name edge "
        "--infrastructure --scopes resolve,record_clicks,watch_invalidations`)");
  }
  if (c.threads < 0 || c.threads > 256) {
    return absl::InvalidArgumentError("--threads must be 0 (one per core) .. 256");
  }
  if (c.min_code_length < 1 || c.min_code_length > codec::ShortCodec::kMaxBodyLength) {
    return absl::InvalidArgumentError("--min_code_length must be 1..10 (the service's value)");
  }
  if (c.cache.max_entries < 1) return absl::InvalidArgumentError("--cache_entries must be >= 1");
  if (c.cache.max_bytes < 4096) return absl::InvalidArgumentError("--cache_bytes must be >= 4096");
  if (c.cache.positive_ttl <= absl::ZeroDuration() || c.cache.negative_ttl < absl::ZeroDuration() ||
      c.cache.stale_grace < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "--cache_ttl must be > 0; --negative_cache_ttl and --stale_grace >= 0");
  }
  if (c.resolve_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--resolve_timeout must be > 0");
  }
  if (c.resolve_batch < 1 || c.resolve_batch > 1000) {
    return absl::InvalidArgumentError("--resolve_batch must be 1..1000");
  }
  if (c.resolve_in_flight < 1)
    return absl::InvalidArgumentError("--resolve_in_flight must be >= 1");
  if (c.resolve_queue < 1) return absl::InvalidArgumentError("--resolve_queue must be >= 1");
  if (c.miss_deadline < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "--miss_deadline must be >= 0 (0: --resolve_timeout + 500ms)");
  }
  if (c.max_alias_misses < 1) return absl::InvalidArgumentError("--max_alias_misses must be >= 1");
  if (c.shutdown_delay < absl::ZeroDuration() || c.shutdown_grace < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--shutdown_delay and --shutdown_grace must be >= 0");
  }
  if (!(c.cache.negative_share >= 0 && c.cache.negative_share <= 0.5)) {
    return absl::InvalidArgumentError("--negative_cache_share must be 0..0.5");
  }
  if (c.max_request_line < 64)
    return absl::InvalidArgumentError("--max_request_line must be >= 64");
  SHORTENER_RETURN_IF_ERROR(ValidateClickConfig(c.clicks));
  SHORTENER_RETURN_IF_ERROR(ValidateAdminListen(c));
  if (absl::Status schemes = url::ValidateSchemes(c.allowed_schemes); !schemes.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--allowed_schemes: ", schemes.message()));
  }
  SHORTENER_RETURN_IF_ERROR(grpcutil::ValidateClientTlsOptions(c.service_tls));
  return TrustedProxies::Parse(c.trusted_proxies).status();
}

absl::Duration MissDeadline(const EdgeConfig& config) {
  return config.miss_deadline > absl::ZeroDuration()
             ? config.miss_deadline
             : config.resolve_timeout + absl::Milliseconds(500);
}

namespace {

void WarnTooBroadProxies(const TrustedProxies& trusted) {
  for (const std::string& range : trusted.TooBroadRanges()) {
    LogWarning(
        "--trusted_proxies: %s covers a large part of the internet: every client in it "
        "can then pick its own address with X-Forwarded-For (the address clicks, "
        "visits and access logs record) and is exempt from "
        "--max_connections_per_client; list only your load balancers' addresses",
        range);
  }
}

// The codec of --codec_secret_file and --min_code_length (the service's).
absl::StatusOr<codec::ShortCodec> LoadCodec(const EdgeConfig& config) {
  absl::StatusOr<std::string> secret = codec::ReadSecretFile(config.codec_secret_file);
  if (!secret.ok()) {
    return absl::Status(secret.status().code(),
                        absl::StrCat("--codec_secret_file: ", secret.status().message()));
  }
  codec::CodecOptions codec_options;
  codec_options.secret = *std::move(secret);
  codec_options.min_body_length = config.min_code_length;
  return codec::ShortCodec::Create(codec_options);
}

// The click path: spool, queue, sender. Opened before serving so that a bad
// spool directory stops the start. Without --record_clicks none of it
// exists and the handler records nothing.
struct ClickPipeline {
  std::unique_ptr<ClickSpool> spool;
  std::unique_ptr<ClickQueue> queue;
  std::unique_ptr<GrpcClickTransport> transport;
  std::unique_ptr<ClickSender> sender;

  ClickRecording recording() const { return {queue.get(), sender.get(), spool.get()}; }
};

absl::StatusOr<ClickPipeline> StartClickPipeline(const EdgeConfig& config,
                                                 const std::shared_ptr<grpc::Channel>& channel) {
  ClickPipeline clicks;
  if (!config.record_clicks) {
    LogInfo("--record_clicks=false: redirects are not counted%s",
            config.clicks.spool_dir.empty()
                ? ""
                : "; --click_spool_dir is left alone (batches in it wait for an edge that "
                  "records clicks)");
    return clicks;
  }
  SHORTENER_ASSIGN_OR_RETURN(clicks.spool, OpenClickSpool(config.clicks));
  clicks.queue = std::make_unique<ClickQueue>(config.clicks.queue);
  clicks.transport = std::make_unique<GrpcClickTransport>(channel);
  clicks.sender = std::make_unique<ClickSender>(clicks.queue.get(), clicks.spool.get(),
                                                clicks.transport.get(), config.clicks.sender);
  clicks.sender->Start();
  return clicks;
}

RedirectHandlerOptions HandlerOptions(const EdgeConfig& config, const TrustedProxies& trusted,
                                      const LocationPolicy& locations) {
  RedirectHandlerOptions options;
  options.target.max_request_line = config.max_request_line;
  options.trusted_proxies = trusted;  // a copy: the server's exemption uses it too
  options.access_log = config.access_log;
  options.locations = locations;
  options.miss_deadline = MissDeadline(config);
  options.max_alias_misses = config.max_alias_misses;
  return options;
}

ResolveBatcherOptions BatcherOptions(const EdgeConfig& config) {
  ResolveBatcherOptions options;
  options.max_batch = config.resolve_batch;
  options.max_in_flight = config.resolve_in_flight;
  options.max_queued = config.resolve_queue;
  return options;
}

// The public listener's options (--listen was checked by ValidateEdgeConfig).
http::HttpServerOptions PublicServerOptions(const EdgeConfig& config, int threads,
                                            const ConnectionBudget& connections,
                                            const TrustedProxies& trusted) {
  http::HttpServerOptions options;
  SplitHostPort("listen", config.listen, &options.host, &options.port).IgnoreError();
  options.threads = threads;
  options.max_request_line = config.max_request_line;
  options.idle_timeout = config.idle_timeout;
  options.max_connections = connections.max_connections;
  options.max_connections_per_client = config.max_connections_per_client;
  // A load balancer carries many people: the proxies whose X-Forwarded-For
  // is believed are not limited per client.
  options.exempt_from_client_limit = [trusted](const http::PeerAddress& peer) {
    return trusted.Contains(IpAddress{peer.is_v6, peer.bytes});
  };
  return options;
}

}  // namespace

absl::Status RunEdge(const EdgeConfig& config) {
  SHORTENER_RETURN_IF_ERROR(ValidateEdgeConfig(config));
  SHORTENER_ASSIGN_OR_RETURN(TrustedProxies trusted, TrustedProxies::Parse(config.trusted_proxies));
  WarnTooBroadProxies(trusted);
  SHORTENER_ASSIGN_OR_RETURN(codec::ShortCodec codec, LoadCodec(config));
  SHORTENER_ASSIGN_OR_RETURN(std::string api_key,
                             grpcutil::ReadApiKeyFile("api_key_file", config.api_key_file));
  const int threads = config.threads > 0
                          ? config.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  // Before anything takes descriptors: an explicit --max_connections that
  // cannot fit stops the start here.
  SHORTENER_ASSIGN_OR_RETURN(ConnectionBudget connections, BudgetConnections(config, threads));

  // The cache stores and the handler sends only Locations of this policy.
  const LocationPolicy locations(config.allowed_schemes);
  LinkCacheOptions cache_options = config.cache;
  cache_options.locations = locations;
  LinkCache cache(cache_options);
  EdgeMetrics metrics(threads);
  ServiceClientOptions client_options;
  client_options.resolve_timeout = config.resolve_timeout;
  // Reads and checks the TLS files now: a bad one stops the start here
  // rather than leaving an edge that never becomes ready.
  SHORTENER_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel,
                             grpcutil::CreateClientChannel(config.service, config.service_tls,
                                                           EdgeChannelArguments(), api_key));
  // One channel for all of the edge's calls to the service: Resolve and
  // BatchResolve (the client), RecordClicks, WatchInvalidations.
  ServiceClient client(channel, client_options);
  SHORTENER_ASSIGN_OR_RETURN(ClickPipeline clicks, StartClickPipeline(config, channel));
  ResolveBatcher resolver(&client, BatcherOptions(config));
  RedirectHandler handler(&codec, &cache, &client, &resolver, &metrics, clicks.recording(),
                          HandlerOptions(config, trusted, locations));

  InvalidationWatcherOptions watcher_options;
  watcher_options.subscriber = absl::StrCat("redirect-edge ", config.listen);
  InvalidationWatcher watcher(channel, &handler, watcher_options);
  watcher.Start();

  AdminHandler admin_handler(AdminSources{[&handler] { return handler.MetricsText(); },
                                          [&handler] { return handler.Ready(); }});
  absl::StatusOr<std::unique_ptr<http::HttpServer>> admin_server =
      StartAdminServer(config.admin_listen, &admin_handler);
  if (!admin_server.ok()) {
    watcher.Stop();
    return admin_server.status();
  }
  const http::HttpServerOptions server_options =
      PublicServerOptions(config, threads, connections, trusted);
  absl::StatusOr<std::unique_ptr<http::HttpServer>> server =
      http::HttpServer::Start(server_options, &handler);
  if (!server.ok()) {
    watcher.Stop();
    return absl::Status(server.status().code(),
                        absl::StrCat("--listen: ", server.status().message()));
  }
  handler.set_server(server->get());
  LogInfo("redirect-edge listening on %s:%d (%d threads), service %s over %s", server_options.host,
          (*server)->port(), threads, config.service,
          grpcutil::TlsModeName(grpcutil::ClientTlsModeOf(config.service_tls)));

  const int signo = WaitForTermination();
  if (config.shutdown_delay > absl::ZeroDuration()) {
    // Balancers see /readyz fail and stop sending new connections while
    // the edge still answers everything that arrives.
    handler.StopBeingReady();
    LogInfo("signal %d: not ready, serving on for %s before draining", signo,
            absl::FormatDuration(config.shutdown_delay));
    if (WaitForTerminationFor(config.shutdown_delay)) LogInfo("second signal: draining now");
  }
  LogInfo("signal %d: draining (up to %s)", signo, absl::FormatDuration(config.shutdown_grace));
  // Stop HTTP first (in-flight misses are answered), then wait for the
  // Resolve calls still out: their callbacks use the resolver, the cache,
  // the handler and the metrics, destroyed when this function returns. Then
  // flush the clicks (bounded by --click_flush_timeout; the rest is spooled).
  (*server)->Shutdown(config.shutdown_grace);
  handler.set_server(nullptr);
  // Scrapes still see the drain's figures until here.
  if (*admin_server != nullptr) (*admin_server)->Shutdown(absl::Seconds(1));
  resolver.Drain();
  // Only now: answers to the misses drained above push clicks too.
  if (clicks.sender != nullptr) clicks.sender->Stop(config.clicks.flush_timeout);
  watcher.Stop();
  LogInfo("redirect-edge stopped");
  return absl::OkStatus();
}

}  // namespace shortener::edge
