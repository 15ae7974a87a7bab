#include "services/shorten/server_config.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "edge/http/host_port.h"
#include "lib/codec/short_codec.h"
#include "lib/common/status_macros.h"
#include "lib/url/url_policy.h"
#include "services/shorten/request_limits.h"

namespace shortener::service {
namespace {

// What must be given, and the shape of the short links.
absl::Status CheckRequired(const ServerConfig& c) {
  if (c.postgres.empty()) {
    return absl::InvalidArgumentError("--postgres is required (a libpq connection string)");
  }
  if (c.codec_secret_file.empty() && c.migrate != MigrateMode::kOnly) {
    return absl::InvalidArgumentError(
        "--codec_secret_file is required (except with --migrate=only)");
  }
  if (!absl::StartsWith(c.base_url, "http://") && !absl::StartsWith(c.base_url, "https://")) {
    return absl::InvalidArgumentError("--base_url must start with http:// or https://");
  }
  if (!absl::EndsWith(c.base_url, "/")) {
    return absl::InvalidArgumentError("--base_url must end with /");
  }
  if (c.min_code_length < 1 || c.min_code_length > codec::ShortCodec::kMaxBodyLength) {
    return absl::InvalidArgumentError("--min_code_length must be between 1 and 10");
  }
  return absl::OkStatus();
}

// Threads, and how reads, writes and invalidations batch.
absl::Status CheckThreadsAndBatches(const ServerConfig& c) {
  if (c.db_pool_size < 1 || c.group_commit_threads < 1 || c.blocking_threads < 1) {
    return absl::InvalidArgumentError(
        "--db_pool_size, --group_commit_threads and --blocking_threads must be >= 1");
  }
  if (c.group_commit_parallel_backlog < 1) {
    return absl::InvalidArgumentError("--group_commit_parallel_backlog must be >= 1");
  }
  if (c.group_commit_parallel_after < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--group_commit_parallel_after must not be negative");
  }
  if (c.resolve_batch < 1 || c.resolve_batch > 10000 || c.resolve_threads < 1) {
    return absl::InvalidArgumentError(
        "--resolve_batch must be between 1 and 10000 and --resolve_threads >= 1");
  }
  if (c.invalidation_flush < absl::ZeroDuration() || c.invalidation_flush > absl::Seconds(1)) {
    return absl::InvalidArgumentError("--invalidation_flush must be between 0 and 1s");
  }
  if (c.invalidation_max_pending < 1) {
    return absl::InvalidArgumentError("--invalidation_max_pending must be >= 1");
  }
  return absl::OkStatus();
}

// The bounds of the queues, the calls per connection and the URLs.
absl::Status CheckBounds(const ServerConfig& c) {
  if (c.blocking_queue < 1 || c.key_lookup_queue < 1 || c.resolve_queue < 1) {
    return absl::InvalidArgumentError(
        "--blocking_queue, --key_lookup_queue and --resolve_queue must be >= 1");
  }
  // A BatchShorten of up to 1000 links must fit the queue of an idle
  // committer (a larger one is taken only when the queue is empty).
  if (c.group_commit_queue < static_cast<int>(kMaxBatchItems)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--group_commit_queue must be >= ", kMaxBatchItems, " (a full BatchShorten)"));
  }
  if (c.max_concurrent_streams < 1 || c.max_invalidation_subscribers < 1) {
    return absl::InvalidArgumentError(
        "--max_concurrent_streams and --max_invalidation_subscribers must be >= 1");
  }
  if (c.max_url_length < 1 || c.max_url_length > 64 * 1024) {
    return absl::InvalidArgumentError("--max_url_length must be between 1 and 65536");
  }
  return absl::OkStatus();
}

// Keepalives, the commit batch, the key cache and the id steps.
absl::Status CheckTimesAndSteps(const ServerConfig& c) {
  if (c.keepalive_time < absl::Seconds(1) || c.keepalive_timeout < absl::Seconds(1) ||
      c.keepalive_time > absl::Hours(24) || c.keepalive_timeout > absl::Hours(24)) {
    return absl::InvalidArgumentError(
        "--keepalive_time and --keepalive_timeout must be between 1s and 24h");
  }
  if (c.max_connection_age != absl::ZeroDuration() &&
      (c.max_connection_age < absl::Seconds(1) || c.max_connection_age > absl::Hours(24))) {
    return absl::InvalidArgumentError("--max_connection_age must be 0 (never) or 1s to 24h");
  }
  if (c.group_commit_batch < 1 || c.group_commit_batch > 10000) {
    return absl::InvalidArgumentError("--group_commit_batch must be between 1 and 10000");
  }
  if (c.api_key_cache_ttl < absl::ZeroDuration() || c.api_key_cache_ttl > absl::Minutes(10)) {
    return absl::InvalidArgumentError("--api_key_cache_ttl must be between 0 and 10m");
  }
  if (c.id_initial_step < 1 || c.id_max_step < c.id_initial_step) {
    return absl::InvalidArgumentError("--id_initial_step must be >= 1 and <= --id_max_step");
  }
  return absl::OkStatus();
}

// The long-URL schemes and the denied domains given on the command line.
absl::Status CheckUrlLists(const ServerConfig& c) {
  if (absl::Status schemes = url::ValidateSchemes(c.allowed_schemes); !schemes.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--allowed_schemes: ", schemes.message()));
  }
  // Checked like the file's entries: a typo must not silently deny nothing.
  for (const std::string& domain : c.denied_domains) {
    if (absl::StatusOr<std::string> entry = url::CanonicalDomain(domain); !entry.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--denied_domains: ", entry.status().message()));
    }
  }
  return absl::OkStatus();
}

// --admin_listen: a HOST:PORT of its own (empty: no admin listener).
absl::Status CheckAdminListen(const ServerConfig& c) {
  if (c.admin_listen.empty()) return absl::OkStatus();
  std::string host;
  int port = 0;
  return edge::SplitHostPort("admin_listen", c.admin_listen, &host, &port);
}

// --http_listen: a HOST:PORT (empty: no HTTP API), loopback unless
// --http_allow_plaintext (the listener has no TLS of its own); and its bounds.
absl::Status CheckHttpListen(const ServerConfig& c) {
  if (c.http_listen.empty()) return absl::OkStatus();
  std::string host;
  int port = 0;
  SHORTENER_RETURN_IF_ERROR(edge::SplitHostPort("http_listen", c.http_listen, &host, &port));
  const bool loopback = absl::StartsWith(host, "127.") || host == "::1";
  if (!loopback && !c.http_allow_plaintext) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--http_listen: ", host,
        " is not a loopback address and the HTTP API has no TLS of its own; put a TLS proxy or "
        "ingress in front and pass --http_allow_plaintext"));
  }
  if (c.http_max_connections < 1 || c.http_max_connections > 100000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--http_max_connections: must be 1 to 100000, got ", c.http_max_connections));
  }
  if (c.http_max_body_bytes < 1024 || c.http_max_body_bytes > (64 << 20)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--http_max_body_bytes: must be 1024 to 67108864 (64 MiB), got ", c.http_max_body_bytes));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MigrateMode> ParseMigrateMode(absl::string_view text) {
  for (MigrateMode mode : {MigrateMode::kAuto, MigrateMode::kOnly, MigrateMode::kOff}) {
    if (text == MigrateModeName(mode)) return mode;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--migrate must be auto, only or off, not \"", text, "\""));
}

absl::string_view MigrateModeName(MigrateMode mode) {
  switch (mode) {
    case MigrateMode::kAuto:
      return "auto";
    case MigrateMode::kOnly:
      return "only";
    case MigrateMode::kOff:
      return "off";
  }
  return "auto";
}

absl::StatusOr<ValidServerConfig> ValidateConfig(ServerConfig config) {
  SHORTENER_RETURN_IF_ERROR(CheckRequired(config));
  SHORTENER_RETURN_IF_ERROR(CheckThreadsAndBatches(config));
  SHORTENER_RETURN_IF_ERROR(CheckBounds(config));
  SHORTENER_RETURN_IF_ERROR(CheckTimesAndSteps(config));
  SHORTENER_RETURN_IF_ERROR(CheckUrlLists(config));
  SHORTENER_RETURN_IF_ERROR(CheckAdminListen(config));
  SHORTENER_RETURN_IF_ERROR(CheckHttpListen(config));
  if (config.visits_retention_months < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--visits_retention_months: must be 0 (keep forever) or more, got ",
                     config.visits_retention_months));
  }
  if (config.rollup_merge_interval < absl::Milliseconds(100) ||
      config.rollup_merge_interval > absl::Seconds(60)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rollup_merge_interval: must be between 0.1s and 60s, got ",
                     absl::FormatDuration(config.rollup_merge_interval)));
  }
  if (config.deleted_alias_hold < absl::ZeroDuration() ||
      config.deleted_alias_hold > absl::Hours(24 * 3660)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--deleted_alias_hold: must be between 0 and 87840h (10 years), got ",
                     absl::FormatDuration(config.deleted_alias_hold)));
  }
  SHORTENER_RETURN_IF_ERROR(grpcutil::ValidateServerTlsOptions(config.tls));
  return ValidServerConfig(std::move(config));
}

}  // namespace shortener::service
