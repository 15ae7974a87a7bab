#include "edge/descriptor_budget.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace shortener::edge {

uint64_t ReservedDescriptors(const DescriptorNeeds& needs) {
  const uint64_t loops = static_cast<uint64_t>(std::max(1, needs.event_loops));
  uint64_t reserved = kStdioDescriptors + loops * kDescriptorsPerLoop + kUpstreamDescriptors +
                      kClickSpoolDescriptors + kSlackDescriptors;
  if (needs.admin_connections > 0) reserved += kAdminLoopDescriptors + needs.admin_connections;
  return reserved;
}

absl::StatusOr<ConnectionBudget> PlanConnections(uint64_t open_file_limit,
                                                 const DescriptorNeeds& needs, uint64_t requested) {
  ConnectionBudget budget;
  budget.open_file_limit = open_file_limit;
  budget.reserved = ReservedDescriptors(needs);
  const uint64_t room = open_file_limit > budget.reserved ? open_file_limit - budget.reserved : 0;
  const auto parts = [&] {
    return absl::StrCat(budget.reserved, " reserved (stdio, ", std::max(1, needs.event_loops),
                        " event loops, the service connection, the click spool",
                        needs.admin_connections > 0 ? ", the admin listener" : "", ")");
  };
  if (requested == 0) {
    if (room == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the open-file limit ", open_file_limit, " leaves no descriptor for connections: ",
          parts(), "; raise it (ulimit -n, systemd LimitNOFILE=)"));
    }
    budget.max_connections = room;
    budget.derived = true;
    return budget;
  }
  if (requested > room) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_connections=", requested, " does not fit the open-file limit ", open_file_limit,
        ": at most ", room, " with ", parts(),
        "; raise the limit (ulimit -n, systemd LimitNOFILE=) or lower --max_connections"));
  }
  budget.max_connections = requested;
  return budget;
}

}  // namespace shortener::edge
