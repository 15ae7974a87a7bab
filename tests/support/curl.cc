#include "tests/support/curl.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace shortener::testing {
namespace {

std::string ReadAll(int fd) {
  std::string out;
  char buffer[65536];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

// The last response of curl's --include output (1xx interim heads are
// skipped).
absl::StatusOr<CurlResponse> ParseIncluded(absl::string_view output) {
  for (;;) {
    const size_t end = output.find("\r\n\r\n");
    if (end == absl::string_view::npos) return absl::InternalError("curl printed no response");
    const absl::string_view head = output.substr(0, end);
    output.remove_prefix(end + 4);
    std::vector<absl::string_view> lines = absl::StrSplit(head, "\r\n");
    CurlResponse response;
    const std::vector<absl::string_view> status_line = absl::StrSplit(lines[0], ' ');
    if (status_line.size() < 2 || !absl::SimpleAtoi(status_line[1], &response.status)) {
      return absl::InternalError(absl::StrCat("curl: no status line in ", head));
    }
    if (response.status >= 100 && response.status < 200) continue;
    for (size_t i = 1; i < lines.size(); ++i) {
      const size_t colon = lines[i].find(':');
      if (colon == absl::string_view::npos) continue;
      response.headers[absl::AsciiStrToLower(lines[i].substr(0, colon))] =
          std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
    }
    response.body = std::string(output);
    return response;
  }
}

}  // namespace

absl::StatusOr<CurlResponse> Curl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"curl", "-sS", "--include", "--max-time", "20"};
  argv.insert(argv.end(), args.begin(), args.end());
  int out[2];
  int err[2];
  if (pipe(out) != 0 || pipe(err) != 0) return absl::InternalError("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    close(out[0]);
    close(err[0]);
    std::vector<char*> c_argv;
    for (std::string& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    execvp("curl", c_argv.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  // curl's stderr is small: read stdout first, then it.
  const std::string output = ReadAll(out[0]);
  const std::string errors = ReadAll(err[0]);
  close(out[0]);
  close(err[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(
        absl::StrCat("curl exited ", WIFEXITED(status) ? WEXITSTATUS(status) : -1, ": ", errors));
  }
  return ParseIncluded(output);
}

}  // namespace shortener::testing
