#include "tests/support/orphan_reaper.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace shortener::testing {
namespace {

bool Alive(int pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

void WritePid(const std::string& path, int pid) {
  std::ofstream out(path, std::ios::trunc);
  out << pid << "\n";
}

// Stops what `dir` runs (the child in child.pid, a postmaster) and deletes
// it.
void StopAndRemove(const std::string& dir) {
  int child = ReadPidFile(dir + "/child.pid");
  if (Alive(child)) ::kill(child, SIGKILL);
  // A postmaster's PID is the first line of postmaster.pid; SIGQUIT is its
  // immediate shutdown.
  int postmaster = ReadPidFile(dir + "/data/postmaster.pid");
  if (Alive(postmaster)) {
    ::kill(postmaster, SIGQUIT);
    for (int i = 0; i < 100 && Alive(postmaster); ++i) ::usleep(50000);
  }
  std::string cmd = absl::StrCat("rm -rf '", dir, "'");
  int rc = std::system(cmd.c_str());
  (void)rc;
}

// Calls `fn` with each /tmp/`prefix`* dir and the PID in its owner.pid (0
// when it has none yet).
template <typename Fn>
void ForEachTempDir(const std::string& prefix, Fn fn) {
  DIR* tmp = ::opendir("/tmp");
  if (tmp == nullptr) return;
  while (struct dirent* entry = ::readdir(tmp)) {
    std::string name = entry->d_name;
    if (name == "." || name == ".." || !absl::StartsWith(name, prefix)) continue;
    std::string dir = absl::StrCat("/tmp/", name);
    fn(dir, ReadPidFile(dir + "/owner.pid"));
  }
  ::closedir(tmp);
}

}  // namespace

void RecordOwner(const std::string& dir) { WritePid(dir + "/owner.pid", ::getpid()); }

void RecordChild(const std::string& dir, int pid) { WritePid(dir + "/child.pid", pid); }

void ReapOrphans(const std::string& prefix) {
  ForEachTempDir(prefix, [](const std::string& dir, int owner) {
    // No owner file yet: a test that is starting right now. Leave it.
    if (owner != 0 && !Alive(owner)) StopAndRemove(dir);
  });
}

void RemoveOwnedTempDirs() {
  const int self = ::getpid();
  ForEachTempDir("", [self](const std::string& dir, int owner) {
    if (owner == self) StopAndRemove(dir);
  });
}

absl::StatusOr<std::string> MakeOwnedTempDir(const std::string& prefix) {
  ReapOrphans(prefix);
  std::string templ = absl::StrCat("/tmp/", prefix, "XXXXXX");
  if (mkdtemp(templ.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp ", templ, " failed"));
  }
  RecordOwner(templ);
  return templ;
}

int ReadPidFile(const std::string& path) {
  std::ifstream in(path);
  long pid = 0;
  in >> pid;
  return in ? static_cast<int>(pid) : 0;
}

std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace shortener::testing
