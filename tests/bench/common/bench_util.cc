#include "tests/bench/common/bench_util.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/support/orphan_reaper.h"

namespace shortener::bench {
namespace {

// The write end of the pipe that carries a signal's number from the handler
// to the thread that stops everything.
int signal_pipe = -1;
std::atomic<bool> stopping_on_signal{false};

void ForwardSignal(int signo) {
  const int saved_errno = errno;
  const unsigned char byte = static_cast<unsigned char>(signo);
  ssize_t written = ::write(signal_pipe, &byte, 1);  // async-signal-safe
  (void)written;
  errno = saved_errno;
}

}  // namespace

void StopChildrenOnSignals(const char* name) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    std::perror("pipe2: a signal will not stop the benchmark's children");
    return;
  }
  signal_pipe = fds[1];
  // A handler that only writes to a pipe, rather than blocking the signals
  // and waiting for them: a blocked mask would be inherited by every child
  // the benchmark starts, and handlers are not.
  struct sigaction action = {};
  action.sa_handler = ForwardSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int signo : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(signo, &action, nullptr);
  std::thread([name, read_end = fds[0]] {
    unsigned char signo = 0;
    while (::read(read_end, &signo, 1) != 1) {
      if (errno != EINTR) return;
    }
    stopping_on_signal.store(true);
    std::fprintf(stderr, "%s: signal %d: stopping the clusters and services it started\n", name,
                 signo);
    testing::RemoveOwnedTempDirs();
    // Not exit(): the other threads are still using what static destructors
    // would tear down.
    std::_Exit(128 + signo);
  }).detach();
}

void AwaitExitIfStoppingOnSignal() {
  if (!stopping_on_signal.load()) return;
  while (true) ::pause();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(s.size() - n);
}

bool NumberAfter(absl::string_view output, absl::string_view prefix, double* value) {
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (!absl::ConsumePrefix(&line, prefix)) continue;
    std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    return !words.empty() && absl::SimpleAtod(words[0], value);
  }
  return false;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view v = line;
    if (absl::ConsumePrefix(&v, "model name")) {
      v = absl::StripLeadingAsciiWhitespace(v);
      absl::ConsumePrefix(&v, ":");
      return std::string(absl::StripAsciiWhitespace(v));
    }
  }
  return "unknown";
}

}  // namespace shortener::bench
