// redirect-edge's command-line flags, and the EdgeConfig they make. Flags
// are defined here and nowhere else: the library takes an EdgeConfig.
#ifndef SHORTENER_EDGE_EDGE_FLAGS_H_
#define SHORTENER_EDGE_EDGE_FLAGS_H_

#include "edge/app/edge_server.h"

namespace shortener::edge {

// The config the parsed flags describe (RunEdge validates it).
EdgeConfig EdgeConfigFromFlags();

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_EDGE_FLAGS_H_
