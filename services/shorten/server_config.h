// ServerConfig: everything shorten-service is built from, and its checks
// that need no I/O. ValidateConfig turns a ServerConfig into a
// ValidServerConfig or the first problem; the builders (service_parts.h)
// and RunServer (server.h) take only the validated kind.
//
// Messages name a field by the flag that sets it ("--blocking_queue must be
// >= 1"), here and in the builders' start errors ("--geoip_db: ..."). Each
// field has exactly one flag, of the same name (server_flags.cc; the TLS
// fields are --tls_cert, --tls_key, --tls_client_ca, as lib/grpcutil/tls.h
// names them for both daemons), and a flag is the only way an operator sets
// one: that is the spelling they typed and will search their command line
// for. Field names without the dashes would need a table turning them back
// into flags in server_flags.cc, one more thing to keep in step for no
// reader's benefit.
//
// Thread safety: plain values; ValidateConfig is a pure function.
#ifndef SHORTENER_SERVICES_SHORTEN_SERVER_CONFIG_H_
#define SHORTENER_SERVICES_SHORTEN_SERVER_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/grpcutil/tls.h"

namespace shortener::service {

// --migrate: what the service does with the schema migrations compiled into
// it (docs/operations.md, "Schema migrations").
enum class MigrateMode {
  // Applies the pending ones, then serves (one replica applies them, the
  // others wait on the advisory lock and find them applied).
  kAuto,
  // Applies the pending ones and exits: a migration Job or one-shot unit.
  // Needs only --postgres (and --db_startup_timeout): nothing else is read.
  kOnly,
  // Applies nothing; refuses to start on an older schema (pending
  // migrations), serves on the same or a newer one.
  kOff,
};

// "auto", "only", "off" -> the mode; INVALID_ARGUMENT naming --migrate and
// the values otherwise.
absl::StatusOr<MigrateMode> ParseMigrateMode(absl::string_view text);
absl::string_view MigrateModeName(MigrateMode mode);

struct ServerConfig {
  std::string listen = "127.0.0.1:50051";
  // /metrics, /healthz, /readyz over HTTP (admin_server.h); empty: none.
  std::string admin_listen = "127.0.0.1:9091";
  // The HTTP/JSON API (services/shorten/http/): empty, off. Plaintext
  // only: a non-loopback address needs http_allow_plaintext (TLS ends at a
  // proxy or ingress in front).
  std::string http_listen;
  bool http_allow_plaintext = false;
  int http_max_connections = 1024;
  int64_t http_max_body_bytes = 1 << 20;
  grpcutil::ServerTlsOptions tls;  // --tls_*; none set: plaintext
  std::string postgres;            // libpq connection string (required)
  std::string base_url = "http://localhost:8080/";
  std::string codec_secret_file;                         // required
  std::string bootstrap_admin_key_file;                  // empty: none (keys must exist already)
  absl::Duration api_key_cache_ttl = absl::Seconds(10);  // revocations still apply within ~1 s
  bool create_codec_secret = false;                      // generate the secret file if missing
  int min_code_length = 6;                               // body characters, 1..10
  size_t max_url_length = 2048;
  std::vector<std::string> allowed_schemes = {"http", "https"};  // long_url schemes
  std::vector<std::string> short_domains;  // the base_url host is always added
  std::vector<std::string> denied_domains;
  std::string denied_domains_file;     // empty: none; merged with denied_domains
  bool allow_private_targets = false;  // loopback, private, localhost ... (url_policy.h)
  int db_pool_size = 8;
  int group_commit_batch = 1000;
  int group_commit_threads = 2;
  int group_commit_parallel_backlog = 256;  // queued links that start a parallel commit
  absl::Duration group_commit_parallel_after = absl::Milliseconds(10);  // ... or a commit this long
  int blocking_threads = 16;  // for store calls off reactor threads
  int resolve_batch = 256;    // look-ups per batched Resolve query
  int resolve_threads = 2;    // batched Resolve queries in flight
  // Bounds of the queues in front of every pool (RESOURCE_EXHAUSTED beyond):
  int blocking_queue = 256;        // tasks waiting for a blocking thread
  int key_lookup_queue = 256;      // API key look-ups waiting for a thread
  int resolve_queue = 16384;       // look-ups waiting for a batched query
  int group_commit_queue = 20000;  // links waiting for a transaction
  // HTTP/2 streams (calls) open at once on one client connection.
  int max_concurrent_streams = 256;
  int max_invalidation_subscribers = 1024;                     // WatchInvalidations streams at once
  absl::Duration invalidation_flush = absl::Milliseconds(10);  // batching window
  int invalidation_max_pending = 10000;                        // per subscriber, then drop_all
  absl::Duration keepalive_time = absl::Seconds(10);           // gRPC pings to idle clients
  absl::Duration keepalive_timeout = absl::Seconds(5);  // unanswered ping: drop the connection
  // A client connection is closed gracefully (GOAWAY; calls and streams on
  // it finish) after about this long, so that clients resolve the service's
  // name again and find replicas added since; 0: never.
  absl::Duration max_connection_age = absl::Minutes(5);
  int64_t id_initial_step = 1000;
  int64_t id_max_step = 1 << 20;
  absl::Duration id_segment_lifetime = absl::Minutes(15);
  absl::Duration db_startup_timeout = absl::Seconds(60);
  MigrateMode migrate = MigrateMode::kAuto;
  absl::Duration shutdown_grace = absl::Seconds(10);
  bool record_visits = true;         // a visits row per click besides the hourly counts
  bool keep_full_ips = false;        // false: IPv4 /24, IPv6 /48
  int visits_retention_months = 13;  // visits partitions kept; 0: forever
  // How often pending click rollups are merged into the hourly ones
  // (lib/clicks/pg/rollup_upkeep.h). Reads add what is pending, so this
  // trades the merge's upserts (one per key touched since the last merge)
  // against the pending rows a read adds; it never changes an answer.
  absl::Duration rollup_merge_interval = absl::Seconds(5);
  // How long a deleted link's alias stays taken (DeleteLink): 0 to 10
  // years; 0 frees it at the next erasure pass.
  absl::Duration deleted_alias_hold = absl::Hours(24 * 90);
  std::string geoip_db;      // MaxMind Country or City database; empty: no country, region, city
  std::string geoip_asn_db;  // MaxMind ASN database; empty: no network
};

// A ServerConfig that ValidateConfig accepted; only ValidateConfig makes
// one, so nothing that takes it sees an unchecked config.
class ValidServerConfig {
 public:
  const ServerConfig& operator*() const { return config_; }
  const ServerConfig* operator->() const { return &config_; }

 private:
  friend absl::StatusOr<ValidServerConfig> ValidateConfig(ServerConfig config);
  explicit ValidServerConfig(ServerConfig config) : config_(std::move(config)) {}

  ServerConfig config_;
};

// Checks the values that need no I/O (ranges, required fields, URL and
// domain syntax, TLS flags that go together); INVALID_ARGUMENT naming the
// flag of the first field that fails, as above. Files, the database and the
// listen address are checked when the parts are built. With
// --migrate=only, --codec_secret_file is not required (the other fields are
// still checked: a Job usually shares the replicas' flags).
absl::StatusOr<ValidServerConfig> ValidateConfig(ServerConfig config);

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_SERVER_CONFIG_H_
