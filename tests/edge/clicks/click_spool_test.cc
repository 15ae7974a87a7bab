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
          "[clicks][spool]") {
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

TEST_CASE("a reopened spool replays what a previous run left", "[clicks][spool]") {
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

TEST_CASE("the spool directory and its files are private to the edge's user", "[clicks][spool]") {
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

TEST_CASE("a segment is deleted once all its batches are acknowledged", "[clicks][spool]") {
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

TEST_CASE("a torn last record is skipped and the records before it replayed", "[clicks][spool]") {
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

TEST_CASE("the spool refuses a batch that would pass its byte cap", "[clicks][spool]") {
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

TEST_CASE("the in-memory spool is the same FIFO with the same cap", "[clicks][spool]") {
  const uint64_t one = 8 + EncodeClickBatch(Batch(1)).size();
  InMemoryClickSpool spool(2 * one);
  REQUIRE_THAT(spool.Append(Batch(1)), IsOk());
  REQUIRE_THAT(spool.Append(Batch(2)), IsOk());
  CHECK_THAT(spool.Append(Batch(3)), HasCode(absl::StatusCode::kResourceExhausted));
  CHECK(Drain(spool) == std::vector<std::string>{"edge-1", "edge-2"});
  CHECK(spool.Stats().bytes == 0);
}

TEST_CASE("opening a spool in a path that cannot be a directory fails", "[clicks][spool]") {
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
