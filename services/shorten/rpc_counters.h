// RpcCounters: calls received per ShortenService method, whatever their
// outcome, counted with relaxed atomics (a few ns per call). The server logs
// Summary() once at shutdown; tests (and the edge's end-to-end tests) read
// that line to count calls. Thread-safe.
#ifndef SHORTENER_SERVICES_SHORTEN_RPC_COUNTERS_H_
#define SHORTENER_SERVICES_SHORTEN_RPC_COUNTERS_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace shortener::service {

// In the order of the proto's service.
enum class Rpc {
  kShorten,
  kBatchShorten,
  kResolve,
  kBatchResolve,
  kGetLink,
  kListLinks,
  kGetQrCode,
  kRevoke,
  kUpdateLink,
  kDeleteLink,
  kRevokeLinks,
  kDeleteLinks,
  kRecordClicks,
  kGetClickStats,
  kWatchInvalidations,
  kCreateApiKey,
  kListApiKeys,
  kRevokeApiKey,
};
inline constexpr size_t kRpcCount = 18;

// The method's name as in the proto ("Resolve").
const char* RpcName(Rpc rpc);

class RpcCounters {
 public:
  void Count(Rpc rpc) { counts_[static_cast<size_t>(rpc)].fetch_add(1, std::memory_order_relaxed); }
  int64_t Get(Rpc rpc) const {
    return counts_[static_cast<size_t>(rpc)].load(std::memory_order_relaxed);
  }

  // One line, every method always present, in proto order (a stable format:
  // docs/operations.md):
  // "served: Shorten=12 BatchShorten=0 Resolve=1 BatchResolve=0 GetLink=0
  //  ListLinks=0 GetQrCode=0 Revoke=0 UpdateLink=0 DeleteLink=0 RevokeLinks=0
  //  DeleteLinks=0 RecordClicks=0 GetClickStats=0
  //  WatchInvalidations=2 CreateApiKey=1 ListApiKeys=0 RevokeApiKey=0" (one line).
  std::string Summary() const;

 private:
  std::array<std::atomic<int64_t>, kRpcCount> counts_{};
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_RPC_COUNTERS_H_
