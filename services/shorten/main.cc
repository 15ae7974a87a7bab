// shorten-service: flags -> ServerConfig -> RunServer (server.h).
#include "lib/common/daemon_main.h"
#include "services/shorten/server.h"
#include "services/shorten/server_flags.h"

namespace {
constexpr shortener::DaemonInfo kDaemon = {"shorten-service",
                                           "the gRPC ShortenService (see docs/operations.md)",
                                           "services/shorten/server_flags.cc"};
}  // namespace

int main(int argc, char** argv) {
  shortener::StartDaemon(argc, argv, kDaemon);
  const shortener::service::ServerConfig config = shortener::service::ServerConfigFromFlags();
  return shortener::DaemonExitCode(kDaemon, shortener::service::RunServer(config));
}
