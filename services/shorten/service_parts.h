// ServiceParts: every object shorten-service runs on, and BuildParts, which
// builds them from a validated config in dependency order through one small
// builder per part (codec, URL policy, GeoIP, database, store, ids, queues,
// keys, invalidation listener, shortener, clicks, service). RunServer
// (server.h) serves the result over gRPC and tears it down with Stop().
//
// Start errors name the flag of the file or setting at fault
// ("--codec_secret_file: ...", "--denied_domains_file: ...", "--geoip_db:
// ...", "--geoip_asn_db: ...": server_config.h says why flags), or are the database's own.
//
// Thread safety: BuildParts and Stop run on the thread that runs the
// server; the parts themselves are thread-safe.
#ifndef SHORTENER_SERVICES_SHORTEN_SERVICE_PARTS_H_
#define SHORTENER_SERVICES_SHORTEN_SERVICE_PARTS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "lib/auth/key_cache.h"
#include "lib/auth/pg/pg_api_key_store.h"
#include "lib/auth/token_bucket.h"
#include "lib/clicks/pg/pg_click_store.h"
#include "lib/codec/short_codec.h"
#include "lib/common/thread_pool.h"
#include "lib/geoip/geo_db.h"
#include "lib/idalloc/pg/pg_segment_source.h"
#include "lib/idalloc/segment_id_allocator.h"
#include "lib/pg/connection_pool.h"
#include "lib/pg/notification_listener.h"
#include "lib/store/group_committer.h"
#include "lib/store/pg/pg_link_store.h"
#include "lib/store/read_batcher.h"
#include "lib/url/deny_list_file.h"
#include "lib/url/url_policy.h"
#include "services/shorten/authorizer.h"
#include "services/shorten/click_recorder.h"
#include "services/shorten/invalidation_hub.h"
#include "services/shorten/key_admin.h"
#include "services/shorten/link_eraser.h"
#include "services/shorten/link_lister.h"
#include "services/shorten/link_remover.h"
#include "services/shorten/link_stats.h"
#include "services/shorten/periodic_task.h"
#include "services/shorten/readiness.h"
#include "services/shorten/server_config.h"
#include "services/shorten/shorten_service.h"
#include "services/shorten/shortener.h"

namespace shortener::service {

// Everything the server runs on. Built in dependency order; torn down by
// Stop() in the order that stops users before what they use.
struct ServiceParts {
  std::unique_ptr<codec::ShortCodec> codec;
  std::unique_ptr<url::UrlPolicy> url_policy;
  std::unique_ptr<url::DenyListWatcher> deny_list;  // updates url_policy; null without a file
  std::unique_ptr<store::PgLinkStore> link_store;
  // The NOTIFY channel of revoked links and keys and of exhausted budgets.
  std::string invalidation_channel;
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
  std::unique_ptr<geoip::GeoLocator> geo;  // null without --geoip_db and --geoip_asn_db
  std::unique_ptr<ClickRecorder> click_recorder;
  std::unique_ptr<LinkStats> link_stats;
  std::unique_ptr<LinkLister> link_lister;
  std::unique_ptr<LinkEraser> link_eraser;
  std::unique_ptr<PeriodicTask> link_erasure;  // runs link_eraser
  std::unique_ptr<LinkRemover> link_remover;
  // Daily: next month's visits partition, retention. Null without visits
  // and retention.
  std::unique_ptr<PeriodicTask> retention;
  // The click rollups: merged every second, folded daily.
  std::unique_ptr<PeriodicTask> rollup_merge;
  std::unique_ptr<PeriodicTask> rollup_fold;
  std::unique_ptr<ShortenServiceImpl> service;
  // /readyz: probes the database through a pool of its own (one connection),
  // so that a busy store pool does not make a replica look down.
  std::unique_ptr<pg::ConnectionPool> probe_pool;
  std::unique_ptr<Readiness> readiness;

  // Call after the gRPC server has shut down (no RPC in flight).
  void Stop();
};

// Builds every part; the first failure stops the start. Checks the files
// (code secret, deny list, GeoIP databases) before the database, then waits
// for the database (up to db_startup_timeout), brings its schema forward
// (--migrate=auto) or refuses an older one (--migrate=off: FAILED_PRECONDITION
// naming both versions and what to run), and checks the code secret against
// it.
absl::StatusOr<std::unique_ptr<ServiceParts>> BuildParts(const ValidServerConfig& config);

// --migrate=only: waits for the database (up to db_startup_timeout),
// applies the pending migrations and returns; builds nothing else and reads
// no file. UNAVAILABLE when the database never answered; a failing
// migration's error (naming its file) otherwise.
absl::Status MigrateOnly(const ValidServerConfig& config);

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_SERVICE_PARTS_H_
