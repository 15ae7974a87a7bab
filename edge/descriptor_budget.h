// How many client connections the edge may hold within its open-file limit
// (pure arithmetic; edge/app raises the limit and logs the result).
//
// Every client connection is a file descriptor. If connections may take
// them all, the descriptors the edge needs for itself (a new connection to
// the service, a click spool segment, an accepted socket to refuse) fail
// with EMFILE first: clicks stop being spooled and sent while redirects go
// on. So the connection limit is the open-file limit minus a reserve for
// everything else, and an explicit --max_connections must fit under it.
//
// Thread safety: pure functions.
#ifndef SHORTENER_EDGE_DESCRIPTOR_BUDGET_H_
#define SHORTENER_EDGE_DESCRIPTOR_BUDGET_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"

namespace shortener::edge {

// What the edge runs besides client connections.
struct DescriptorNeeds {
  int event_loops = 1;           // --threads (resolved: at least 1)
  size_t admin_connections = 0;  // the admin listener's connection limit; 0: none
};

// The reserve, by part.
inline constexpr uint64_t kStdioDescriptors = 3;
// Listener, epoll, eventfd and timerfd of the loop; a socket accepted over
// the limit, open until it is closed; and one connection over
// max_connections that this loop accepted while another loop did too (the
// count is read without a lock).
inline constexpr uint64_t kDescriptorsPerLoop = 6;
// gRPC to the service: the connection (two while one reconnects), the
// event engine's epoll and wakeup descriptors, DNS look-ups.
inline constexpr uint64_t kUpstreamDescriptors = 32;
// Click spool: the segment written, the directory (fsync), a segment read
// for replay, and its checks at start.
inline constexpr uint64_t kClickSpoolDescriptors = 8;
// Files opened while running (secrets and certificates re-read, /proc),
// and slack for what a library opens without telling.
inline constexpr uint64_t kSlackDescriptors = 32;
// The admin listener's own loop (as kDescriptorsPerLoop).
inline constexpr uint64_t kAdminLoopDescriptors = 6;

// Descriptors kept for everything but client connections.
uint64_t ReservedDescriptors(const DescriptorNeeds& needs);

struct ConnectionBudget {
  uint64_t open_file_limit = 0;
  uint64_t reserved = 0;
  uint64_t max_connections = 0;
  bool derived = false;  // computed from the limit (no --max_connections given)
};

// `requested` 0: max_connections = open_file_limit - reserve (derived).
// Otherwise `requested` itself, if it fits with the reserve.
// INVALID_ARGUMENT naming the numbers when an explicit value does not fit;
// FAILED_PRECONDITION when the limit leaves no room for a single
// connection.
absl::StatusOr<ConnectionBudget> PlanConnections(uint64_t open_file_limit,
                                                 const DescriptorNeeds& needs, uint64_t requested);

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_DESCRIPTOR_BUDGET_H_
