#include "services/shorten/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/auth/key_cache.h"
#include "lib/auth/pg/pg_api_key_store.h"
#include "lib/auth/token_bucket.h"
#include "lib/clicks/pg/pg_click_store.h"
#include "lib/clicks/pg/visit_retention.h"
#include "lib/codec/pg/codec_keys.h"
#include "lib/codec/short_codec.h"
#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "lib/common/status_macros.h"
#include "lib/common/termination_signals.h"
#include "lib/common/thread_pool.h"
#include "lib/geoip/country_db.h"
#include "lib/grpcutil/tls.h"
#include "lib/idalloc/pg/pg_segment_source.h"
#include "lib/idalloc/segment_id_allocator.h"
#include "lib/pg/migrations.h"
#include "lib/pg/notification_listener.h"
#include "lib/store/group_committer.h"
#include "lib/store/pg/pg_link_store.h"
#include "lib/store/read_batcher.h"
#include "lib/url/deny_list_file.h"
#include "lib/url/host_name.h"
#include "lib/url/url_policy.h"
#include "services/shorten/authorizer.h"
#include "services/shorten/click_recorder.h"
#include "services/shorten/invalidation_hub.h"
#include "services/shorten/key_admin.h"
#include "services/shorten/link_stats.h"
#include "services/shorten/periodic_task.h"
#include "services/shorten/request_limits.h"
#include "services/shorten/shorten_service.h"
#include "services/shorten/shortener.h"

namespace shortener::service {
namespace {

constexpr char kServiceName[] = "shortener.v1.ShortenService";

absl::StatusOr<codec::ShortCodec> LoadCodec(const ServerConfig& config) {
  absl::StatusOr<std::string> secret = codec::ReadSecretFile(config.codec_secret_file);
  if (absl::IsNotFound(secret.status()) && config.create_codec_secret) {
    SHORTENER_RETURN_IF_ERROR(codec::WriteNewSecretFile(config.codec_secret_file));
    LogWarning("created a new code secret in %s: back it up with the database",
               config.codec_secret_file);
    secret = codec::ReadSecretFile(config.codec_secret_file);
  }
  if (!secret.ok()) {
    return absl::Status(secret.status().code(),
                        absl::StrCat("--codec_secret_file: ", secret.status().message()));
  }
  return codec::ShortCodec::Create({*secret, config.min_code_length});
}

// Migrations double as the database readiness probe at start: retried until
// the database answers or db_startup_timeout passes.
absl::Status PrepareDatabase(const ServerConfig& config, const codec::ShortCodec& codec) {
  absl::Time give_up = absl::Now() + config.db_startup_timeout;
  absl::Duration backoff = absl::Milliseconds(200);
  while (true) {
    absl::StatusOr<int> applied = pg::ApplyMigrations(config.postgres);
    if (applied.ok()) {
      if (*applied > 0) LogInfo("applied %d schema migration(s)", *applied);
      break;
    }
    if (!absl::IsUnavailable(applied.status()) || absl::Now() + backoff > give_up) {
      return applied.status();
    }
    LogWarning("database not ready (%s); retrying", applied.status().ToString());
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, absl::Seconds(5));
  }
  return codec::VerifyOrRecordCodecFingerprint(config.postgres, codec::ShortCodec::kFormatVersion,
                                               codec.Fingerprint());
}

}  // namespace

absl::Status ValidateConfig(const ServerConfig& c) {
  if (c.postgres.empty())
    return absl::InvalidArgumentError("--postgres is required (a libpq connection string)");
  if (c.codec_secret_file.empty())
    return absl::InvalidArgumentError("--codec_secret_file is required");
  if (!absl::StartsWith(c.base_url, "http://") && !absl::StartsWith(c.base_url, "https://")) {
    return absl::InvalidArgumentError("--base_url must start with http:// or https://");
  }
  if (!absl::EndsWith(c.base_url, "/"))
    return absl::InvalidArgumentError("--base_url must end with /");
  if (c.min_code_length < 1 || c.min_code_length > codec::ShortCodec::kMaxBodyLength) {
    return absl::InvalidArgumentError("--min_code_length must be between 1 and 10");
  }
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
  if (c.keepalive_time < absl::Seconds(1) || c.keepalive_timeout < absl::Seconds(1) ||
      c.keepalive_time > absl::Hours(24) || c.keepalive_timeout > absl::Hours(24)) {
    return absl::InvalidArgumentError(
        "--keepalive_time and --keepalive_timeout must be between 1s and 24h");
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
  if (c.visits_retention_months < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--visits_retention_months: must be 0 (keep forever) or more, got ",
                     c.visits_retention_months));
  }
  return grpcutil::ValidateServerTlsOptions(c.tls);
}

namespace {

// Everything the server runs on. Built in dependency order; torn down by
// Stop() in the order that stops users before what they use.
struct ServiceParts {
  std::unique_ptr<codec::ShortCodec> codec;
  std::unique_ptr<url::UrlPolicy> url_policy;
  std::unique_ptr<url::DenyListWatcher> deny_list;  // updates url_policy; null without a file
  std::unique_ptr<store::PgLinkStore> link_store;
  std::unique_ptr<idalloc::PgSegmentSource> segment_source;
  std::unique_ptr<idalloc::SegmentIdAllocator> ids;
  std::unique_ptr<store::GroupCommitter> committer;
  std::unique_ptr<store::ReadBatcher> reads;
  std::unique_ptr<ThreadPool> blocking_pool;
  std::unique_ptr<InvalidationHub> hub;
  std::unique_ptr<auth::PgApiKeyStore> api_key_store;
  std::unique_ptr<KeyAdmin> key_admin;
  std::unique_ptr<auth::KeyCache> key_cache;
  std::unique_ptr<auth::RateLimiter> rate_limiter;
  std::unique_ptr<ThreadPool> key_lookup_pool;
  std::unique_ptr<Authorizer> authorizer;
  std::unique_ptr<pg::NotificationListener> listener;  // feeds the hub and the key cache
  std::unique_ptr<Shortener> shortener;
  std::unique_ptr<clicks::PgClickStore> click_store;
  std::unique_ptr<geoip::CountryDbHolder> countries;  // null without --geoip_db
  std::unique_ptr<ClickRecorder> click_recorder;
  std::unique_ptr<LinkStats> link_stats;
  // Daily: next month's visits partition, retention. Null without visits
  // and retention.
  std::unique_ptr<PeriodicTask> retention;
  std::unique_ptr<ShortenServiceImpl> service;

  // Call after the gRPC server has shut down (no RPC in flight).
  void Stop() {
    deny_list.reset();        // no more deny list reloads
    retention.reset();        // no more retention sweeps
    listener.reset();         // no more hub or key cache calls from the listener thread
    key_lookup_pool.reset();  // finishes the key look-ups queued
    blocking_pool.reset();    // runs what is queued (it may still hand links to the committer)
    committer.reset();        // commits what is queued, completes every caller
    reads.reset();            // answers what is queued
    ids.reset();              // stops the background leaser
    service.reset();
    shortener.reset();
    hub.reset();
  }
};

// Every replica listens for the revocations committed by any replica
// (PgLinkStore::Revoke NOTIFYs the code) and hands them to its hub: one path
// for its own revocations too, so nothing reaches an edge before it commits.
// Revoked API keys come the same way ("key:<hash>", PgApiKeyStore::Revoke)
// and leave the key cache.
absl::Status StartListener(const ServerConfig& config, const std::string& channel,
                           ServiceParts& parts) {
  InvalidationHub* hub = parts.hub.get();
  auth::KeyCache* keys = parts.key_cache.get();
  pg::NotificationListenerOptions options;
  options.conninfo = config.postgres;
  options.channel = channel;
  pg::NotificationCallbacks callbacks;
  callbacks.on_notification = [hub, keys](const std::string& payload) {
    if (absl::StartsWith(payload, auth::kKeyInvalidationPrefix)) {
      keys->Invalidate(absl::string_view(payload).substr(auth::kKeyInvalidationPrefix.size()));
    } else {
      hub->Publish(payload);
    }
  };
  callbacks.on_listening = [hub, keys](bool first) {
    // Revocations committed while nobody listened were missed: every
    // subscriber drops its cache, and so do we for keys. (Before the first
    // LISTEN nobody can have subscribed yet, but it costs nothing to be
    // sure.)
    if (!first) LogInfo("invalidation listener reconnected: subscribers told to drop all");
    hub->DropAll();
    keys->Clear();
  };
  callbacks.on_lost = [](const absl::Status& why) {
    LogWarning("invalidation listener: %s; reconnecting", why.ToString());
  };
  SHORTENER_ASSIGN_OR_RETURN(parts.listener,
                             pg::NotificationListener::Start(options, std::move(callbacks)));
  absl::Duration wait = std::min(config.db_startup_timeout, absl::Seconds(10));
  if (!parts.listener->WaitUntilListening(absl::Now() + wait)) {
    LogWarning("invalidation listener not listening after %s; serving anyway (it keeps trying)",
               absl::FormatDuration(wait));
  }
  return absl::OkStatus();
}

// The URL policy, and the watcher that keeps its deny list in step with
// --denied_domains_file (merged with --denied_domains). A file that cannot
// be loaded stops the start, naming the file and line.
absl::Status BuildUrlPolicy(const ServerConfig& config, ServiceParts& parts) {
  url::UrlPolicyOptions url_options;
  url_options.max_length = config.max_url_length;
  url_options.allowed_schemes = config.allowed_schemes;
  url_options.short_domains = config.short_domains;
  // Our own host ("http://sho.rt/" -> "sho.rt"), for the loop check.
  url_options.short_domains.emplace_back(url::HostOfUrl(config.base_url));
  url_options.denied_domains = config.denied_domains;
  url_options.allow_private_targets = config.allow_private_targets;
  parts.url_policy = std::make_unique<url::UrlPolicy>(url_options);
  if (config.denied_domains_file.empty()) return absl::OkStatus();
  url::DenyListWatcherOptions watch;
  watch.path = config.denied_domains_file;
  watch.fixed_domains = config.denied_domains;
  url::UrlPolicy* policy = parts.url_policy.get();
  absl::StatusOr<std::unique_ptr<url::DenyListWatcher>> watcher = url::DenyListWatcher::Start(
      watch,
      [policy](const std::vector<std::string>& domains) { policy->SetDeniedDomains(domains); });
  if (!watcher.ok()) {
    return absl::Status(watcher.status().code(),
                        absl::StrCat("--denied_domains_file: ", watcher.status().message()));
  }
  parts.deny_list = *std::move(watcher);
  return absl::OkStatus();
}

// The click store, RecordClicks' logic over it, and the daily task that
// creates next month's visits partition and drops those past the retention.
absl::Status BuildClicks(const ServerConfig& config, const std::string& invalidation_channel,
                         ServiceParts& parts) {
  clicks::PgClickStoreOptions options;
  options.conninfo = config.postgres;
  // Exhausted click budgets are announced like revocations.
  options.invalidation_channel = invalidation_channel;
  const codec::ShortCodec* codec = parts.codec.get();
  options.generated_code = [codec](int64_t id) { return codec->Encode(static_cast<uint64_t>(id)); };
  SHORTENER_ASSIGN_OR_RETURN(parts.click_store, clicks::PgClickStore::Create(options));
  clicks::PgClickStore* store = parts.click_store.get();
  ClickRecorderOptions recorder_options;
  recorder_options.record_visits = config.record_visits;
  recorder_options.keep_full_ips = config.keep_full_ips;
  recorder_options.countries = parts.countries.get();
  parts.click_recorder =
      std::make_unique<ClickRecorder>(parts.shortener.get(), store, recorder_options);
  parts.link_stats =
      std::make_unique<LinkStats>(parts.shortener.get(), store, parts.blocking_pool.get());
  if (!config.record_visits && config.visits_retention_months == 0) return absl::OkStatus();
  clicks::VisitRetentionOptions retention;
  retention.record_visits = config.record_visits;
  retention.retention_months = config.visits_retention_months;
  parts.retention = std::make_unique<PeriodicTask>(absl::Hours(24), [store, retention] {
    clicks::SweepVisits(*store, SystemClock(), retention);
  });
  return absl::OkStatus();
}

// The GeoIP database of --geoip_db, if any. A file that cannot be opened
// stops the start, naming the flag and the file.
absl::Status OpenCountries(const ServerConfig& config, ServiceParts& parts) {
  if (config.geoip_db.empty()) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<geoip::CountryDbHolder>> countries =
      geoip::CountryDbHolder::Open(config.geoip_db);
  if (!countries.ok()) {
    return absl::Status(countries.status().code(),
                        absl::StrCat("--geoip_db: ", countries.status().message()));
  }
  parts.countries = *std::move(countries);
  LogInfo("visits get their country from %s (%s)%s", config.geoip_db,
          parts.countries->Current()->description(),
          config.record_visits ? "" : "; unused: --record_visits=false");
  return absl::OkStatus();
}

// SIGHUP: the GeoIP database again (the monthly update). A file that does
// not open keeps the database in effect.
void ReloadCountries(geoip::CountryDbHolder& countries) {
  absl::Status reloaded = countries.Reload();
  if (reloaded.ok()) {
    LogInfo("SIGHUP: GeoIP database reloaded: %s", countries.Current()->description());
  } else {
    LogWarning("SIGHUP: GeoIP database not reloaded, the previous one stays: %s",
               reloaded.ToString());
  }
}

absl::StatusOr<std::unique_ptr<ServiceParts>> BuildParts(const ServerConfig& config) {
  auto parts = std::make_unique<ServiceParts>();
  SHORTENER_ASSIGN_OR_RETURN(codec::ShortCodec codec, LoadCodec(config));
  parts->codec = std::make_unique<codec::ShortCodec>(std::move(codec));
  // Before the database: a bad deny list or GeoIP file fails the start at
  // once, not after a wait for the database.
  SHORTENER_RETURN_IF_ERROR(BuildUrlPolicy(config, *parts));
  SHORTENER_RETURN_IF_ERROR(OpenCountries(config, *parts));
  SHORTENER_RETURN_IF_ERROR(PrepareDatabase(config, *parts->codec));

  store::PgLinkStoreOptions store_options;
  store_options.conninfo = config.postgres;
  store_options.pool_size = config.db_pool_size;
  SHORTENER_ASSIGN_OR_RETURN(parts->link_store, store::PgLinkStore::Create(store_options));
  parts->segment_source = std::make_unique<idalloc::PgSegmentSource>(config.postgres);
  idalloc::IdAllocatorOptions id_options;
  id_options.initial_step = config.id_initial_step;
  id_options.max_step = config.id_max_step;
  id_options.target_segment_lifetime = config.id_segment_lifetime;
  parts->ids =
      std::make_unique<idalloc::SegmentIdAllocator>(parts->segment_source.get(), id_options);
  store::GroupCommitOptions commit_options;
  commit_options.max_batch = config.group_commit_batch;
  commit_options.committer_threads = config.group_commit_threads;
  commit_options.parallel_backlog = config.group_commit_parallel_backlog;
  commit_options.parallel_after = config.group_commit_parallel_after;
  commit_options.max_queued = config.group_commit_queue;
  parts->committer =
      std::make_unique<store::GroupCommitter>(parts->link_store.get(), commit_options);
  store::ReadBatchOptions read_options;
  read_options.max_batch = config.resolve_batch;
  read_options.reader_threads = config.resolve_threads;
  read_options.max_queued = config.resolve_queue;
  parts->reads = std::make_unique<store::ReadBatcher>(parts->link_store.get(), read_options);
  parts->blocking_pool = std::make_unique<ThreadPool>(ThreadPoolOptions{
      "blocking pool", config.blocking_threads, static_cast<size_t>(config.blocking_queue)});
  InvalidationHubOptions hub_options;
  hub_options.flush_interval = config.invalidation_flush;
  hub_options.max_pending_codes = static_cast<size_t>(config.invalidation_max_pending);
  hub_options.max_subscribers = static_cast<size_t>(config.max_invalidation_subscribers);
  parts->hub = std::make_unique<InvalidationHub>(hub_options);

  auth::PgApiKeyStoreOptions key_store_options;
  key_store_options.conninfo = config.postgres;
  key_store_options.invalidation_channel = store_options.invalidation_channel;
  SHORTENER_ASSIGN_OR_RETURN(parts->api_key_store, auth::PgApiKeyStore::Create(key_store_options));
  parts->key_admin = std::make_unique<KeyAdmin>(parts->api_key_store.get(), SystemClock());
  if (!config.bootstrap_admin_key_file.empty()) {
    SHORTENER_RETURN_IF_ERROR(
        parts->key_admin->EnsureBootstrapAdminKey(config.bootstrap_admin_key_file));
  }
  auth::KeyCacheOptions key_cache_options;
  key_cache_options.ttl = config.api_key_cache_ttl;
  parts->key_cache = std::make_unique<auth::KeyCache>(parts->api_key_store.get(), SystemClock(),
                                                      key_cache_options);
  parts->rate_limiter = std::make_unique<auth::RateLimiter>();
  // Key look-ups have their own small pool: a flood of unknown keys then
  // queues here instead of occupying the threads Revoke and alias look-ups
  // need.
  parts->key_lookup_pool = std::make_unique<ThreadPool>(
      ThreadPoolOptions{"key look-up pool", 2, static_cast<size_t>(config.key_lookup_queue)});
  parts->authorizer =
      std::make_unique<Authorizer>(parts->key_cache.get(), parts->rate_limiter.get(),
                                   parts->key_lookup_pool.get(), SystemClock());
  SHORTENER_RETURN_IF_ERROR(StartListener(config, store_options.invalidation_channel, *parts));
  ShortenerOptions options;
  options.base_url = config.base_url;
  parts->shortener = std::make_unique<Shortener>(
      parts->codec.get(), parts->url_policy.get(), parts->ids.get(), parts->link_store.get(),
      parts->committer.get(), parts->reads.get(), parts->blocking_pool.get(), options);
  SHORTENER_RETURN_IF_ERROR(BuildClicks(config, store_options.invalidation_channel, *parts));
  parts->service = std::make_unique<ShortenServiceImpl>(
      parts->shortener.get(), parts->blocking_pool.get(), parts->hub.get(), parts->authorizer.get(),
      parts->key_admin.get(), parts->click_recorder.get(), parts->link_stats.get(),
      RequestLimits(config.max_url_length));
  return parts;
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

// Last resort: if draining hangs (a database that accepts connections but
// never answers), exit non-zero instead of hanging forever.
void StartShutdownWatchdog(absl::Duration limit) {
  std::thread([limit] {
    absl::SleepFor(limit);
    LogError("shutdown did not finish within %s: exiting", absl::FormatDuration(limit));
    std::_Exit(1);
  }).detach();
}

}  // namespace

absl::Status RunServer(const ServerConfig& config) {
  SHORTENER_RETURN_IF_ERROR(ValidateConfig(config));
  // Before the database: a bad certificate or key should stop the start at
  // once, not after migrations.
  SHORTENER_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                             grpcutil::MakeServerCredentials(config.tls));
  SHORTENER_ASSIGN_OR_RETURN(std::unique_ptr<ServiceParts> parts, BuildParts(config));

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(config.listen, credentials, &port);
  builder.RegisterService(parts->service.get());
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

  int signo = ::shortener::WaitForTermination([&parts] {
    if (parts->deny_list == nullptr && parts->countries == nullptr) {
      LogInfo("SIGHUP: nothing to reload (no --denied_domains_file, no --geoip_db)");
      return;
    }
    // Logs the outcome; a failure keeps the list in effect.
    if (parts->deny_list != nullptr) parts->deny_list->Reload("SIGHUP").IgnoreError();
    if (parts->countries != nullptr) ReloadCountries(*parts->countries);
  });
  LogInfo("signal %d: draining (grace %s)", signo, absl::FormatDuration(config.shutdown_grace));
  StartShutdownWatchdog(config.shutdown_grace + absl::Seconds(20));
  server->GetHealthCheckService()->SetServingStatus(false);
  // WatchInvalidations streams never end by themselves: end them now (the
  // edges resubscribe elsewhere) or Shutdown would wait the whole grace.
  parts->hub->Close();
  // Stops accepting, lets in-flight calls finish until the grace period ends,
  // then cancels the rest. In-flight Shorten calls complete when their batch
  // commits, which the committer keeps doing until it is destroyed.
  server->Shutdown(std::chrono::system_clock::now() + absl::ToChronoSeconds(config.shutdown_grace));
  server->Wait();
  LogServed(*parts);
  parts->Stop();
  LogInfo("shorten-service stopped");
  return absl::OkStatus();
}

}  // namespace shortener::service
