#include "services/shorten/server_flags.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace {
const shortener::service::ServerConfig kDefaults;
}  // namespace

namespace shortener::service {

// --migrate's text form, for Abseil (found by argument-dependent look-up):
// a bad value stops the start with ParseMigrateMode's message.
bool AbslParseFlag(absl::string_view text, MigrateMode* mode, std::string* error) {
  absl::StatusOr<MigrateMode> parsed = ParseMigrateMode(text);
  if (!parsed.ok()) {
    *error = std::string(parsed.status().message());
    return false;
  }
  *mode = *parsed;
  return true;
}

std::string AbslUnparseFlag(MigrateMode mode) { return std::string(MigrateModeName(mode)); }

}  // namespace shortener::service

ABSL_FLAG(std::string, listen, kDefaults.listen,
          "gRPC listen address HOST:PORT (port 0: any free port)");
ABSL_FLAG(std::string, admin_listen, kDefaults.admin_listen,
          "HOST:PORT of the admin HTTP listener: /metrics (Prometheus), /healthz, /readyz (port 0: "
          "any free port, logged); keep it off public networks; empty: none");
ABSL_FLAG(std::string, http_listen, kDefaults.http_listen,
          "HOST:PORT of the HTTP/JSON API (docs/api.md; port 0: any free port, logged); "
          "plaintext: a non-loopback address needs --http_allow_plaintext; empty: none");
ABSL_FLAG(bool, http_allow_plaintext, kDefaults.http_allow_plaintext,
          "allow --http_listen on a non-loopback address without TLS (a TLS proxy or ingress in "
          "front)");
ABSL_FLAG(int, http_max_connections, kDefaults.http_max_connections,
          "HTTP/JSON API connections at once (one more is closed unanswered); each carries one "
          "request at a time");
ABSL_FLAG(int64_t, http_max_body_bytes, kDefaults.http_max_body_bytes,
          "largest HTTP/JSON request body; larger gets 413 before it is read");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate (chain) to serve TLS with; needs --tls_key; default: plaintext");
ABSL_FLAG(std::string, tls_key, "",
          "PEM private key of --tls_cert (unencrypted; checked against the certificate at start)");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA certificate(s): clients must present a certificate signed by one (mutual TLS); "
          "needs --tls_cert");
ABSL_FLAG(std::string, postgres, "",
          "libpq connection string of the database, e.g. \"host=/run/postgresql dbname=shortener\" "
          "(required)");
ABSL_FLAG(std::string, base_url, kDefaults.base_url,
          "short URLs are base_url + code; must end with /");
ABSL_FLAG(
    std::string, codec_secret_file, "",
    "file holding the code secret (64 hex chars), shared by every replica and edge (required)");
ABSL_FLAG(std::string, bootstrap_admin_key_file, "",
          "admin API key file: an existing file's key (32+ printable characters) becomes an admin "
          "key; a missing file is created with a new key, mode 0600");
ABSL_FLAG(absl::Duration, api_key_cache_ttl, kDefaults.api_key_cache_ttl,
          "how long API key look-ups are cached (revocations reach every replica within ~1 s "
          "regardless)");
ABSL_FLAG(bool, create_codec_secret, false,
          "create --codec_secret_file with a new random secret if it does not exist");
ABSL_FLAG(int, min_code_length, kDefaults.min_code_length,
          "minimum code body length (1..10); a check character is added");
ABSL_FLAG(int64_t, max_url_length, kDefaults.max_url_length, "longest long_url accepted, in bytes");
ABSL_FLAG(std::vector<std::string>, allowed_schemes, kDefaults.allowed_schemes,
          "long_url schemes accepted, comma-separated (case-insensitive)");
ABSL_FLAG(std::vector<std::string>, short_domains, {},
          "hosts of our short links, refused as long_url targets, subdomains included (the "
          "base_url host is always included)");
ABSL_FLAG(std::vector<std::string>, denied_domains, {},
          "long_url hosts refused, comma-separated, subdomains included (merged with "
          "--denied_domains_file)");
ABSL_FLAG(bool, allow_private_targets, kDefaults.allow_private_targets,
          "accept long URLs whose host is loopback, private, link-local or unspecified (any "
          "spelling), localhost, a .local/.internal name or a name of one label (no DNS look-ups: "
          "by the URL's text); default: refused, as on a public shortener");
ABSL_FLAG(std::string, denied_domains_file, "",
          "file of long_url hosts refused: one a line, subdomains included, # comments; reloaded "
          "on SIGHUP and within ~1 s of a change (a bad or missing file keeps the previous list)");
ABSL_FLAG(int, db_pool_size, kDefaults.db_pool_size, "database connections for reads and writes");
ABSL_FLAG(int, group_commit_batch, kDefaults.group_commit_batch,
          "most links committed in one transaction");
ABSL_FLAG(int, group_commit_threads, kDefaults.group_commit_threads,
          "transactions committing links at once");
ABSL_FLAG(int, group_commit_parallel_backlog, kDefaults.group_commit_parallel_backlog,
          "while a transaction commits, another starts only when this many links are queued ...");
ABSL_FLAG(absl::Duration, group_commit_parallel_after, kDefaults.group_commit_parallel_after,
          "... or when the committing one started this long ago");
ABSL_FLAG(int, blocking_threads, kDefaults.blocking_threads,
          "threads serving Revoke and alias look-ups (blocking database calls)");
ABSL_FLAG(int, resolve_batch, kDefaults.resolve_batch,
          "most Resolve/GetLink look-ups of generated codes answered by one query");
ABSL_FLAG(int, resolve_threads, kDefaults.resolve_threads,
          "batched look-up queries in flight at most");
ABSL_FLAG(int, blocking_queue, kDefaults.blocking_queue,
          "most tasks (Revoke, GetLink's click count, RecordClicks, BatchShorten validation, key "
          "admin) waiting for a --blocking_threads thread; more are answered RESOURCE_EXHAUSTED");
ABSL_FLAG(int, key_lookup_queue, kDefaults.key_lookup_queue,
          "most API key look-ups (keys not cached) waiting for one of the 2 key look-up threads; "
          "more are answered RESOURCE_EXHAUSTED");
ABSL_FLAG(int, resolve_queue, kDefaults.resolve_queue,
          "most look-ups of codes and aliases (Resolve, BatchResolve items, GetLink, click "
          "aliases) waiting for a batched query; more are answered RESOURCE_EXHAUSTED");
ABSL_FLAG(int, group_commit_queue, kDefaults.group_commit_queue,
          "most links waiting for a transaction; a Shorten or BatchShorten that would pass it is "
          "answered RESOURCE_EXHAUSTED");
ABSL_FLAG(int, max_concurrent_streams, kDefaults.max_concurrent_streams,
          "most calls open at once on one client connection (HTTP/2 streams); a client opens more "
          "only as earlier ones end");
ABSL_FLAG(int, max_invalidation_subscribers, kDefaults.max_invalidation_subscribers,
          "most WatchInvalidations streams at once on this replica; more are answered "
          "RESOURCE_EXHAUSTED");
ABSL_FLAG(absl::Duration, invalidation_flush, kDefaults.invalidation_flush,
          "WatchInvalidations: revoked codes this close together share a message");
ABSL_FLAG(int, invalidation_max_pending, kDefaults.invalidation_max_pending,
          "WatchInvalidations: codes queued for a slow subscriber before it gets drop_all instead");
ABSL_FLAG(absl::Duration, keepalive_time, kDefaults.keepalive_time,
          "gRPC keepalive ping interval on idle connections and streams");
ABSL_FLAG(absl::Duration, keepalive_timeout, kDefaults.keepalive_timeout,
          "a connection whose keepalive ping goes unanswered this long is dropped");
ABSL_FLAG(absl::Duration, max_connection_age, kDefaults.max_connection_age,
          "a client connection is closed gracefully (GOAWAY: calls and streams on it finish, new "
          "calls go to a new connection) after about this long (+-10%), so that clients such as "
          "edges resolve the service's name again and find replicas added since; 0: never");
ABSL_FLAG(int64_t, id_initial_step, kDefaults.id_initial_step,
          "ids leased per segment at start (the step then adapts)");
ABSL_FLAG(int64_t, id_max_step, kDefaults.id_max_step, "most ids leased per segment");
ABSL_FLAG(absl::Duration, id_segment_lifetime, kDefaults.id_segment_lifetime,
          "target lifetime of an id segment; the step adapts to it");
ABSL_FLAG(absl::Duration, db_startup_timeout, kDefaults.db_startup_timeout,
          "how long to wait for the database at start");
ABSL_FLAG(shortener::service::MigrateMode, migrate, kDefaults.migrate,
          "schema migrations compiled into this binary: auto (apply the pending ones, then serve), "
          "only (apply them and exit 0, for a migration Job; needs only --postgres), off (apply "
          "none: refuse to start on an older schema, serve on the same or a newer one)");
ABSL_FLAG(bool, record_visits, kDefaults.record_visits,
          "store a visit row per click (time, client id, IP, browser, OS, device, referrer host) "
          "besides the hourly counts");
ABSL_FLAG(bool, keep_full_ips, kDefaults.keep_full_ips,
          "store full client IPs in visits; default: IPv4 last octet zeroed, IPv6 kept to /48");
ABSL_FLAG(std::string, geoip_db, kDefaults.geoip_db,
          "MaxMind-format Country or City database (GeoLite2-Country, GeoLite2-City, ...) that "
          "gives each visit its country, and with a City one its region and city, looked up from "
          "the full client IP; reloaded on SIGHUP (move the new file into place); empty: none");
ABSL_FLAG(std::string, geoip_asn_db, kDefaults.geoip_asn_db,
          "MaxMind-format ASN database (GeoLite2-ASN, ...) that gives each visit its network "
          "(\"AS15169 Google LLC\"), looked up from the full client IP; reloaded on SIGHUP; "
          "empty: no network");
ABSL_FLAG(int, visits_retention_months, kDefaults.visits_retention_months,
          "visits older than this many months (besides the current one) are dropped by a daily "
          "sweep; 0: keep forever");
ABSL_FLAG(absl::Duration, rollup_merge_interval, kDefaults.rollup_merge_interval,
          "how often the click rollups' pending rows are merged into the hourly rollups (0.1s to "
          "60s); statistics include pending rows, so this never changes an answer, only the "
          "merge's work (one upsert per link, hour and value touched since the last merge)");
ABSL_FLAG(absl::Duration, deleted_alias_hold, kDefaults.deleted_alias_hold,
          "how long the alias of a deleted link stays taken, so that nobody can take it over to "
          "catch the old link's clicks (0 to 87840h); generated codes are never reissued");
ABSL_FLAG(absl::Duration, shutdown_grace, kDefaults.shutdown_grace,
          "on SIGTERM, how long in-flight calls may take to finish");

namespace shortener::service {

ServerConfig ServerConfigFromFlags() {
  ServerConfig c;
  c.listen = absl::GetFlag(FLAGS_listen);
  c.admin_listen = absl::GetFlag(FLAGS_admin_listen);
  c.http_listen = absl::GetFlag(FLAGS_http_listen);
  c.http_allow_plaintext = absl::GetFlag(FLAGS_http_allow_plaintext);
  c.http_max_connections = absl::GetFlag(FLAGS_http_max_connections);
  c.http_max_body_bytes = absl::GetFlag(FLAGS_http_max_body_bytes);
  c.tls.cert_file = absl::GetFlag(FLAGS_tls_cert);
  c.tls.key_file = absl::GetFlag(FLAGS_tls_key);
  c.tls.client_ca_file = absl::GetFlag(FLAGS_tls_client_ca);
  c.postgres = absl::GetFlag(FLAGS_postgres);
  c.base_url = absl::GetFlag(FLAGS_base_url);
  c.codec_secret_file = absl::GetFlag(FLAGS_codec_secret_file);
  c.create_codec_secret = absl::GetFlag(FLAGS_create_codec_secret);
  c.bootstrap_admin_key_file = absl::GetFlag(FLAGS_bootstrap_admin_key_file);
  c.api_key_cache_ttl = absl::GetFlag(FLAGS_api_key_cache_ttl);
  c.min_code_length = absl::GetFlag(FLAGS_min_code_length);
  c.max_url_length = static_cast<size_t>(absl::GetFlag(FLAGS_max_url_length));
  c.allowed_schemes = absl::GetFlag(FLAGS_allowed_schemes);
  c.short_domains = absl::GetFlag(FLAGS_short_domains);
  c.denied_domains = absl::GetFlag(FLAGS_denied_domains);
  c.denied_domains_file = absl::GetFlag(FLAGS_denied_domains_file);
  c.allow_private_targets = absl::GetFlag(FLAGS_allow_private_targets);
  c.db_pool_size = absl::GetFlag(FLAGS_db_pool_size);
  c.group_commit_batch = absl::GetFlag(FLAGS_group_commit_batch);
  c.group_commit_threads = absl::GetFlag(FLAGS_group_commit_threads);
  c.group_commit_parallel_backlog = absl::GetFlag(FLAGS_group_commit_parallel_backlog);
  c.group_commit_parallel_after = absl::GetFlag(FLAGS_group_commit_parallel_after);
  c.blocking_threads = absl::GetFlag(FLAGS_blocking_threads);
  c.resolve_batch = absl::GetFlag(FLAGS_resolve_batch);
  c.resolve_threads = absl::GetFlag(FLAGS_resolve_threads);
  c.blocking_queue = absl::GetFlag(FLAGS_blocking_queue);
  c.key_lookup_queue = absl::GetFlag(FLAGS_key_lookup_queue);
  c.resolve_queue = absl::GetFlag(FLAGS_resolve_queue);
  c.group_commit_queue = absl::GetFlag(FLAGS_group_commit_queue);
  c.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  c.max_invalidation_subscribers = absl::GetFlag(FLAGS_max_invalidation_subscribers);
  c.invalidation_flush = absl::GetFlag(FLAGS_invalidation_flush);
  c.invalidation_max_pending = absl::GetFlag(FLAGS_invalidation_max_pending);
  c.keepalive_time = absl::GetFlag(FLAGS_keepalive_time);
  c.keepalive_timeout = absl::GetFlag(FLAGS_keepalive_timeout);
  c.max_connection_age = absl::GetFlag(FLAGS_max_connection_age);
  c.id_initial_step = absl::GetFlag(FLAGS_id_initial_step);
  c.id_max_step = absl::GetFlag(FLAGS_id_max_step);
  c.id_segment_lifetime = absl::GetFlag(FLAGS_id_segment_lifetime);
  c.db_startup_timeout = absl::GetFlag(FLAGS_db_startup_timeout);
  c.migrate = absl::GetFlag(FLAGS_migrate);
  c.shutdown_grace = absl::GetFlag(FLAGS_shutdown_grace);
  c.record_visits = absl::GetFlag(FLAGS_record_visits);
  c.keep_full_ips = absl::GetFlag(FLAGS_keep_full_ips);
  c.visits_retention_months = absl::GetFlag(FLAGS_visits_retention_months);
  c.rollup_merge_interval = absl::GetFlag(FLAGS_rollup_merge_interval);
  c.deleted_alias_hold = absl::GetFlag(FLAGS_deleted_alias_hold);
  c.geoip_db = absl::GetFlag(FLAGS_geoip_db);
  c.geoip_asn_db = absl::GetFlag(FLAGS_geoip_asn_db);
  return c;
}

}  // namespace shortener::service
