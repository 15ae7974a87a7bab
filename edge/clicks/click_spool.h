// Where click batches wait while the shorten-service cannot take them: a
// FIFO of whole batches (each keeps its batch id, so a replayed batch is
// deduplicated by the service like any retry), bounded in bytes.
//
// FileClickSpool keeps them in a directory of append-only segment files
// ("clicks-<seq>.spool"), one record per batch:
//   u32 little-endian payload length | u32 little-endian CRC-32 of payload |
//   payload (the batch as a serialized RecordClicksRequest)
// Each Append is written and fdatasync'd before it returns (batches come
// about once a second, an fdatasync costs ~0.2 ms). A new segment is started
// when the current one passes `segment_bytes`, and on every open: a file
// with a torn tail (crash mid-write) is never appended to. A segment is
// deleted once every batch in it is acknowledged (PopFront); a batch
// acknowledged in a segment that still holds others is sent again after a
// crash, which the service's batch-id dedup makes harmless. On open,
// records are checked; a record whose length or CRC does not hold ends its
// segment (logged as a warning: only a crash mid-write makes one).
//
// InMemoryClickSpool is the same FIFO and bound without durability: used
// when no spool directory is configured, and by tests.
//
// Thread safety: Append, Front and PopFront are called by one thread (the
// sender); Stats from any thread.
#ifndef SHORTENER_EDGE_CLICKS_CLICK_SPOOL_H_
#define SHORTENER_EDGE_CLICKS_CLICK_SPOOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "edge/clicks/click_event.h"

namespace shortener::edge {

struct ClickSpoolStats {
  uint64_t batches = 0;  // waiting now
  uint64_t bytes = 0;    // bytes they take (file sizes for FileClickSpool)
};

class ClickSpool {
 public:
  virtual ~ClickSpool() = default;

  // Adds `batch` at the back, durably for FileClickSpool.
  // RESOURCE_EXHAUSTED if it would take the spool past its byte cap (nothing
  // is written); INTERNAL on an I/O error.
  virtual absl::Status Append(const ClickBatch& batch) = 0;

  // The oldest batch not yet acknowledged; nullopt when empty. INTERNAL on
  // an I/O error, DATA_LOSS if the stored record no longer verifies (it is
  // then skipped: the next call returns the one after it).
  virtual absl::StatusOr<std::optional<ClickBatch>> Front() = 0;

  // Acknowledges the oldest batch (it is forgotten; its segment is deleted
  // when it holds no other). INTERNAL on an I/O error.
  virtual absl::Status PopFront() = 0;

  virtual ClickSpoolStats Stats() const = 0;
  bool empty() const { return Stats().batches == 0; }
};

struct FileClickSpoolOptions {
  std::string dir;                            // --click_spool_dir; created if missing
  uint64_t max_bytes = uint64_t{1} << 30;     // --click_spool_max_bytes
  uint64_t segment_bytes = 16 * 1024 * 1024;  // start a new file past this size
};

// Opens (creating if needed) the spool directory and indexes the batches
// left there by a previous run, oldest first. INVALID_ARGUMENT for an empty
// dir, INTERNAL when it cannot be created or read.
absl::StatusOr<std::unique_ptr<ClickSpool>> OpenFileClickSpool(FileClickSpoolOptions options);

class InMemoryClickSpool : public ClickSpool {
 public:
  explicit InMemoryClickSpool(uint64_t max_bytes) : max_bytes_(max_bytes) {}
  absl::Status Append(const ClickBatch& batch) override;
  absl::StatusOr<std::optional<ClickBatch>> Front() override;
  absl::Status PopFront() override;
  ClickSpoolStats Stats() const override;

 private:
  const uint64_t max_bytes_;
  std::deque<std::string> records_;  // encoded batches
  std::atomic<uint64_t> batches_{0};
  std::atomic<uint64_t> bytes_{0};
};

// The CRC-32 (IEEE) FileClickSpool stores with each record. Exposed for tests.
uint32_t SpoolChecksum(const std::string& payload);

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_CLICKS_CLICK_SPOOL_H_
