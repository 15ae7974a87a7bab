#include "tests/support/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace shortener::testing {

absl::StatusOr<HttpConnection> HttpConnection::Connect(int port, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      return HttpConnection(fd);
    }
    const int err = errno;
    close(fd);
    if (absl::Now() >= deadline) {
      return absl::UnavailableError(
          absl::StrCat("connect to 127.0.0.1:", port, ": ", std::strerror(err)));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

HttpConnection::HttpConnection(HttpConnection&& other) noexcept
    : fd_(other.fd_), buffer_(std::move(other.buffer_)) {
  other.fd_ = -1;
}

HttpConnection& HttpConnection::operator=(HttpConnection&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.fd_;
    buffer_ = std::move(other.buffer_);
    other.fd_ = -1;
  }
  return *this;
}

HttpConnection::~HttpConnection() {
  if (fd_ >= 0) close(fd_);
}

absl::Status HttpConnection::Send(const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("send: ", std::strerror(errno)));
    }
    sent += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

namespace {

// Reads more bytes into `buffer`: >0 bytes read, 0 EOF, -1 timeout/error.
int ReadMore(int fd, std::string& buffer, absl::Time deadline) {
  const int64_t wait_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
  if (wait_ms <= 0) return -1;
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(wait_ms)) <= 0) return -1;
  char chunk[16384];
  const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
  if (n < 0) return errno == ECONNRESET ? 0 : -1;
  buffer.append(chunk, static_cast<size_t>(n));
  return n == 0 ? 0 : 1;
}

}  // namespace

absl::StatusOr<HttpResponse> HttpConnection::Read(bool head_request, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  size_t head_end;
  while ((head_end = buffer_.find("\r\n\r\n")) == std::string::npos) {
    const int r = ReadMore(fd_, buffer_, deadline);
    if (r == 0) return absl::UnavailableError("connection closed before a response head");
    if (r < 0) return absl::DeadlineExceededError("no complete response head in time");
  }
  HttpResponse response;
  response.raw_head = buffer_.substr(0, head_end + 2);
  std::vector<std::string> lines = absl::StrSplit(response.raw_head, "\r\n", absl::SkipEmpty());
  if (lines.empty()) return absl::DataLossError("empty response head");
  std::vector<std::string> status_parts = absl::StrSplit(lines[0], absl::MaxSplits(' ', 2));
  if (status_parts.size() < 2 || status_parts[0] != "HTTP/1.1" ||
      !absl::SimpleAtoi(status_parts[1], &response.status)) {
    return absl::DataLossError(absl::StrCat("bad status line: ", lines[0]));
  }
  if (status_parts.size() == 3) response.reason = status_parts[2];
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == std::string::npos) return absl::DataLossError("bad header line: " + lines[i]);
    std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
    std::string value(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
    auto [it, inserted] = response.headers.emplace(name, value);
    if (!inserted) it->second += ", " + value;
  }
  buffer_.erase(0, head_end + 4);
  size_t length = 0;
  if (!head_request && response.status != 204 && response.status != 304 &&
      response.Has("content-length")) {
    if (!absl::SimpleAtoi(response.Header("content-length"), &length)) {
      return absl::DataLossError("bad Content-Length");
    }
  }
  while (buffer_.size() < length) {
    const int r = ReadMore(fd_, buffer_, deadline);
    if (r == 0) return absl::UnavailableError("connection closed inside a body");
    if (r < 0) return absl::DeadlineExceededError("body not complete in time");
  }
  response.body = buffer_.substr(0, length);
  buffer_.erase(0, length);
  return response;
}

bool HttpConnection::WaitClosed(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const int r = ReadMore(fd_, buffer_, deadline);
    if (r == 0) return true;
    if (r < 0) return false;
  }
}

absl::StatusOr<std::vector<HttpConnection>> OpenAnsweredConnections(int port, int count,
                                                                    const std::string& target) {
  std::vector<HttpConnection> held;
  for (int i = 0; i < count; ++i) {
    absl::StatusOr<HttpConnection> c = HttpConnection::Connect(port);
    if (!c.ok()) return c.status();
    absl::Status sent = c->Send(absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: a\r\n\r\n"));
    if (!sent.ok()) return sent;
    absl::StatusOr<HttpResponse> r = c->Read();
    if (!r.ok()) return r.status();
    held.push_back(*std::move(c));
  }
  return held;
}

absl::StatusOr<HttpResponse> HttpGet(int port, const std::string& target, const std::string& method,
                                     const std::string& extra_headers) {
  absl::StatusOr<HttpConnection> connection = HttpConnection::Connect(port);
  if (!connection.ok()) return connection.status();
  absl::Status sent =
      connection->Send(absl::StrCat(method, " ", target, " HTTP/1.1\r\nHost: sho.rt\r\n",
                                    extra_headers, "Connection: close\r\n\r\n"));
  if (!sent.ok()) return sent;
  return connection->Read(method == "HEAD");
}

std::map<std::string, double> ScrapeMetrics(int port) {
  std::map<std::string, double> samples;
  absl::StatusOr<HttpResponse> metrics = HttpGet(port, "/metrics");
  if (!metrics.ok() || metrics->status != 200) return samples;
  for (absl::string_view line : absl::StrSplit(metrics->body, '\n', absl::SkipEmpty())) {
    if (line.front() == '#') continue;
    const size_t space = line.rfind(' ');
    double value = 0;
    if (space == absl::string_view::npos || !absl::SimpleAtod(line.substr(space + 1), &value)) {
      continue;
    }
    samples[std::string(line.substr(0, space))] = value;
  }
  return samples;
}

}  // namespace shortener::testing
