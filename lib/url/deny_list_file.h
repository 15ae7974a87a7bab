// The deny list kept in a file, and a watcher that reloads it.
//
// File format: one domain per line (subdomains are always included, as in
// UrlPolicyOptions::denied_domains), "#" starts a comment (a whole line or
// the rest of one), blank lines are ignored, CRLF line ends and a UTF-8 byte
// order mark are accepted. Every entry must be a host name, IPv4 or IPv6
// address (see CanonicalDomain): a URL, a wildcard or two names on one line
// make the whole file malformed, never a silently shorter list.
//
// The watcher loads the file at start (failing if it cannot), then reloads
// it when asked (Reload, e.g. on SIGHUP) and when it changes on disk (a
// thread compares the file's inode, size and times every poll interval, so
// an atomic replace by rename is seen as well as a rewrite in place). A file
// that is missing, unreadable, malformed, or empty (0 bytes, most likely a
// rewrite in progress) when the list in effect is not, never replaces the
// list: the previous one stays and a warning naming the file (and line) is
// logged once per change of the file. Each successful load logs how many
// domains are in effect.
//
// Thread safety: ParseDenyList and ReadDenyListFile are pure / reentrant.
// DenyListWatcher is thread-safe; its Apply callback is called by one thread
// at a time (the watcher's or the one calling Reload), never concurrently.
#ifndef SHORTENER_LIB_URL_DENY_LIST_FILE_H_
#define SHORTENER_LIB_URL_DENY_LIST_FILE_H_

#include <sys/types.h>

#include <condition_variable>
#include <cstddef>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace shortener::url {

// Returns the entries of deny-list `text` in canonical form (CanonicalDomain),
// in file order, duplicates removed. INVALID_ARGUMENT for the first bad line,
// its message starting "<source>:<line>: " ("line <line>: " if `source` is
// empty), lines counted from 1.
absl::StatusOr<std::vector<std::string>> ParseDenyList(absl::string_view text,
                                                       absl::string_view source = "");

// Reads and parses the file at `path`. Errors start with the path: the
// parse errors above, or "<path>: <strerror>" with the matching code
// (NOT_FOUND, PERMISSION_DENIED, ...) if it cannot be read. ABORTED if the
// file kept changing while it was being read (try again later).
absl::StatusOr<std::vector<std::string>> ReadDenyListFile(const std::string& path);

struct DenyListWatcherOptions {
  // The deny list file. Required.
  std::string path;
  // Entries in effect whatever the file says (e.g. from a flag); merged with
  // the file's. Default empty.
  std::vector<std::string> fixed_domains;
  // How often the file is checked for changes. Default 1 s.
  absl::Duration poll_interval = absl::Seconds(1);
};

class DenyListWatcher {
 public:
  // Receives the whole list in effect (fixed domains, then the file's, each
  // once) after every successful load. Must not call back into the watcher.
  using Apply = std::function<void(const std::vector<std::string>& domains)>;

  // Loads the file, calls `apply` with the result, then starts watching.
  // Fails (and calls nothing) if the first load fails: ReadDenyListFile's
  // errors, or INVALID_ARGUMENT for an empty path or a poll interval <= 0.
  static absl::StatusOr<std::unique_ptr<DenyListWatcher>> Start(DenyListWatcherOptions options,
                                                                Apply apply);

  // Stops the watching thread (waits for a load in progress to finish).
  ~DenyListWatcher();

  DenyListWatcher(const DenyListWatcher&) = delete;
  DenyListWatcher& operator=(const DenyListWatcher&) = delete;

  // Loads the file now, changed or not. On success calls Apply and logs the
  // count with `reason`; on failure keeps the list in effect, logs a warning
  // and returns the error (as ReadDenyListFile, or FAILED_PRECONDITION for an
  // empty file that would empty the list).
  absl::Status Reload(absl::string_view reason = "reload requested");

  // The number of domains in effect after the last successful load.
  size_t DomainCount() const;

 private:
  // What stat(2) says about the file, to notice any change; `error` is the
  // errno of a failed stat (then the rest is zero).
  struct FileVersion {
    int error = 0;
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    timespec modified{};
    timespec changed{};
    bool operator==(const FileVersion& other) const;
    bool operator!=(const FileVersion& other) const { return !(*this == other); }
  };

  DenyListWatcher(DenyListWatcherOptions options, Apply apply);
  static FileVersion Probe(const std::string& path);
  // Reads, parses and applies the file; `probed` is remembered as seen when
  // the file cannot be used, so that one bad version is reported once.
  absl::Status LoadLocked(const FileVersion& probed);
  void LogOutcome(const absl::Status& status, absl::string_view reason);
  void Watch();

  const DenyListWatcherOptions options_;
  const Apply apply_;

  mutable std::mutex load_mu_;  // serialises loads and guards the fields below
  FileVersion seen_;            // the version last loaded or refused
  size_t file_count_ = 0;       // entries from the file in effect
  size_t in_effect_count_ = 0;  // entries in effect (fixed and file, deduplicated)

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // guarded by stop_mu_
  std::thread thread_;
};

}  // namespace shortener::url

#endif  // SHORTENER_LIB_URL_DENY_LIST_FILE_H_
