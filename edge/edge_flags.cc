#include "edge/edge_flags.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/time/time.h"

namespace {
const shortener::edge::EdgeConfig kDefaults;
}  // namespace

ABSL_FLAG(std::string, listen, kDefaults.listen,
          "HTTP listen address HOST:PORT (port 0: any free port)");
ABSL_FLAG(std::string, admin_listen, kDefaults.admin_listen,
          "address of the admin listener HOST:PORT serving /metrics, /healthz and /readyz, kept "
          "off the public port (loopback by default; a pod binds its own IP); empty: none");
ABSL_FLAG(std::string, service, kDefaults.service,
          "the shorten-service's gRPC target: HOST:PORT, or dns:///NAME:PORT (e.g. a headless "
          "Service); calls are spread over every address it resolves to (round_robin)");
ABSL_FLAG(std::string, service_tls_ca, "",
          "PEM CA certificate(s) the service's certificate must chain to: connect over TLS; "
          "default: plaintext");
ABSL_FLAG(
    std::string, service_tls_cert, "",
    "PEM client certificate for a service that requires one (mutual TLS); needs --service_tls_key");
ABSL_FLAG(std::string, service_tls_key, "", "PEM private key of --service_tls_cert (unencrypted)");
ABSL_FLAG(std::string, service_tls_server_name, "",
          "name the service's certificate must carry, when it does not name the --service host "
          "(e.g. connecting by IP)");
ABSL_FLAG(int, threads, kDefaults.threads, "event-loop threads; 0: one per core");
ABSL_FLAG(
    std::string, api_key_file, "",
    "file holding the edge's API key (an infrastructure key with scopes "
    "resolve,record_clicks,watch_invalidations), sent with every call to the service (required)");
ABSL_FLAG(std::string, codec_secret_file, "",
          "the shorten-service's code secret file, for the local prefilter (required)");
ABSL_FLAG(int, min_code_length, kDefaults.min_code_length,
          "the shorten-service's --min_code_length (must match)");
ABSL_FLAG(int64_t, cache_entries, static_cast<int64_t>(kDefaults.cache.max_entries),
          "most links cached");
ABSL_FLAG(int64_t, cache_bytes, static_cast<int64_t>(kDefaults.cache.max_bytes),
          "most bytes the cache may hold (estimated)");
ABSL_FLAG(absl::Duration, cache_ttl, kDefaults.cache.positive_ttl,
          "how long a resolved link (active, revoked or expired) is served from the cache");
ABSL_FLAG(absl::Duration, negative_cache_ttl, kDefaults.cache.negative_ttl,
          "how long an unknown code is answered 404 from the cache");
ABSL_FLAG(double, negative_cache_share, kDefaults.cache.negative_share,
          "share of --cache_entries and --cache_bytes kept for unknown codes and aliases (0..0.5); "
          "links get the rest, so made-up codes never evict a link");
ABSL_FLAG(absl::Duration, stale_grace, kDefaults.cache.stale_grace,
          "how long past its TTL an entry is still served while the service is unreachable");
ABSL_FLAG(std::vector<std::string>, allowed_schemes, kDefaults.allowed_schemes,
          "schemes a Location may have, comma-separated (case-insensitive): the shorten-service's "
          "--allowed_schemes; a link with another (or a relative URL) is never redirected to or "
          "cached (503 or a stale entry)");
ABSL_FLAG(std::vector<std::string>, trusted_proxies, {},
          "CIDRs of proxies whose X-Forwarded-For is believed (e.g. 10.0.0.0/8,::1)");
ABSL_FLAG(absl::Duration, resolve_timeout, kDefaults.resolve_timeout,
          "deadline of a Resolve call to the service");
ABSL_FLAG(int, resolve_batch, kDefaults.resolve_batch,
          "most codes sent in one BatchResolve when misses queue up");
ABSL_FLAG(int, resolve_in_flight, kDefaults.resolve_in_flight,
          "most Resolve/BatchResolve calls out at once; further misses queue and go together");
ABSL_FLAG(int, resolve_queue, kDefaults.resolve_queue,
          "most codes queued for a Resolve/BatchResolve call; a miss beyond gets 503 (or a stale "
          "entry) at once");
ABSL_FLAG(absl::Duration, miss_deadline, kDefaults.miss_deadline,
          "longest a request waits for a cache miss, from its arrival, queueing included; then 503 "
          "(or a stale entry); 0: --resolve_timeout + 500ms");
ABSL_FLAG(int, max_alias_misses, kDefaults.max_alias_misses,
          "most custom-alias look-ups waiting for the service at once; one more gets 503 (or a "
          "stale entry) at once (generated codes are not limited)");
ABSL_FLAG(absl::Duration, shutdown_delay, kDefaults.shutdown_delay,
          "on SIGTERM, keep serving this long with /readyz answering 503 before draining, so that "
          "load balancers stop sending new connections first (Kubernetes: instead of a preStop "
          "sleep); a second SIGTERM or SIGINT ends the wait");
ABSL_FLAG(absl::Duration, shutdown_grace, kDefaults.shutdown_grace,
          "on SIGTERM, how long in-flight requests may take to finish");
ABSL_FLAG(int64_t, max_request_line, static_cast<int64_t>(kDefaults.max_request_line),
          "longest request line accepted; longer gets 414");
ABSL_FLAG(int64_t, max_connections, static_cast<int64_t>(kDefaults.max_connections),
          "most client connections open at once (more are closed at once, unanswered); 0: what the "
          "open-file limit leaves after the edge's own descriptors (the soft limit is raised to "
          "the hard one at start)");
ABSL_FLAG(int64_t, max_connections_per_client,
          static_cast<int64_t>(kDefaults.max_connections_per_client),
          "most connections one client address (IPv6: one /64) may hold open; peers in "
          "--trusted_proxies are exempt; 0: no limit. The default leaves room for carrier NAT, "
          "where thousands of phones share an address");
ABSL_FLAG(absl::Duration, idle_timeout, kDefaults.idle_timeout,
          "keep-alive connections idle this long are closed");
ABSL_FLAG(bool, access_log, kDefaults.access_log,
          "log one line per request (client IP, method, status, code) to stderr");

ABSL_FLAG(bool, record_clicks, kDefaults.record_clicks,
          "report every redirect to the service (RecordClicks) for click statistics and click "
          "limits; false: no analytics, nothing queued, sent or spooled");
ABSL_FLAG(int, click_batch, static_cast<int>(kDefaults.clicks.sender.batch_size),
          "most click events per RecordClicks batch");
ABSL_FLAG(
    absl::Duration, click_flush_interval, kDefaults.clicks.sender.flush_interval,
    "a batch of click events is sent at least this often (sooner when --click_batch events wait)");
ABSL_FLAG(absl::Duration, click_rpc_timeout, kDefaults.clicks.sender.rpc_timeout,
          "deadline of one RecordClicks call");
ABSL_FLAG(int64_t, click_queue_events, static_cast<int64_t>(kDefaults.clicks.queue.max_events),
          "most click events waiting in memory; more are dropped and counted");
ABSL_FLAG(int64_t, click_queue_bytes, static_cast<int64_t>(kDefaults.clicks.queue.max_bytes),
          "most bytes of click events waiting in memory (estimated)");
ABSL_FLAG(std::string, click_spool_dir, "",
          "directory where click batches wait while the service cannot take them (replayed on "
          "start); empty: in memory (capped at --click_queue_bytes), lost on restart");
ABSL_FLAG(int64_t, click_spool_max_bytes, static_cast<int64_t>(kDefaults.clicks.spool_max_bytes),
          "most bytes the click spool may take; past it click events are dropped and counted");
ABSL_FLAG(absl::Duration, click_flush_timeout, kDefaults.clicks.flush_timeout,
          "on SIGTERM, how long queued clicks may take to be sent before the rest is spooled");

namespace shortener::edge {

EdgeConfig EdgeConfigFromFlags() {
  EdgeConfig c;
  c.listen = absl::GetFlag(FLAGS_listen);
  c.admin_listen = absl::GetFlag(FLAGS_admin_listen);
  c.service = absl::GetFlag(FLAGS_service);
  c.service_tls.ca_file = absl::GetFlag(FLAGS_service_tls_ca);
  c.service_tls.cert_file = absl::GetFlag(FLAGS_service_tls_cert);
  c.service_tls.key_file = absl::GetFlag(FLAGS_service_tls_key);
  c.service_tls.server_name = absl::GetFlag(FLAGS_service_tls_server_name);
  c.threads = absl::GetFlag(FLAGS_threads);
  c.codec_secret_file = absl::GetFlag(FLAGS_codec_secret_file);
  c.api_key_file = absl::GetFlag(FLAGS_api_key_file);
  c.min_code_length = absl::GetFlag(FLAGS_min_code_length);
  c.cache.max_entries =
      static_cast<size_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_cache_entries)));
  c.cache.max_bytes = static_cast<size_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_cache_bytes)));
  c.cache.positive_ttl = absl::GetFlag(FLAGS_cache_ttl);
  c.cache.negative_ttl = absl::GetFlag(FLAGS_negative_cache_ttl);
  c.cache.negative_share = absl::GetFlag(FLAGS_negative_cache_share);
  c.cache.stale_grace = absl::GetFlag(FLAGS_stale_grace);
  c.trusted_proxies = absl::GetFlag(FLAGS_trusted_proxies);
  c.allowed_schemes = absl::GetFlag(FLAGS_allowed_schemes);
  c.resolve_timeout = absl::GetFlag(FLAGS_resolve_timeout);
  c.resolve_batch = absl::GetFlag(FLAGS_resolve_batch);
  c.resolve_in_flight = absl::GetFlag(FLAGS_resolve_in_flight);
  c.resolve_queue = absl::GetFlag(FLAGS_resolve_queue);
  c.miss_deadline = absl::GetFlag(FLAGS_miss_deadline);
  c.max_alias_misses = absl::GetFlag(FLAGS_max_alias_misses);
  c.shutdown_delay = absl::GetFlag(FLAGS_shutdown_delay);
  c.shutdown_grace = absl::GetFlag(FLAGS_shutdown_grace);
  c.max_request_line =
      static_cast<size_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_max_request_line)));
  c.max_connections =
      static_cast<size_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_max_connections)));
  c.max_connections_per_client =
      static_cast<size_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_max_connections_per_client)));
  c.idle_timeout = absl::GetFlag(FLAGS_idle_timeout);
  c.access_log = absl::GetFlag(FLAGS_access_log);
  c.record_clicks = absl::GetFlag(FLAGS_record_clicks);
  c.clicks.sender.batch_size = static_cast<size_t>(std::max(0, absl::GetFlag(FLAGS_click_batch)));
  c.clicks.sender.flush_interval = absl::GetFlag(FLAGS_click_flush_interval);
  c.clicks.sender.rpc_timeout = absl::GetFlag(FLAGS_click_rpc_timeout);
  c.clicks.queue.max_events =
      static_cast<size_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_click_queue_events)));
  c.clicks.queue.max_bytes =
      static_cast<size_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_click_queue_bytes)));
  c.clicks.spool_dir = absl::GetFlag(FLAGS_click_spool_dir);
  c.clicks.spool_max_bytes =
      static_cast<uint64_t>(std::max<int64_t>(0, absl::GetFlag(FLAGS_click_spool_max_bytes)));
  c.clicks.flush_timeout = absl::GetFlag(FLAGS_click_flush_timeout);
  return c;
}

}  // namespace shortener::edge
