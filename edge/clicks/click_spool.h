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
// crash, which the service's batch-id dedup makes harmless.
//
// Unreadable records are dropped and counted (Stats: unreadable_records,
// unreadable_events, edge_clicks_dropped_total{reason="spool_unreadable"}),
// never replayed again and never in the way of what follows: on open, a
// record whose CRC fails is skipped when the header after it verifies
// (damage inside one record), and otherwise ends its segment (a crash
// mid-write leaves such a torn tail; the file is never appended to again);
// a record that verifies but does not decode as a batch, or no longer
// verifies when it is read back, is dropped by Front. The record format is
// parsed by pure functions (ScanSpoolSegment, ParseSpoolRecord) that the
// fuzzer runs without files.
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
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "edge/clicks/click_event.h"

namespace shortener::edge {

struct ClickSpoolStats {
  uint64_t batches = 0;  // waiting now
  uint64_t bytes = 0;    // bytes they take (file sizes for FileClickSpool)
  // Records dropped because they did not verify or decode (since start).
  uint64_t unreadable_records = 0;
  // The events those held, as far as their bytes could be read
  // (CountEncodedEvents: a lower bound when a record is damaged).
  uint64_t unreadable_events = 0;
};

class ClickSpool {
 public:
  virtual ~ClickSpool() = default;

  // Adds `batch` at the back, durably for FileClickSpool.
  // RESOURCE_EXHAUSTED if it would take the spool past its byte cap (nothing
  // is written); INTERNAL on an I/O error.
  virtual absl::Status Append(const ClickBatch& batch) = 0;

  // The oldest batch not yet acknowledged; nullopt when empty. INTERNAL on
  // an I/O error; DATA_LOSS if the stored record does not verify or does
  // not decode (it is then dropped and counted in Stats: the next call
  // returns the one after it).
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

  // Appends `payload` as it is, as if it were an encoded batch: for tests
  // of what the spool does with bytes that do not decode.
  void AppendRawForTest(std::string payload);

 private:
  const uint64_t max_bytes_;
  std::deque<std::string> records_;  // encoded batches
  std::atomic<uint64_t> batches_{0};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> unreadable_records_{0};
  std::atomic<uint64_t> unreadable_events_{0};
};

// The file spool's record format, as pure functions over bytes.

// u32 payload length + u32 CRC-32 of the payload, both little-endian.
inline constexpr size_t kSpoolRecordHeaderBytes = 8;

// The CRC-32 (IEEE) FileClickSpool stores with each record.
uint32_t SpoolChecksum(absl::string_view payload);

// Header and payload of one record.
std::string EncodeSpoolRecord(absl::string_view payload);

// The payload of the record at the start of `bytes`: DATA_LOSS (saying
// which) if `bytes` is shorter than a header, the length is 0 (no batch
// encodes to nothing) or runs past the end of `bytes`, or the CRC fails.
absl::StatusOr<absl::string_view> ParseSpoolRecord(absl::string_view bytes);

// A record found in a segment: where its header starts, its payload bytes.
struct SpoolRecordSpan {
  uint64_t offset = 0;
  uint32_t length = 0;
};

// What a segment file's bytes hold.
struct SpoolSegmentScan {
  // Records that verify (ParseSpoolRecord), in file order: increasing,
  // non-overlapping, inside the bytes.
  std::vector<SpoolRecordSpan> records;
  // Records that do not verify, each counted once: one whose CRC fails is
  // skipped if the header after it verifies; otherwise it and everything
  // after it are one torn tail. Torn tail bytes start at `torn_tail_at`
  // (the size of the bytes when there is none).
  uint64_t damaged_records = 0;
  uint64_t damaged_events = 0;  // CountEncodedEvents of their payloads
  uint64_t torn_tail_at = 0;
};
SpoolSegmentScan ScanSpoolSegment(absl::string_view bytes);

// How many events the encoded RecordClicksRequest `payload` holds as far as
// its bytes can be read: the `events` fields (number 2, length-delimited)
// before the first byte that breaks the protobuf wire format. Equal to
// events_size() for bytes that parse without groups; a lower bound for
// damaged ones.
uint64_t CountEncodedEvents(absl::string_view payload);

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_CLICKS_CLICK_SPOOL_H_
