// Listen addresses as flags give them: "host:port" or "[v6]:port". Shared
// by every --*listen flag that an HttpServer binds (the edge's public and
// admin listeners, shorten-service's admin listener).
//
// Thread safety: a pure function.
#ifndef SHORTENER_EDGE_HTTP_HOST_PORT_H_
#define SHORTENER_EDGE_HTTP_HOST_PORT_H_

#include <string>

#include "absl/status/status.h"

namespace shortener::edge {

// Splits "host:port" / "[v6]:port" (port 0..65535). INVALID_ARGUMENT naming
// `flag` ("--admin_listen=\"x\": no port (expected HOST:PORT)").
absl::Status SplitHostPort(const std::string& flag, const std::string& value, std::string* host,
                           int* port);

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_HTTP_HOST_PORT_H_
