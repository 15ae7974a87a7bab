#include "edge/clicks/click_spool.h"

#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/support/status_matchers.h"

namespace shortener::edge {
namespace {

using shortener::testing::HasCode;
using shortener::testing::IsOk;

class TempDir {
 public:
  TempDir() {
    char templ[] = "/tmp/click_spool_test.XXXXXX";
    REQUIRE(mkdtemp(templ) != nullptr);
    path_ = templ;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

  std::vector<std::string> Files() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_)) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::string path_;
};

ClickBatch Batch(int n, int events = 3) {
  ClickBatch batch;
  batch.id = absl::StrCat("edge-", n);
  for (int i = 0; i < events; ++i) {
    batch.events.push_back(MakeClickEvent(absl::StrCat("c", n, "x", i), absl::FromUnixSeconds(n),
                                          "10.0.0.1", "Mozilla/5.0", "", 302));
  }
  return batch;
}

std::unique_ptr<ClickSpool> Open(const std::string& dir, uint64_t max_bytes = 1 << 20,
                                 uint64_t segment_bytes = 1 << 20) {
  FileClickSpoolOptions options;
  options.dir = dir;
  options.max_bytes = max_bytes;
  options.segment_bytes = segment_bytes;
  absl::StatusOr<std::unique_ptr<ClickSpool>> spool = OpenFileClickSpool(options);
  REQUIRE(spool.ok());
  return *std::move(spool);
}

// Reads and acknowledges everything; returns the batch ids in order.
std::vector<std::string> Drain(ClickSpool& spool) {
  std::vector<std::string> ids;
  while (true) {
    absl::StatusOr<std::optional<ClickBatch>> front = spool.Front();
    REQUIRE(front.ok());
    if (!front->has_value()) break;
    ids.push_back((*front)->id);
    REQUIRE_THAT(spool.PopFront(), IsOk());
  }
  return ids;
}

TEST_CASE("the file spool replays batches oldest first with their ids and events",
          "[edge/clicks][spool]") {
  TempDir dir;
  std::unique_ptr<ClickSpool> spool = Open(dir.path());
  CHECK(spool->empty());
  for (int i = 1; i <= 5; ++i) REQUIRE_THAT(spool->Append(Batch(i)), IsOk());
  CHECK(spool->Stats().batches == 5);
  absl::StatusOr<std::optional<ClickBatch>> front = spool->Front();
  REQUIRE(front.ok());
  REQUIRE(front->has_value());
  CHECK((*front)->events.size() == 3);
  CHECK((*front)->events[2].code == "c1x2");
  CHECK(Drain(*spool) ==
        std::vector<std::string>{"edge-1", "edge-2", "edge-3", "edge-4", "edge-5"});
  CHECK(spool->Stats().bytes == 0);
  CHECK(dir.Files().empty());
}

TEST_CASE("a reopened spool replays what a previous run left", "[edge/clicks][spool]") {
  TempDir dir;
  {
    std::unique_ptr<ClickSpool> spool = Open(dir.path());
    for (int i = 1; i <= 3; ++i) REQUIRE_THAT(spool->Append(Batch(i)), IsOk());
    REQUIRE_THAT(spool->PopFront(), IsOk());  // edge-1 acknowledged
  }
  std::unique_ptr<ClickSpool> spool = Open(dir.path());
  // edge-1 shared its segment with unacknowledged batches, so it comes back
  // too: the service deduplicates it by id.
  REQUIRE_THAT(spool->Append(Batch(4)), IsOk());
  CHECK(Drain(*spool) == std::vector<std::string>{"edge-1", "edge-2", "edge-3", "edge-4"});
  CHECK(dir.Files().empty());
}

TEST_CASE("the spool directory and its files are private to the edge's user",
          "[edge/clicks][spool]") {
  // Spooled batches hold full IPs, User-Agents and Referers.
  TempDir parent;
  const std::string dir = parent.path() + "/spool/nested";
  std::unique_ptr<ClickSpool> spool = Open(dir);
  REQUIRE_THAT(spool->Append(Batch(1)), IsOk());
  namespace fs = std::filesystem;
  CHECK(fs::status(dir).permissions() == fs::perms::owner_all);
  const std::vector<std::string> files = [&] {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
    return out;
  }();
  REQUIRE(files.size() == 1);
  CHECK(fs::status(files[0]).permissions() == (fs::perms::owner_read | fs::perms::owner_write));
}

TEST_CASE("a segment is deleted once all its batches are acknowledged", "[edge/clicks][spool]") {
  TempDir dir;
  // Small segments: every batch starts a new file once the last one has any.
  std::unique_ptr<ClickSpool> spool = Open(dir.path(), 1 << 20, 1);
  for (int i = 1; i <= 3; ++i) REQUIRE_THAT(spool->Append(Batch(i)), IsOk());
  REQUIRE(dir.Files().size() == 3);
  const std::string first = dir.Files()[0];
  REQUIRE_THAT(spool->PopFront(), IsOk());
  CHECK(dir.Files().size() == 2);
  CHECK_FALSE(std::filesystem::exists(first));
  // A restart now brings back only the two unacknowledged batches.
  spool.reset();
  spool = Open(dir.path(), 1 << 20, 1);
  CHECK(Drain(*spool) == std::vector<std::string>{"edge-2", "edge-3"});
}

TEST_CASE("a torn last record is skipped and the records before it replayed",
          "[edge/clicks][spool]") {
  TempDir dir;
  {
    std::unique_ptr<ClickSpool> spool = Open(dir.path());
    for (int i = 1; i <= 3; ++i) REQUIRE_THAT(spool->Append(Batch(i)), IsOk());
  }
  REQUIRE(dir.Files().size() == 1);
  const std::string file = dir.Files()[0];
  const auto size = std::filesystem::file_size(file);
  SECTION("cut inside the last record") { std::filesystem::resize_file(file, size - 5); }
  SECTION("garbage in the last record's payload") {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 3));
    f.write("XYZ", 3);
  }
  SECTION("only half a header after the last record") {
    std::ofstream(file, std::ios::app | std::ios::binary).write("\x10\x00\x00", 3);
  }
  std::unique_ptr<ClickSpool> spool = Open(dir.path());
  std::vector<std::string> ids = Drain(*spool);
  // The half-header case keeps all three; the others lose the torn one.
  if (ids.size() == 3) {
    CHECK(ids == std::vector<std::string>{"edge-1", "edge-2", "edge-3"});
  } else {
    CHECK(ids == std::vector<std::string>{"edge-1", "edge-2"});
  }
  // New batches after a torn file go to a new segment and come back intact.
  REQUIRE_THAT(spool->Append(Batch(9)), IsOk());
  spool.reset();
  spool = Open(dir.path());
  CHECK(Drain(*spool) == std::vector<std::string>{"edge-9"});
}

TEST_CASE("the spool refuses a batch that would pass its byte cap", "[edge/clicks][spool]") {
  TempDir dir;
  const uint64_t one = 8 + EncodeClickBatch(Batch(1)).size();
  std::unique_ptr<ClickSpool> spool = Open(dir.path(), 2 * one + one / 2);
  REQUIRE_THAT(spool->Append(Batch(1)), IsOk());
  REQUIRE_THAT(spool->Append(Batch(2)), IsOk());
  CHECK_THAT(spool->Append(Batch(3)), HasCode(absl::StatusCode::kResourceExhausted));
  CHECK(spool->Stats().batches == 2);
  CHECK(spool->Stats().bytes == 2 * one);
  // Acknowledging the whole (shared) segment frees the room.
  CHECK(Drain(*spool).size() == 2);
  CHECK_THAT(spool->Append(Batch(3)), IsOk());
}

TEST_CASE("the in-memory spool is the same FIFO with the same cap", "[edge/clicks][spool]") {
  const uint64_t one = 8 + EncodeClickBatch(Batch(1)).size();
  InMemoryClickSpool spool(2 * one);
  REQUIRE_THAT(spool.Append(Batch(1)), IsOk());
  REQUIRE_THAT(spool.Append(Batch(2)), IsOk());
  CHECK_THAT(spool.Append(Batch(3)), HasCode(absl::StatusCode::kResourceExhausted));
  CHECK(Drain(spool) == std::vector<std::string>{"edge-1", "edge-2"});
  CHECK(spool.Stats().bytes == 0);
}

// Three records, as a segment file holds them.
std::string Segment(std::vector<std::string>* payloads = nullptr) {
  std::string bytes;
  for (int i = 1; i <= 3; ++i) {
    const std::string payload = EncodeClickBatch(Batch(i, i + 1));
    if (payloads != nullptr) payloads->push_back(payload);
    bytes += EncodeSpoolRecord(payload);
  }
  return bytes;
}

TEST_CASE("ScanSpoolSegment finds every record of an intact segment", "[edge/clicks][spool]") {
  std::vector<std::string> payloads;
  const std::string bytes = Segment(&payloads);
  const SpoolSegmentScan scan = ScanSpoolSegment(bytes);
  REQUIRE(scan.records.size() == 3);
  CHECK(scan.damaged_records == 0);
  CHECK(scan.torn_tail_at == bytes.size());
  uint64_t offset = 0;
  for (size_t i = 0; i < 3; ++i) {
    CHECK(scan.records[i].offset == offset);
    CHECK(scan.records[i].length == payloads[i].size());
    const absl::StatusOr<absl::string_view> payload =
        ParseSpoolRecord(absl::string_view(bytes).substr(offset));
    REQUIRE(payload.ok());
    CHECK(*payload == payloads[i]);
    CHECK(CountEncodedEvents(*payload) == i + 2);
    offset += kSpoolRecordHeaderBytes + payloads[i].size();
  }
  CHECK(ScanSpoolSegment("").records.empty());
}

TEST_CASE("ScanSpoolSegment skips a damaged record whose length holds and counts it",
          "[edge/clicks][spool]") {
  std::vector<std::string> payloads;
  std::string bytes = Segment(&payloads);
  // A byte of the second payload flipped: its CRC fails, its length holds.
  const size_t second = kSpoolRecordHeaderBytes + payloads[0].size();
  bytes[second + kSpoolRecordHeaderBytes + payloads[1].size() - 1] ^= 0x40;
  const SpoolSegmentScan scan = ScanSpoolSegment(bytes);
  REQUIRE(scan.records.size() == 2);
  CHECK(scan.records[0].offset == 0);
  CHECK(scan.records[1].offset == second + kSpoolRecordHeaderBytes + payloads[1].size());
  CHECK(scan.damaged_records == 1);
  CHECK(scan.damaged_events >= 2);  // its three events, as far as readable
  CHECK(scan.torn_tail_at == bytes.size());
  CHECK(ParseSpoolRecord(absl::string_view(bytes).substr(second)).status().code() ==
        absl::StatusCode::kDataLoss);
}

TEST_CASE("ScanSpoolSegment ends the segment where a length cannot be trusted",
          "[edge/clicks][spool]") {
  std::vector<std::string> payloads;
  std::string bytes = Segment(&payloads);
  const size_t second = kSpoolRecordHeaderBytes + payloads[0].size();
  SECTION("a length past the end") {
    bytes[second + 3] = '\x7F';
    const SpoolSegmentScan scan = ScanSpoolSegment(bytes);
    CHECK(scan.records.size() == 1);
    CHECK(scan.damaged_records == 1);
    CHECK(scan.torn_tail_at == second);
  }
  SECTION("a length that lands inside the next record") {
    bytes[second] = static_cast<char>(bytes[second] + 5);
    const SpoolSegmentScan scan = ScanSpoolSegment(bytes);
    CHECK(scan.records.size() == 1);
    CHECK(scan.damaged_records == 1);
    CHECK(scan.torn_tail_at == second);
  }
  SECTION("a tail of zeros, as a crash can leave") {
    const size_t end = bytes.size();
    bytes += std::string(4096, '\0');
    const SpoolSegmentScan scan = ScanSpoolSegment(bytes);
    CHECK(scan.records.size() == 3);
    CHECK(scan.damaged_records == 1);
    CHECK(scan.damaged_events == 0);
    CHECK(scan.torn_tail_at == end);
  }
}

TEST_CASE("CountEncodedEvents reads as far as the bytes allow", "[edge/clicks][spool]") {
  const std::string payload = EncodeClickBatch(Batch(1, 7));
  CHECK(CountEncodedEvents(payload) == 7);
  uint64_t previous = 0;
  for (size_t cut = 0; cut <= payload.size(); ++cut) {
    const uint64_t n = CountEncodedEvents(absl::string_view(payload).substr(0, cut));
    CHECK(n >= previous);
    CHECK(n <= 7);
    previous = n;
  }
  CHECK(CountEncodedEvents("\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF") == 0);
  CHECK(CountEncodedEvents(std::string(3, '\0')) == 0);
}

TEST_CASE("the file spool drops a damaged record on open and replays the rest",
          "[edge/clicks][spool]") {
  TempDir dir;
  {
    std::unique_ptr<ClickSpool> spool = Open(dir.path());
    for (int i = 1; i <= 3; ++i) REQUIRE_THAT(spool->Append(Batch(i)), IsOk());
  }
  const std::string file = dir.Files()[0];
  const uint64_t one = 8 + EncodeClickBatch(Batch(1)).size();
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(one + one - 2));  // inside the second payload
    f.write("\xAA", 1);
  }
  std::unique_ptr<ClickSpool> spool = Open(dir.path());
  CHECK(spool->Stats().unreadable_records == 1);
  CHECK(spool->Stats().unreadable_events >= 2);
  CHECK(Drain(*spool) == std::vector<std::string>{"edge-1", "edge-3"});
}

TEST_CASE("a record that verifies but does not decode is dropped and counted, once",
          "[edge/clicks][spool]") {
  // A payload that is not a batch (no id, no events) behind a CRC that holds:
  // the spool must not offer it forever, nor stop at it.
  const std::string not_a_batch = "\x08\x01";
  SECTION("file spool") {
    TempDir dir;
    std::ofstream(dir.path() + "/clicks-00000000000000000001.spool", std::ios::binary)
        << EncodeSpoolRecord(EncodeClickBatch(Batch(1))) << EncodeSpoolRecord(not_a_batch)
        << EncodeSpoolRecord(EncodeClickBatch(Batch(3)));
    std::unique_ptr<ClickSpool> spool = Open(dir.path());
    REQUIRE(spool->Stats().batches == 3);
    absl::StatusOr<std::optional<ClickBatch>> front = spool->Front();
    REQUIRE(front.ok());
    CHECK((*front)->id == "edge-1");
    REQUIRE_THAT(spool->PopFront(), IsOk());
    CHECK_THAT(spool->Front(), HasCode(absl::StatusCode::kDataLoss));
    CHECK(spool->Stats().unreadable_records == 1);
    CHECK(spool->Stats().batches == 1);
    CHECK(Drain(*spool) == std::vector<std::string>{"edge-3"});
    CHECK(dir.Files().empty());
  }
  SECTION("in-memory spool") {
    InMemoryClickSpool spool(1 << 20);
    spool.AppendRawForTest(not_a_batch);
    REQUIRE_THAT(spool.Append(Batch(2)), IsOk());
    CHECK_THAT(spool.Front(), HasCode(absl::StatusCode::kDataLoss));
    CHECK(spool.Stats().unreadable_records == 1);
    CHECK(Drain(spool) == std::vector<std::string>{"edge-2"});
    CHECK(spool.Stats().bytes == 0);
  }
}

TEST_CASE("opening a spool in a path that cannot be a directory fails", "[edge/clicks][spool]") {
  TempDir dir;
  const std::string file = dir.path() + "/plain";
  std::ofstream(file) << "x";
  FileClickSpoolOptions options;
  options.dir = file + "/sub";
  CHECK_THAT(OpenFileClickSpool(options), HasCode(absl::StatusCode::kInternal));
  options.dir = "";
  CHECK_THAT(OpenFileClickSpool(options), HasCode(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace shortener::edge
