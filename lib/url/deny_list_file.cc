#include "lib/url/deny_list_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "lib/common/log.h"
#include "lib/url/url_policy.h"
#include "lib/url/url_scan.h"

namespace shortener::url {
namespace {

constexpr absl::string_view kByteOrderMark = "\xEF\xBB\xBF";

bool SameTime(const timespec& a, const timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

// Closes a file descriptor on every return path.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() { close(fd_); }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

struct FileContent {
  struct stat before;  // of the file read, taken before reading it
  std::string text;
};

absl::Status FileError(int error, const std::string& path) {
  return absl::ErrnoToStatus(error, path);
}

// Reads one version of the file whole. The stat(2) of the open descriptor,
// before and after, must agree: otherwise the file was rewritten in place
// while we read it and the text may be half old, half new. Tries a few times
// before giving up with ABORTED (a code no errno maps to, so that callers can
// tell "try again later" from a file that cannot be read).
absl::StatusOr<FileContent> ReadStable(const std::string& path) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (attempt > 0) absl::SleepFor(absl::Milliseconds(20));
    // O_NONBLOCK: a FIFO given by mistake must not block the open (and with
    // it SIGHUP handling) until a writer comes; it is refused just below.
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return FileError(errno, path);
    FdCloser closer(fd);
    FileContent content;
    if (fstat(fd, &content.before) != 0) return FileError(errno, path);
    if (S_ISDIR(content.before.st_mode)) return FileError(EISDIR, path);
    if (!S_ISREG(content.before.st_mode)) {
      return absl::FailedPreconditionError(absl::StrCat(path, ": not a regular file"));
    }
    char buffer[16384];
    while (true) {
      const ssize_t n = read(fd, buffer, sizeof buffer);
      if (n == 0) break;
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return FileError(errno, path);
      content.text.append(buffer, static_cast<size_t>(n));
    }
    struct stat after;
    if (fstat(fd, &after) != 0) return FileError(errno, path);
    if (after.st_size == content.before.st_size &&
        SameTime(after.st_mtim, content.before.st_mtim) &&
        static_cast<off_t>(content.text.size()) == after.st_size) {
      return content;
    }
  }
  return absl::AbortedError(absl::StrCat(path, ": kept changing while being read"));
}

// The whole list in effect: fixed entries first, then the file's, each once.
std::vector<std::string> Merge(const std::vector<std::string>& fixed,
                               const std::vector<std::string>& from_file) {
  std::vector<std::string> merged;
  absl::flat_hash_set<std::string> seen;
  for (const std::vector<std::string>* list : {&fixed, &from_file}) {
    for (const std::string& entry : *list) {
      absl::StatusOr<std::string> canonical = CanonicalDomain(entry);
      // A fixed entry the caller did not validate still counts once.
      std::string key = canonical.ok() ? *std::move(canonical) : absl::AsciiStrToLower(entry);
      if (seen.insert(key).second) merged.push_back(std::move(key));
    }
  }
  return merged;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseDenyList(absl::string_view text,
                                                       absl::string_view source) {
  if (absl::StartsWith(text, kByteOrderMark)) text.remove_prefix(kByteOrderMark.size());
  std::vector<std::string> domains;
  absl::flat_hash_set<std::string> seen;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    const size_t comment = line.find('#');
    if (comment != absl::string_view::npos) line = line.substr(0, comment);
    // Strips the "\r" of CRLF line ends with the other blanks.
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    const auto where = [&] {
      return source.empty() ? absl::StrCat("line ", line_number, ": ")
                            : absl::StrCat(source, ":", line_number, ": ");
    };
    const std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r\v\f"), absl::SkipEmpty());
    if (words.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(where(), "one domain per line, got ",
                                                     words.size(), " words (",
                                                     internal::QuoteForMessage(line), ")"));
    }
    absl::StatusOr<std::string> domain = CanonicalDomain(line);
    if (!domain.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where(), domain.status().message()));
    }
    if (seen.insert(*domain).second) domains.push_back(*std::move(domain));
  }
  return domains;
}

absl::StatusOr<std::vector<std::string>> ReadDenyListFile(const std::string& path) {
  absl::StatusOr<FileContent> content = ReadStable(path);
  if (!content.ok()) return content.status();
  return ParseDenyList(content->text, path);
}

bool DenyListWatcher::FileVersion::operator==(const FileVersion& other) const {
  return error == other.error && device == other.device && inode == other.inode &&
         size == other.size && SameTime(modified, other.modified) &&
         SameTime(changed, other.changed);
}

DenyListWatcher::DenyListWatcher(DenyListWatcherOptions options, Apply apply)
    : options_(std::move(options)), apply_(std::move(apply)) {}

absl::StatusOr<std::unique_ptr<DenyListWatcher>> DenyListWatcher::Start(
    DenyListWatcherOptions options, Apply apply) {
  if (options.path.empty()) return absl::InvalidArgumentError("deny list file: empty path");
  if (options.poll_interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("deny list file: poll interval must be positive");
  }
  std::unique_ptr<DenyListWatcher> watcher(
      new DenyListWatcher(std::move(options), std::move(apply)));
  {
    std::lock_guard<std::mutex> lock(watcher->load_mu_);
    absl::Status loaded = watcher->LoadLocked(Probe(watcher->options_.path));
    if (!loaded.ok()) return loaded;
    LogInfo("deny list: %d domain(s) in effect (%d from %s, loaded at start)",
            watcher->in_effect_count_, watcher->file_count_, watcher->options_.path);
  }
  watcher->thread_ = std::thread([w = watcher.get()] { w->Watch(); });
  return watcher;
}

DenyListWatcher::~DenyListWatcher() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

absl::Status DenyListWatcher::Reload(absl::string_view reason) {
  std::lock_guard<std::mutex> lock(load_mu_);
  absl::Status status = LoadLocked(Probe(options_.path));
  LogOutcome(status, reason);
  return status;
}

size_t DenyListWatcher::DomainCount() const {
  std::lock_guard<std::mutex> lock(load_mu_);
  return in_effect_count_;
}

DenyListWatcher::FileVersion DenyListWatcher::Probe(const std::string& path) {
  FileVersion version;
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    version.error = errno;
    return version;
  }
  version.device = st.st_dev;
  version.inode = st.st_ino;
  version.size = st.st_size;
  version.modified = st.st_mtim;
  version.changed = st.st_ctim;
  return version;
}

absl::Status DenyListWatcher::LoadLocked(const FileVersion& probed) {
  absl::StatusOr<FileContent> content = ReadStable(options_.path);
  if (!content.ok()) {
    // A file still being written is not remembered: the next poll retries.
    if (!absl::IsAborted(content.status())) seen_ = probed;
    return content.status();
  }
  FileVersion read;
  read.device = content->before.st_dev;
  read.inode = content->before.st_ino;
  read.size = content->before.st_size;
  read.modified = content->before.st_mtim;
  read.changed = content->before.st_ctim;
  seen_ = read;
  absl::StatusOr<std::vector<std::string>> domains = ParseDenyList(content->text, options_.path);
  if (!domains.ok()) return domains.status();
  // Truncating and rewriting a file shows a 0-byte file for a moment;
  // emptying the list on it would open the gate until the next poll.
  if (content->text.empty() && file_count_ > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(options_.path,
                     ": is empty (a rewrite in progress?); to empty the list on purpose, "
                     "leave a comment line in the file"));
  }
  std::vector<std::string> merged = Merge(options_.fixed_domains, *domains);
  apply_(merged);
  file_count_ = domains->size();
  in_effect_count_ = merged.size();
  return absl::OkStatus();
}

void DenyListWatcher::LogOutcome(const absl::Status& status, absl::string_view reason) {
  if (status.ok()) {
    LogInfo("deny list: %d domain(s) in effect (%d from %s, reloaded: %s)", in_effect_count_,
            file_count_, options_.path, reason);
  } else {
    LogWarning("deny list not reloaded (%s): %s; keeping the previous %d domain(s)", reason,
               status.message(), in_effect_count_);
  }
}

void DenyListWatcher::Watch() {
  std::unique_lock<std::mutex> stop_lock(stop_mu_);
  while (!stop_cv_.wait_for(stop_lock, absl::ToChronoNanoseconds(options_.poll_interval),
                            [this] { return stopping_; })) {
    stop_lock.unlock();
    const FileVersion now = Probe(options_.path);
    {
      std::lock_guard<std::mutex> lock(load_mu_);
      // Same version as last time (loaded, or refused and already reported):
      // nothing to do, and nothing to log every second.
      if (now != seen_) {
        absl::Status status = LoadLocked(now);
        // A file caught mid-write is retried at the next poll, silently.
        if (!absl::IsAborted(status)) LogOutcome(status, "the file changed");
      }
    }
    stop_lock.lock();
  }
}

}  // namespace shortener::url
