// shorten-service's run function: validates a ServerConfig
// (server_config.h), builds the parts from it (service_parts.h: codec, URL
// policy, store, id allocator, group committer, read batcher, keys,
// invalidation hub and its Postgres listener, the deny list file's watcher,
// clicks), serves them over gRPC until SIGTERM/SIGINT (SIGHUP reloads the
// deny list file and the GeoIP databases), then ends the invalidation
// streams, drains, logs the calls served and returns.
#ifndef SHORTENER_SERVICES_SHORTEN_SERVER_H_
#define SHORTENER_SERVICES_SHORTEN_SERVER_H_

#include "absl/status/status.h"
#include "services/shorten/server_config.h"

namespace shortener::service {

// Runs the service until SIGTERM or SIGINT; SIGHUP reloads
// denied_domains_file, geoip_db and geoip_asn_db. The three must be blocked in every thread by the
// caller before any thread starts: see lib/common/termination_signals.h.
// Returns OK after a clean drain, or why it could not start: the first
// problem ValidateConfig finds, or a part that could not be built. With
// --migrate=only it applies the migrations and returns (MigrateOnly,
// service_parts.h) without serving.
absl::Status RunServer(const ServerConfig& config);

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_SERVER_H_
