#include "tests/edge/hostile/hostile_clients.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/support/process_probe.h"

namespace shortener::testing {
namespace {

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }

struct FloodConnection {
  int fd = -1;
  std::string in;
  std::deque<absl::Time> sent;  // one per request not answered yet
};

class Flood {
 public:
  explicit Flood(const FloodOptions& o) : o_(o) {}

  FloodFigures Run() {
    if (o_.cpu >= 0) {
      absl::Status pinned = PinThisThreadToCpu(o_.cpu);
      if (!pinned.ok()) f_.pin_error = pinned.ToString();
    }
    conns_.resize(o_.connections);
    for (FloodConnection& c : conns_) Open(c);
    f_.due = static_cast<uint64_t>(o_.rate * absl::ToDoubleSeconds(o_.duration));
    const absl::Time start = absl::Now();
    const absl::Time stop_sending = start + o_.duration;
    absl::Time drain_until = absl::InfiniteFuture();
    std::vector<pollfd> fds(conns_.size());
    size_t next_conn = 0;
    while (true) {
      const absl::Time now = absl::Now();
      if (now < stop_sending) {
        const uint64_t due_now = std::min<uint64_t>(
            f_.due, static_cast<uint64_t>(absl::ToDoubleSeconds(now - start) * o_.rate) + 1);
        while (f_.sent < due_now && SendOne(next_conn, start, now)) {
        }
      } else if (drain_until == absl::InfiniteFuture()) {
        drain_until = now + o_.drain;
      }
      if (now >= stop_sending && (Outstanding() == 0 || now >= drain_until)) break;
      for (size_t i = 0; i < conns_.size(); ++i) fds[i] = {conns_[i].fd, POLLIN, 0};
      if (poll(fds.data(), fds.size(), 1) <= 0) continue;
      for (size_t i = 0; i < conns_.size(); ++i) {
        if (fds[i].revents != 0) Receive(conns_[i], start);
      }
    }
    for (FloodConnection& c : conns_) {
      f_.unanswered += c.sent.size();
      if (c.fd >= 0) close(c.fd);
    }
    return f_;
  }

 private:
  void Open(FloodConnection& c) {
    c.in.clear();
    c.sent.clear();
    absl::StatusOr<int> fd = ConnectLoopback(o_.port);
    c.fd = fd.ok() ? *fd : -1;
    if (c.fd >= 0) SetNonBlocking(c.fd);
  }

  void Lose(FloodConnection& c) {
    ++f_.connections_lost;
    f_.unanswered += c.sent.size();
    if (c.fd >= 0) close(c.fd);
    Open(c);
  }

  size_t Outstanding() const {
    size_t n = 0;
    for (const FloodConnection& c : conns_) n += c.sent.size();
    return n;
  }

  // Sends the next request on the next connection with room; false if none
  // has room.
  bool SendOne(size_t& next_conn, absl::Time start, absl::Time now) {
    for (size_t tried = 0; tried < conns_.size(); ++tried) {
      FloodConnection& c = conns_[next_conn];
      next_conn = (next_conn + 1) % conns_.size();
      if (c.fd < 0 || c.sent.size() >= static_cast<size_t>(o_.pipeline_depth)) continue;
      const std::string request =
          absl::StrCat("GET ", o_.path(f_.sent), " HTTP/1.1\r\nHost: sho.rt\r\n\r\n");
      const ssize_t n = ::send(c.fd, request.data(), request.size(), MSG_NOSIGNAL);
      if (n != static_cast<ssize_t>(request.size())) {
        Lose(c);
        continue;
      }
      const absl::Time due = start + absl::Seconds(static_cast<double>(f_.sent) / o_.rate);
      f_.max_lag = std::max(f_.max_lag, now - due);
      c.sent.push_back(now);
      ++f_.sent;
      f_.send_span = now - start;
      return true;
    }
    return false;
  }

  void Receive(FloodConnection& c, absl::Time start) {
    char buffer[65536];
    const ssize_t n = ::recv(c.fd, buffer, sizeof(buffer), 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n > 0) c.in.append(buffer, static_cast<size_t>(n));
    const absl::Time now = absl::Now();
    Answer answer;
    Take taken = Take::kIncomplete;
    while (!c.in.empty() && (taken = TakeAnswer(c.in, &answer)) == Take::kAnswer) {
      if (c.sent.empty()) {
        taken = Take::kMalformed;  // an answer nobody asked for
        break;
      }
      ++f_.answered;
      ++f_.statuses[answer.status];
      if (answer.status == 503 && !answer.retry_after) ++f_.unavailable_without_retry_after;
      f_.latencies.push_back(now - c.sent.front());
      f_.answer_span = now - start;
      c.sent.pop_front();
    }
    if (taken == Take::kMalformed) {
      ++f_.malformed;
      return Lose(c);
    }
    if (n <= 0) Lose(c);  // closed by the edge, or reset
  }

  const FloodOptions& o_;
  FloodFigures f_;
  std::vector<FloodConnection> conns_;
};

}  // namespace

Take TakeAnswer(std::string& in, Answer* answer) {
  const size_t head_end = in.find("\r\n\r\n");
  if (head_end == std::string::npos) return Take::kIncomplete;
  // Field names compared lower-cased; values taken from the bytes as sent.
  const std::string head = in.substr(0, head_end + 2);
  const std::string lower = absl::AsciiStrToLower(head);
  const auto value = [&](absl::string_view name, std::string* out) {
    const size_t at = lower.find(absl::StrCat("\r\n", name, ":"));
    if (at == std::string::npos) return false;
    const size_t start = at + name.size() + 3;
    const size_t end = head.find("\r\n", start);
    *out = std::string(absl::StripAsciiWhitespace(head.substr(start, end - start)));
    return true;
  };
  *answer = Answer();
  if (head.size() < 12 || lower.compare(0, 9, "http/1.1 ") != 0 ||
      !absl::SimpleAtoi(head.substr(9, 3), &answer->status)) {
    return Take::kMalformed;
  }
  size_t length = 0;
  std::string field;
  if (value("content-length", &field) && !absl::SimpleAtoi(field, &length)) return Take::kMalformed;
  if (in.size() < head_end + 4 + length) return Take::kIncomplete;
  value("location", &answer->location);
  answer->retry_after = value("retry-after", &field);
  answer->close = value("connection", &field) && absl::AsciiStrToLower(field) == "close";
  in.erase(0, head_end + 4 + length);
  return Take::kAnswer;
}

absl::StatusOr<int> ConnectLoopback(int port, int receive_buffer) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  if (receive_buffer > 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof(receive_buffer));
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int err = errno;
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("connect 127.0.0.1:", port, ": ", std::strerror(err)));
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

double FloodFigures::sent_rate() const {
  const double s = absl::ToDoubleSeconds(send_span);
  return s > 0 ? static_cast<double>(sent) / s : 0;
}

double FloodFigures::answered_rate() const {
  const double s = absl::ToDoubleSeconds(answer_span);
  return s > 0 ? static_cast<double>(answered) / s : 0;
}

FloodFigures RunFlood(const FloodOptions& options) {
  FloodFigures figures;
  std::thread thread([&] { figures = Flood(options).Run(); });
  thread.join();
  return figures;
}

// --- SlowClients -----------------------------------------------------------

SlowClients::SlowClients(int port, int clients, std::string head, absl::Duration byte_interval)
    : head_(std::move(head)), byte_interval_(byte_interval) {
  figures_.clients = clients;
  for (int i = 0; i < clients; ++i) {
    absl::StatusOr<int> fd = ConnectLoopback(port);
    if (!fd.ok()) continue;
    SetNonBlocking(*fd);
    fds_.push_back(*fd);
  }
  figures_.connected = static_cast<int>(fds_.size());
  open_ = figures_.connected;
  thread_ = std::thread([this] { Run(); });
}

SlowClients::~SlowClients() { Stop(); }

void SlowClients::Run() {
  const size_t n = fds_.size();
  const absl::Time start = absl::Now();
  std::vector<absl::Time> next(n), first_byte(n, absl::InfinitePast());
  std::vector<size_t> position(n, 0);
  for (size_t i = 0; i < n; ++i) next[i] = start + byte_interval_ * (static_cast<double>(i) / n);
  std::vector<pollfd> fds(n);
  const auto closed = [&](size_t i, absl::Time now) {
    close(fds_[i]);
    fds_[i] = -1;
    --open_;
    ++figures_.closed_by_edge;
    if (first_byte[i] != absl::InfinitePast()) {
      figures_.min_life = std::min(figures_.min_life, now - first_byte[i]);
      figures_.max_life = std::max(figures_.max_life, now - first_byte[i]);
    }
  };
  while (!stop_.load() && open_.load() > 0) {
    absl::Time now = absl::Now();
    for (size_t i = 0; i < n; ++i) {
      if (fds_[i] < 0 || next[i] > now) continue;
      // Past the end of the head: more of its last field's value.
      const char byte = position[i] < head_.size() ? head_[position[i]] : 'a';
      const ssize_t sent = ::send(fds_[i], &byte, 1, MSG_NOSIGNAL);
      if (sent == 1) {
        if (position[i]++ == 0) first_byte[i] = now;
        ++figures_.bytes_sent;
      } else if (errno != EAGAIN) {
        closed(i, now);
        continue;
      }
      next[i] = now + byte_interval_;
    }
    for (size_t i = 0; i < n; ++i) fds[i] = {fds_[i], POLLIN, 0};
    if (poll(fds.data(), n, 10) <= 0) continue;
    now = absl::Now();
    for (size_t i = 0; i < n; ++i) {
      if (fds_[i] < 0 || fds[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t got = ::recv(fds_[i], buffer, sizeof(buffer), 0);
      if (got > 0) {
        figures_.bytes_received += static_cast<uint64_t>(got);
      } else if (got == 0 || errno != EAGAIN) {
        closed(i, now);
      }
    }
  }
}

SlowFigures SlowClients::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  for (int& fd : fds_) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  return figures_;
}

}  // namespace shortener::testing
