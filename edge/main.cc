// redirect-edge: flags -> EdgeConfig -> RunEdge (edge/app/edge_server.h).
#include "edge/app/edge_server.h"
#include "edge/edge_flags.h"
#include "lib/common/daemon_main.h"

namespace {
constexpr shortener::DaemonInfo kDaemon = {
    "redirect-edge", "the HTTP redirect edge (see docs/edge.md)", "edge/edge_flags.cc"};
}  // namespace

int main(int argc, char** argv) {
  shortener::StartDaemon(argc, argv, kDaemon);
  const shortener::edge::EdgeConfig config = shortener::edge::EdgeConfigFromFlags();
  return shortener::DaemonExitCode(kDaemon, shortener::edge::RunEdge(config));
}
