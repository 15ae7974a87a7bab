#include "tests/support/subprocess.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace shortener::testing {

absl::StatusOr<Subprocess> Subprocess::Spawn(const std::vector<std::string>& argv,
                                             const std::string& log_path) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!log_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::InternalError(absl::StrCat("cannot spawn ", argv[0], ": ", strerror(rc)));
  }
  return Subprocess(pid);
}

Subprocess::Subprocess(Subprocess&& other) noexcept : pid_(other.pid_) { other.pid_ = -1; }

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0 && running()) {
      ::kill(pid_, SIGKILL);
      Wait(absl::Seconds(10));
    }
    pid_ = other.pid_;
    other.pid_ = -1;
  }
  return *this;
}

Subprocess::~Subprocess() {
  if (pid_ > 0 && running()) {
    ::kill(pid_, SIGKILL);
    Wait(absl::Seconds(10));
  }
}

bool Subprocess::Signal(int signo) const { return pid_ > 0 && ::kill(pid_, signo) == 0; }

namespace {

// Whether every thread of `pid` is stopped ('T' in /proc/PID/task/TID/stat).
bool AllThreadsStopped(pid_t pid) {
  const std::string dir = absl::StrCat("/proc/", pid, "/task");
  DIR* tasks = opendir(dir.c_str());
  if (tasks == nullptr) return false;
  bool stopped = true;
  while (dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream in(absl::StrCat(dir, "/", entry->d_name, "/stat"));
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // "tid (comm) S ...": the comm may hold spaces and parentheses.
    const size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size()) continue;  // thread gone
    if (stat[close + 2] != 'T') {
      stopped = false;
      break;
    }
  }
  closedir(tasks);
  return stopped;
}

}  // namespace

bool Subprocess::Freeze(absl::Duration timeout) const {
  if (!Signal(SIGSTOP)) return false;
  const absl::Time deadline = absl::Now() + timeout;
  while (!AllThreadsStopped(pid_)) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

std::optional<int> Subprocess::Wait(absl::Duration timeout) {
  if (pid_ <= 0) return std::nullopt;
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return 255;
    }
    if (r < 0 || absl::Now() >= deadline) return std::nullopt;
    absl::SleepFor(absl::Milliseconds(10));
  }
}

bool Subprocess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  if (r == pid_) pid_ = -1;
  return false;
}

int PickUnusedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

std::string BinaryPath(const std::string& name) {
  return absl::StrCat(SHORTENER_BIN_DIR, "/", name);
}

}  // namespace shortener::testing
