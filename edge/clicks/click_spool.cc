#include "edge/clicks/click_spool.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/common/log.h"

namespace shortener::edge {
namespace {

constexpr size_t kHeaderBytes = kSpoolRecordHeaderBytes;
constexpr absl::string_view kPrefix = "clicks-";
constexpr absl::string_view kSuffix = ".spool";

// The one place errno becomes a Status here.
absl::Status IoError(absl::string_view what, const std::string& path, int err) {
  return absl::InternalError(
      absl::StrCat("click spool: ", what, " ", path, ": ", std::strerror(err)));
}

void PutU32(char* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint32_t GetU32(const char* in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

absl::Status WriteAll(int fd, const std::string& bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("write", path, errno);
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("open", path, errno);
  std::string out;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return IoError("read", path, err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

class FileClickSpool : public ClickSpool {
 public:
  explicit FileClickSpool(FileClickSpoolOptions options) : options_(std::move(options)) {}
  ~FileClickSpool() override {
    if (write_fd_ >= 0) ::close(write_fd_);
  }

  absl::Status Load();
  absl::Status Append(const ClickBatch& batch) override;
  absl::StatusOr<std::optional<ClickBatch>> Front() override;
  absl::Status PopFront() override;
  ClickSpoolStats Stats() const override {
    return {batches_.load(std::memory_order_relaxed), bytes_.load(std::memory_order_relaxed),
            unreadable_records_.load(std::memory_order_relaxed),
            unreadable_events_.load(std::memory_order_relaxed)};
  }

 private:
  struct Segment {
    uint64_t seq = 0;
    uint64_t bytes = 0;  // file size
    size_t pending = 0;  // records not acknowledged
  };
  struct Record {
    uint64_t seq = 0;     // its segment
    uint64_t offset = 0;  // of its header
    uint32_t length = 0;  // payload bytes
  };

  std::string PathOf(uint64_t seq) const {
    return absl::StrFormat("%s/%s%020d%s", options_.dir, kPrefix, seq, kSuffix);
  }
  absl::Status StartSegment();
  absl::Status DropFront();

  const FileClickSpoolOptions options_;
  std::deque<Segment> segments_;  // oldest first; the last one is written when write_fd_ >= 0
  std::deque<Record> records_;    // oldest first
  int write_fd_ = -1;
  uint64_t next_seq_ = 1;
  std::atomic<uint64_t> batches_{0};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> unreadable_records_{0};
  std::atomic<uint64_t> unreadable_events_{0};
};

absl::Status FileClickSpool::Load() {
  std::error_code ec;
  // The spool holds full IPs, User-Agents and Referers until they are sent:
  // a directory the edge creates is private to its user (files are 0600).
  if (std::filesystem::create_directories(options_.dir, ec)) {
    std::filesystem::permissions(options_.dir, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace, ec);
  }
  if (ec) return IoError("create directory", options_.dir, ec.value());
  std::vector<uint64_t> seqs;
  for (const auto& entry : std::filesystem::directory_iterator(options_.dir, ec)) {
    const std::string name = entry.path().filename().string();
    uint64_t seq = 0;
    if (!absl::StartsWith(name, kPrefix) || !absl::EndsWith(name, kSuffix)) continue;
    absl::string_view digits(name);
    digits.remove_prefix(kPrefix.size());
    digits.remove_suffix(kSuffix.size());
    if (absl::SimpleAtoi(digits, &seq)) seqs.push_back(seq);
  }
  if (ec) return IoError("list", options_.dir, ec.value());
  std::sort(seqs.begin(), seqs.end());
  for (const uint64_t seq : seqs) {
    next_seq_ = seq + 1;
    const std::string path = PathOf(seq);
    absl::StatusOr<std::string> bytes = ReadFile(path);
    if (!bytes.ok()) return bytes.status();
    Segment segment{seq, bytes->size(), 0};
    const SpoolSegmentScan scan = ScanSpoolSegment(*bytes);
    for (const SpoolRecordSpan& record : scan.records) {
      records_.push_back({seq, record.offset, record.length});
      ++segment.pending;
    }
    if (scan.damaged_records > 0) {
      // A crash mid-write leaves a torn tail (the file is never appended to
      // again); anything else is damage on disk.
      unreadable_records_.fetch_add(scan.damaged_records, std::memory_order_relaxed);
      unreadable_events_.fetch_add(scan.damaged_events, std::memory_order_relaxed);
      LogWarning(
          "click spool: %s: %d torn or damaged records (at least %d click events) dropped%s; "
          "counted in edge_clicks_dropped_total{reason=\"spool_unreadable\"}",
          path, scan.damaged_records, scan.damaged_events,
          scan.torn_tail_at < bytes->size()
              ? absl::StrFormat(", the file's last %d bytes unreadable",
                                bytes->size() - scan.torn_tail_at)
              : "");
    }
    if (segment.pending == 0) {
      std::filesystem::remove(path, ec);
      continue;
    }
    segments_.push_back(segment);
    bytes_.fetch_add(segment.bytes, std::memory_order_relaxed);
  }
  batches_.store(records_.size(), std::memory_order_relaxed);
  if (!records_.empty()) {
    LogInfo("click spool %s: %d batches (%d bytes) left by a previous run will be replayed",
            options_.dir, records_.size(), bytes_.load());
  }
  return absl::OkStatus();
}

absl::Status FileClickSpool::StartSegment() {
  if (write_fd_ >= 0) ::close(write_fd_);
  write_fd_ = -1;
  const uint64_t seq = next_seq_++;
  const std::string path = PathOf(seq);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return IoError("create", path, errno);
  // The new name must survive a crash too.
  const int dir = ::open(options_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  write_fd_ = fd;
  segments_.push_back({seq, 0, 0});
  return absl::OkStatus();
}

absl::Status FileClickSpool::Append(const ClickBatch& batch) {
  const std::string record = EncodeSpoolRecord(EncodeClickBatch(batch));
  const uint64_t size = record.size();
  if (bytes_.load(std::memory_order_relaxed) + size > options_.max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("click spool ", options_.dir,
                     " is full (--click_spool_max_bytes=", options_.max_bytes, ")"));
  }
  if (write_fd_ < 0 || segments_.back().bytes >= options_.segment_bytes) {
    if (absl::Status s = StartSegment(); !s.ok()) return s;
  }
  Segment& segment = segments_.back();
  const std::string path = PathOf(segment.seq);
  absl::Status written = WriteAll(write_fd_, record, path);
  if (written.ok() && ::fdatasync(write_fd_) != 0) written = IoError("fdatasync", path, errno);
  if (!written.ok()) {
    // Cut a partial record off so later ones stay readable; if even that
    // fails, the next Append starts a fresh segment.
    if (::ftruncate(write_fd_, static_cast<off_t>(segment.bytes)) != 0) {
      ::close(write_fd_);
      write_fd_ = -1;
    }
    return written;
  }
  records_.push_back({segment.seq, segment.bytes, static_cast<uint32_t>(size - kHeaderBytes)});
  segment.bytes += size;
  ++segment.pending;
  bytes_.fetch_add(size, std::memory_order_relaxed);
  batches_.fetch_add(1, std::memory_order_relaxed);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<ClickBatch>> FileClickSpool::Front() {
  if (records_.empty()) return std::optional<ClickBatch>();
  const Record r = records_.front();
  const std::string path = PathOf(r.seq);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("open", path, errno);
  std::string bytes(kHeaderBytes + r.length, '\0');
  const ssize_t n = ::pread(fd, &bytes[0], bytes.size(), static_cast<off_t>(r.offset));
  const int err = errno;
  ::close(fd);
  if (n < 0) return IoError("read", path, err);
  bytes.resize(static_cast<size_t>(n));
  absl::StatusOr<absl::string_view> payload = ParseSpoolRecord(bytes);
  absl::StatusOr<ClickBatch> batch =
      payload.ok() ? DecodeClickBatch(*payload) : absl::StatusOr<ClickBatch>(payload.status());
  if (!batch.ok()) {
    // Dropped for good: replaying it could never succeed, and it must not
    // hold up the batches behind it.
    unreadable_records_.fetch_add(1, std::memory_order_relaxed);
    unreadable_events_.fetch_add(
        CountEncodedEvents(
            payload.ok() ? *payload
                         : absl::string_view(bytes).substr(std::min(bytes.size(), kHeaderBytes))),
        std::memory_order_relaxed);
    if (absl::Status s = DropFront(); !s.ok()) return s;
    return absl::DataLossError(absl::StrCat("click spool: ", path, ": record at byte ", r.offset,
                                            " is unreadable (", batch.status().message(),
                                            "); dropped"));
  }
  return std::optional<ClickBatch>(*std::move(batch));
}

absl::Status FileClickSpool::PopFront() {
  if (records_.empty()) return absl::OkStatus();
  return DropFront();
}

absl::Status FileClickSpool::DropFront() {
  const Record r = records_.front();
  records_.pop_front();
  batches_.fetch_sub(1, std::memory_order_relaxed);
  for (Segment& segment : segments_) {
    if (segment.seq == r.seq) {
      --segment.pending;
      break;
    }
  }
  // Records are FIFO across segments, so only leading segments can be done
  // (one left empty by a failed write included).
  absl::Status status;
  while (!segments_.empty() && segments_.front().pending == 0) {
    if (segments_.size() == 1 && write_fd_ >= 0) {
      ::close(write_fd_);  // the next Append starts a fresh segment
      write_fd_ = -1;
    }
    const std::string path = PathOf(segments_.front().seq);
    bytes_.fetch_sub(segments_.front().bytes, std::memory_order_relaxed);
    segments_.pop_front();
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) status = IoError("delete", path, errno);
  }
  return status;
}

}  // namespace

uint32_t SpoolChecksum(absl::string_view payload) {
  return static_cast<uint32_t>(::crc32(0L, reinterpret_cast<const Bytef*>(payload.data()),
                                       static_cast<uInt>(payload.size())));
}

std::string EncodeSpoolRecord(absl::string_view payload) {
  std::string record(kHeaderBytes, '\0');
  PutU32(&record[0], static_cast<uint32_t>(payload.size()));
  PutU32(&record[4], SpoolChecksum(payload));
  record.append(payload.data(), payload.size());
  return record;
}

absl::StatusOr<absl::string_view> ParseSpoolRecord(absl::string_view bytes) {
  if (bytes.size() < kHeaderBytes) {
    return absl::DataLossError(
        absl::StrCat("spool record: ", bytes.size(), " bytes, shorter than a header"));
  }
  const uint32_t length = GetU32(bytes.data());
  if (length == 0) return absl::DataLossError("spool record: length 0");
  if (length > bytes.size() - kHeaderBytes) {
    return absl::DataLossError(absl::StrCat("spool record: length ", length, " runs past the end (",
                                            bytes.size() - kHeaderBytes, " bytes left)"));
  }
  const absl::string_view payload = bytes.substr(kHeaderBytes, length);
  if (SpoolChecksum(payload) != GetU32(bytes.data() + 4)) {
    return absl::DataLossError("spool record: CRC mismatch");
  }
  return payload;
}

SpoolSegmentScan ScanSpoolSegment(absl::string_view bytes) {
  SpoolSegmentScan scan;
  uint64_t offset = 0;
  while (offset < bytes.size()) {
    const absl::string_view rest = bytes.substr(offset);
    if (ParseSpoolRecord(rest).ok()) {
      const uint32_t length = GetU32(rest.data());
      scan.records.push_back({offset, length});
      offset += kHeaderBytes + length;
      continue;
    }
    // Damaged or torn. Its payload, as far as it goes, for the count.
    const uint64_t length = rest.size() >= kHeaderBytes ? GetU32(rest.data()) : 0;
    const absl::string_view payload =
        rest.substr(std::min<size_t>(kHeaderBytes, rest.size()), length);
    ++scan.damaged_records;
    scan.damaged_events += CountEncodedEvents(payload);
    // A CRC that fails inside a record whose length is intact: skip just
    // that one, if the next header proves the length right.
    const uint64_t next = offset + kHeaderBytes + length;
    if (length > 0 && rest.size() >= kHeaderBytes && next <= bytes.size() &&
        (next == bytes.size() || ParseSpoolRecord(bytes.substr(next)).ok())) {
      offset = next;
      continue;
    }
    scan.torn_tail_at = offset;
    return scan;
  }
  scan.torn_tail_at = bytes.size();
  return scan;
}

uint64_t CountEncodedEvents(absl::string_view payload) {
  // The protobuf wire format: a varint key (field number << 3 | wire type),
  // then a varint, 8 bytes, a varint length and that many bytes, or 4 bytes.
  size_t pos = 0;
  const auto varint = [&payload, &pos](uint64_t* out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && pos < payload.size(); shift += 7) {
      const uint8_t b = static_cast<uint8_t>(payload[pos++]);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        *out = v;
        return true;
      }
    }
    return false;
  };
  uint64_t events = 0;
  while (pos < payload.size()) {
    uint64_t key = 0;
    uint64_t value = 0;
    if (!varint(&key) || key >> 3 == 0) break;
    switch (key & 7) {
      case 0:
        if (!varint(&value)) return events;
        break;
      case 1:
        if (payload.size() - pos < 8) return events;
        pos += 8;
        break;
      case 2:
        if (!varint(&value) || value > payload.size() - pos) return events;
        pos += value;
        if (key >> 3 == 2) ++events;
        break;
      case 5:
        if (payload.size() - pos < 4) return events;
        pos += 4;
        break;
      default:
        return events;  // groups (3, 4) are never written; 6, 7 do not exist
    }
  }
  return events;
}

absl::StatusOr<std::unique_ptr<ClickSpool>> OpenFileClickSpool(FileClickSpoolOptions options) {
  if (options.dir.empty()) return absl::InvalidArgumentError("click spool: no directory");
  auto spool = std::make_unique<FileClickSpool>(std::move(options));
  if (absl::Status s = spool->Load(); !s.ok()) return s;
  return std::unique_ptr<ClickSpool>(std::move(spool));
}

absl::Status InMemoryClickSpool::Append(const ClickBatch& batch) {
  std::string record = EncodeClickBatch(batch);
  const uint64_t size = kHeaderBytes + record.size();
  if (bytes_.load(std::memory_order_relaxed) + size > max_bytes_) {
    return absl::ResourceExhaustedError("in-memory click spool is full");
  }
  records_.push_back(std::move(record));
  bytes_.fetch_add(size, std::memory_order_relaxed);
  batches_.fetch_add(1, std::memory_order_relaxed);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<ClickBatch>> InMemoryClickSpool::Front() {
  if (records_.empty()) return std::optional<ClickBatch>();
  absl::StatusOr<ClickBatch> batch = DecodeClickBatch(records_.front());
  if (!batch.ok()) {
    unreadable_records_.fetch_add(1, std::memory_order_relaxed);
    unreadable_events_.fetch_add(CountEncodedEvents(records_.front()), std::memory_order_relaxed);
    (void)PopFront();
    return absl::DataLossError(absl::StrCat("in-memory click spool: record unreadable (",
                                            batch.status().message(), "); dropped"));
  }
  return std::optional<ClickBatch>(*std::move(batch));
}

void InMemoryClickSpool::AppendRawForTest(std::string payload) {
  bytes_.fetch_add(kHeaderBytes + payload.size(), std::memory_order_relaxed);
  batches_.fetch_add(1, std::memory_order_relaxed);
  records_.push_back(std::move(payload));
}

absl::Status InMemoryClickSpool::PopFront() {
  if (records_.empty()) return absl::OkStatus();
  bytes_.fetch_sub(kHeaderBytes + records_.front().size(), std::memory_order_relaxed);
  batches_.fetch_sub(1, std::memory_order_relaxed);
  records_.pop_front();
  return absl::OkStatus();
}

ClickSpoolStats InMemoryClickSpool::Stats() const {
  return {batches_.load(std::memory_order_relaxed), bytes_.load(std::memory_order_relaxed),
          unreadable_records_.load(std::memory_order_relaxed),
          unreadable_events_.load(std::memory_order_relaxed)};
}

}  // namespace shortener::edge
