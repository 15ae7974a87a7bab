#include "services/shorten/service_parts.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/clicks/pg/rollup_upkeep.h"
#include "lib/clicks/pg/visit_retention.h"
#include "lib/codec/pg/codec_keys.h"
#include "lib/common/clock.h"
#include "lib/common/log.h"
#include "lib/common/status_macros.h"
#include "lib/pg/migrations.h"
#include "lib/url/host_name.h"
#include "services/shorten/request_limits.h"

namespace shortener::service {
namespace {

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

// Runs `step` until the database answers or db_startup_timeout passes:
// at start, reaching the database doubles as its readiness probe. Only
// UNAVAILABLE is retried; other errors (a failing migration) stop at once.
template <typename Step>
auto RetryUntilDatabaseAnswers(const ServerConfig& config, Step step) -> decltype(step()) {
  absl::Time give_up = absl::Now() + config.db_startup_timeout;
  absl::Duration backoff = absl::Milliseconds(200);
  while (true) {
    auto result = step();
    if (result.ok() || !absl::IsUnavailable(result.status()) || absl::Now() + backoff > give_up) {
      return result;
    }
    LogWarning("database not ready (%s); retrying", result.status().ToString());
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, absl::Seconds(5));
  }
}

// What the database's schema is, in the log; a newer one is a rolling
// upgrade whose migrations already ran (accepted: lib/pg/migrations.h).
void LogSchemaState(const pg::SchemaState& state) {
  if (state.newer()) {
    LogWarning(
        "database schema at version %d, newer than this binary's %d: serving on it (migrations "
        "keep the previous release working; replace this binary)",
        state.database_version, state.binary_version);
  } else {
    LogInfo("database schema at version %d", state.database_version);
  }
}

// --migrate=auto and only: applies what is pending (the advisory lock makes
// replicas starting at once take turns), then reads the state back.
absl::StatusOr<pg::SchemaState> ApplyPending(const ServerConfig& config) {
  absl::StatusOr<int> applied =
      RetryUntilDatabaseAnswers(config, [&config] { return pg::ApplyMigrations(config.postgres); });
  if (!applied.ok()) return applied.status();
  if (*applied > 0) LogInfo("applied %d schema migration(s)", *applied);
  return pg::ReadSchemaState(config.postgres);
}

// --migrate=off: applies nothing; an older schema stops the start, saying
// what to run.
absl::StatusOr<pg::SchemaState> CheckSchema(const ServerConfig& config) {
  absl::StatusOr<pg::SchemaState> state =
      RetryUntilDatabaseAnswers(config, [&config] { return pg::ReadSchemaState(config.postgres); });
  if (!state.ok() || state->current()) return state;
  return absl::FailedPreconditionError(absl::StrCat(
      "--migrate=off: ", pg::DescribePending(*state),
      "; apply them first with shorten-service --migrate=only (the shortener-migrate Job or "
      "unit), or start with --migrate=auto"));
}

// The schema as --migrate says, then the code secret checked against the
// database.
absl::Status PrepareDatabase(const ServerConfig& config, const codec::ShortCodec& codec) {
  absl::StatusOr<pg::SchemaState> state =
      config.migrate == MigrateMode::kOff ? CheckSchema(config) : ApplyPending(config);
  if (!state.ok()) return state.status();
  LogSchemaState(*state);
  return codec::VerifyOrRecordCodecFingerprint(config.postgres, codec::ShortCodec::kFormatVersion,
                                               codec.Fingerprint());
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

// The GeoIP database of `flag` at `path` for `role`, or null when the path
// is empty. A file that cannot be opened, or is of the wrong kind (an ASN
// database as --geoip_db), stops the start, naming the flag and the file.
absl::StatusOr<std::unique_ptr<geoip::GeoDbHolder>> OpenGeoDb(absl::string_view flag,
                                                              const std::string& path,
                                                              geoip::GeoRole role,
                                                              absl::string_view fills) {
  if (path.empty()) return nullptr;
  absl::StatusOr<std::unique_ptr<geoip::GeoDbHolder>> db = geoip::GeoDbHolder::Open(path, role);
  if (!db.ok()) {
    return absl::Status(db.status().code(), absl::StrCat(flag, ": ", db.status().message()));
  }
  LogInfo("clicks get their %s from %s (%s)", fills, path, (*db)->Current()->description());
  return db;
}

// The GeoIP databases of --geoip_db and --geoip_asn_db, if any.
absl::Status OpenGeo(const ServerConfig& config, ServiceParts& parts) {
  SHORTENER_ASSIGN_OR_RETURN(std::unique_ptr<geoip::GeoDbHolder> location,
                             OpenGeoDb("--geoip_db", config.geoip_db, geoip::GeoRole::kLocation,
                                       "country (region and city with a City database)"));
  SHORTENER_ASSIGN_OR_RETURN(
      std::unique_ptr<geoip::GeoDbHolder> network,
      OpenGeoDb("--geoip_asn_db", config.geoip_asn_db, geoip::GeoRole::kNetwork, "network"));
  if (location != nullptr || network != nullptr) {
    parts.geo = std::make_unique<geoip::GeoLocator>(std::move(location), std::move(network));
  }
  return absl::OkStatus();
}

// The link store with its batched writes and reads.
absl::Status BuildStore(const ServerConfig& config, ServiceParts& parts) {
  store::PgLinkStoreOptions store_options;
  store_options.conninfo = config.postgres;
  store_options.pool_size = config.db_pool_size;
  SHORTENER_ASSIGN_OR_RETURN(parts.link_store, store::PgLinkStore::Create(store_options));
  parts.invalidation_channel = store_options.invalidation_channel;
  store::GroupCommitOptions commit_options;
  commit_options.max_batch = config.group_commit_batch;
  commit_options.committer_threads = config.group_commit_threads;
  commit_options.parallel_backlog = config.group_commit_parallel_backlog;
  commit_options.parallel_after = config.group_commit_parallel_after;
  commit_options.max_queued = config.group_commit_queue;
  parts.committer = std::make_unique<store::GroupCommitter>(parts.link_store.get(), commit_options);
  store::ReadBatchOptions read_options;
  read_options.max_batch = config.resolve_batch;
  read_options.reader_threads = config.resolve_threads;
  read_options.max_queued = config.resolve_queue;
  parts.reads = std::make_unique<store::ReadBatcher>(parts.link_store.get(), read_options);
  return absl::OkStatus();
}

// Ids from segments leased in the database.
void BuildIds(const ServerConfig& config, ServiceParts& parts) {
  parts.segment_source = std::make_unique<idalloc::PgSegmentSource>(config.postgres);
  idalloc::IdAllocatorOptions id_options;
  id_options.initial_step = config.id_initial_step;
  id_options.max_step = config.id_max_step;
  id_options.target_segment_lifetime = config.id_segment_lifetime;
  parts.ids = std::make_unique<idalloc::SegmentIdAllocator>(parts.segment_source.get(), id_options);
}

// The blocking pool (store calls off reactor threads) and the hub of the
// WatchInvalidations subscribers.
void BuildQueues(const ServerConfig& config, ServiceParts& parts) {
  parts.blocking_pool = std::make_unique<ThreadPool>(ThreadPoolOptions{
      "blocking pool", config.blocking_threads, static_cast<size_t>(config.blocking_queue)});
  InvalidationHubOptions hub_options;
  hub_options.flush_interval = config.invalidation_flush;
  hub_options.max_pending_codes = static_cast<size_t>(config.invalidation_max_pending);
  hub_options.max_subscribers = static_cast<size_t>(config.max_invalidation_subscribers);
  parts.hub = std::make_unique<InvalidationHub>(hub_options);
}

// API keys: their store, KeyAdmin (and the bootstrap admin key), the cache,
// the rate limiter and the Authorizer with its look-up pool.
absl::Status BuildKeys(const ServerConfig& config, ServiceParts& parts) {
  auth::PgApiKeyStoreOptions key_store_options;
  key_store_options.conninfo = config.postgres;
  key_store_options.invalidation_channel = parts.invalidation_channel;
  SHORTENER_ASSIGN_OR_RETURN(parts.api_key_store, auth::PgApiKeyStore::Create(key_store_options));
  parts.key_admin = std::make_unique<KeyAdmin>(parts.api_key_store.get(), SystemClock());
  if (!config.bootstrap_admin_key_file.empty()) {
    SHORTENER_RETURN_IF_ERROR(
        parts.key_admin->EnsureBootstrapAdminKey(config.bootstrap_admin_key_file));
  }
  auth::KeyCacheOptions key_cache_options;
  key_cache_options.ttl = config.api_key_cache_ttl;
  parts.key_cache =
      std::make_unique<auth::KeyCache>(parts.api_key_store.get(), SystemClock(), key_cache_options);
  parts.rate_limiter = std::make_unique<auth::RateLimiter>();
  // Key look-ups have their own small pool: a flood of unknown keys then
  // queues here instead of occupying the threads Revoke and alias look-ups
  // need.
  parts.key_lookup_pool = std::make_unique<ThreadPool>(
      ThreadPoolOptions{"key look-up pool", 2, static_cast<size_t>(config.key_lookup_queue)});
  parts.authorizer = std::make_unique<Authorizer>(parts.key_cache.get(), parts.rate_limiter.get(),
                                                  parts.key_lookup_pool.get(), SystemClock());
  return absl::OkStatus();
}

// Every replica listens for the revocations committed by any replica
// (PgLinkStore::Revoke NOTIFYs the code) and hands them to its hub: one path
// for its own revocations too, so nothing reaches an edge before it commits.
// Revoked API keys come the same way ("key:<hash>", PgApiKeyStore::Revoke)
// and leave the key cache.
absl::Status StartListener(const ServerConfig& config, ServiceParts& parts) {
  InvalidationHub* hub = parts.hub.get();
  auth::KeyCache* keys = parts.key_cache.get();
  pg::NotificationListenerOptions options;
  options.conninfo = config.postgres;
  options.channel = parts.invalidation_channel;
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

// The domain logic of links.
void BuildShortener(const ServerConfig& config, ServiceParts& parts) {
  ShortenerOptions options;
  options.base_url = config.base_url;
  parts.shortener = std::make_unique<Shortener>(
      parts.codec.get(), parts.url_policy.get(), parts.ids.get(), parts.link_store.get(),
      parts.committer.get(), parts.reads.get(), parts.blocking_pool.get(), options);
}

// The click store, RecordClicks' logic over it, and the daily task that
// creates next month's visits partition and drops those past the retention.
absl::Status BuildClicks(const ServerConfig& config, ServiceParts& parts) {
  clicks::PgClickStoreOptions options;
  options.conninfo = config.postgres;
  // Exhausted click budgets are announced like revocations.
  options.invalidation_channel = parts.invalidation_channel;
  const codec::ShortCodec* codec = parts.codec.get();
  options.generated_code = [codec](int64_t id) { return codec->Encode(static_cast<uint64_t>(id)); };
  SHORTENER_ASSIGN_OR_RETURN(parts.click_store, clicks::PgClickStore::Create(options));
  clicks::PgClickStore* store = parts.click_store.get();
  ClickRecorderOptions recorder_options;
  recorder_options.record_visits = config.record_visits;
  recorder_options.keep_full_ips = config.keep_full_ips;
  recorder_options.geo = parts.geo.get();
  parts.click_recorder =
      std::make_unique<ClickRecorder>(parts.shortener.get(), store, recorder_options);
  parts.link_stats =
      std::make_unique<LinkStats>(parts.shortener.get(), store, parts.blocking_pool.get());
  parts.link_lister = std::make_unique<LinkLister>(parts.shortener.get(), parts.link_store.get(),
                                                   store, parts.blocking_pool.get());
  // The rollups' upkeep (lib/clicks/pg/rollup_upkeep.h): pending rows
  // merged every --rollup_merge_interval, old hours folded into days daily.
  parts.rollup_merge = std::make_unique<PeriodicTask>(config.rollup_merge_interval,
                                                      [store] { clicks::MergeRollups(*store); });
  parts.rollup_fold = std::make_unique<PeriodicTask>(
      absl::Hours(24), [store] { clicks::FoldRollups(*store, SystemClock()).IgnoreError(); });
  if (!config.record_visits && config.visits_retention_months == 0) return absl::OkStatus();
  clicks::VisitRetentionOptions retention;
  retention.record_visits = config.record_visits;
  retention.retention_months = config.visits_retention_months;
  parts.retention = std::make_unique<PeriodicTask>(absl::Hours(24), [store, retention] {
    clicks::SweepVisits(*store, SystemClock(), retention);
  });
  return absl::OkStatus();
}

// Deletions (link_remover.h) and the erasure of deleted links' clicks
// (link_eraser.h): every 10 s, and at once after a deletion.
void BuildRemoval(const ServerConfig& config, ServiceParts& parts) {
  parts.link_eraser = std::make_unique<LinkEraser>(parts.link_store.get(), parts.click_store.get());
  LinkEraser* eraser = parts.link_eraser.get();
  parts.link_erasure = std::make_unique<PeriodicTask>(absl::Seconds(10), [eraser] {
    absl::StatusOr<int64_t> erased = eraser->EraseDue();
    if (erased.ok() && *erased > 0) LogInfo("erased the clicks of %d deleted links", *erased);
    // Once a minute at most: during a database outage every run fails.
    static std::atomic<int64_t> last_warning{0};
    const int64_t now = absl::ToUnixSeconds(absl::Now());
    int64_t last = last_warning.load();
    if (!erased.ok() && now - last >= 60 && last_warning.compare_exchange_strong(last, now)) {
      LogWarning("erasing deleted links' clicks: %s (retried every 10 s; logged once a minute)",
                 erased.status().ToString());
    }
  });
  LinkRemoverOptions remover;
  remover.alias_hold = config.deleted_alias_hold;
  PeriodicTask* erasure = parts.link_erasure.get();
  remover.erase_soon = [erasure] { erasure->RunSoon(); };
  parts.link_remover = std::make_unique<LinkRemover>(parts.shortener.get(), parts.link_lister.get(),
                                                     parts.link_store.get(), std::move(remover));
}

// /readyz's database probe: one connection of its own, every second, each
// probe bounded well within the period.
void BuildReadiness(const ServerConfig& config, ServiceParts& parts) {
  pg::ConnectionPoolOptions options;
  options.conninfo = config.postgres;
  options.max_size = 1;
  options.connect_timeout = absl::Seconds(2);
  options.statement_timeout = absl::Seconds(2);
  parts.probe_pool = std::make_unique<pg::ConnectionPool>(options);
  pg::ConnectionPool* pool = parts.probe_pool.get();
  parts.readiness = std::make_unique<Readiness>(
      [pool] { return pool->Ping(absl::Now() + absl::Seconds(2)); }, absl::Seconds(1));
}

}  // namespace

void ServiceParts::Stop() {
  readiness.reset();        // no more database probes
  deny_list.reset();        // no more deny list reloads
  retention.reset();        // no more retention sweeps
  rollup_merge.reset();     // no more rollup merges
  rollup_fold.reset();      // no more rollup folds
  link_erasure.reset();     // no more erasures
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

absl::Status MigrateOnly(const ValidServerConfig& valid) {
  SHORTENER_ASSIGN_OR_RETURN(pg::SchemaState state, ApplyPending(*valid));
  LogSchemaState(state);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ServiceParts>> BuildParts(const ValidServerConfig& valid) {
  const ServerConfig& config = *valid;
  auto parts = std::make_unique<ServiceParts>();
  SHORTENER_ASSIGN_OR_RETURN(codec::ShortCodec codec, LoadCodec(config));
  parts->codec = std::make_unique<codec::ShortCodec>(std::move(codec));
  // Before the database: a bad deny list or GeoIP file fails the start at
  // once, not after a wait for the database.
  SHORTENER_RETURN_IF_ERROR(BuildUrlPolicy(config, *parts));
  SHORTENER_RETURN_IF_ERROR(OpenGeo(config, *parts));
  SHORTENER_RETURN_IF_ERROR(PrepareDatabase(config, *parts->codec));
  SHORTENER_RETURN_IF_ERROR(BuildStore(config, *parts));
  BuildIds(config, *parts);
  BuildQueues(config, *parts);
  SHORTENER_RETURN_IF_ERROR(BuildKeys(config, *parts));
  SHORTENER_RETURN_IF_ERROR(StartListener(config, *parts));
  BuildShortener(config, *parts);
  SHORTENER_RETURN_IF_ERROR(BuildClicks(config, *parts));
  BuildRemoval(config, *parts);
  BuildReadiness(config, *parts);
  parts->service = std::make_unique<ShortenServiceImpl>(
      parts->shortener.get(), parts->blocking_pool.get(), parts->hub.get(), parts->authorizer.get(),
      parts->key_admin.get(), parts->click_recorder.get(), parts->link_stats.get(),
      parts->link_lister.get(), parts->link_remover.get(), RequestLimits(config.max_url_length));
  return parts;
}

}  // namespace shortener::service
