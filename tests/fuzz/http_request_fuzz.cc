// Fuzzes the edge's HTTP request path without a socket: bytes in through
// the connection protocol (edge/http/connection_protocol.h, Beast's parser
// and the edge's RFC 9112 rules), requests to a handler, responses out.
//
// Input: byte 0 seeds the schedule (chunk sizes, how much of the output the
// "client" reads at a time, when deferred responses come back, buffer
// releases); byte 1 picks options (small limits, a small output bound,
// shutdown midway, bodies kept as the service's HTTP/JSON API keeps them);
// the rest is what the client sends. The driver mirrors
// Connection::Continue: it only reads when the connection would, and
// finishes with EOF, every write completed and every deferred response
// delivered. The handler answers by the target: a 'd' in it defers (the
// driver completes it later), an 'x' defers and drops it, an 's' answers
// nothing, anything else is answered at once; every answer is a fixed
// response whose body is "#<n>", n counting the requests handled.
//
// Invariants, besides no memory error or UB:
//  - everything written is a sequence of complete, well-formed HTTP/1.1
//    responses (status line, token: value fields without control
//    characters, exactly one Content-Length, a body of that length);
//  - one response per handled request, in request order (bodies #0, #1,
//    ...); a dropped or unanswered one gets the server's 500 instead;
//  - a server refusal (400/413/414/431/505) comes after the responses of
//    every request handled, and nothing follows it, a 500, or any response
//    with Connection: close;
//  - what the handler sees is what the client sent: method, target and
//    each kept field value occur verbatim in the input (a view into freed
//    or reused memory, or a folded value joined by the parser, would not),
//    and the version is 1.0 or 1.1; a kept body too, and without keep_body
//    the body is empty;
//  - "100 Continue" is sent only with keep_body, before the response it
//    precedes.
//  - the read buffer always has room when the connection reads, and the
//    output held unwritten stays under max_output_bytes plus one response.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "edge/http/connection_protocol.h"
#include "edge/http/http_server.h"
#include "tests/edge/http/protocol_harness.h"
#include "tests/fuzz/fuzz_check.h"

namespace shortener::edge::http {
namespace {

// splitmix64: the schedule, from the first input byte.
class Schedule {
 public:
  explicit Schedule(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    return z ^ (z >> 31);
  }
  // 1 .. 2^k for a random k in 0..12: mostly small, sometimes whole.
  size_t ChunkSize() { return 1 + Next() % (size_t{1} << (Next() % 13)); }
  bool OneIn(uint64_t n) { return Next() % n == 0; }

 private:
  uint64_t state_;
};

enum class Kind { kAnswered, kDeferred, kDropped, kSilent };

class FuzzHandler : public Handler {
 public:
  FuzzHandler(absl::string_view input, bool keep_body) : input_(input), keep_body_(keep_body) {}

  void Handle(Exchange& exchange) override {
    const Request& r = exchange.request();
    // What the handler sees is what was sent.
    FUZZ_CHECK(r.version == 10 || r.version == 11);
    FUZZ_CHECK(!r.method.empty() && !r.target.empty());
    for (absl::string_view value :
         {r.method, r.target, r.user_agent, r.referer, r.purpose, r.sec_purpose}) {
      FUZZ_CHECK(absl::StrContains(input_, value));
    }
    for (absl::string_view part : absl::StrSplit(r.x_forwarded_for, ", ")) {
      FUZZ_CHECK(absl::StrContains(input_, part));
    }
    for (absl::string_view part : absl::StrSplit(r.authorization, ", ")) {
      FUZZ_CHECK(absl::StrContains(input_, part));
    }
    FUZZ_CHECK(absl::StrContains(input_, r.content_type));
    FUZZ_CHECK(keep_body_ ? absl::StrContains(input_, r.body) : r.body.empty());
    const int n = static_cast<int>(kinds.size());
    const std::string answer =
        absl::StrCat("HTTP/1.1 200 OK\r\nContent-Length: ", absl::StrCat("#", n).size(),
                     "\r\nConnection: ", r.keep_alive ? "keep-alive" : "close", "\r\n\r\n#", n);
    if (absl::StrContains(r.target, "x") || absl::StrContains(r.target, "d")) {
      const bool drop = absl::StrContains(r.target, "x");
      kinds.push_back(drop ? Kind::kDropped : Kind::kDeferred);
      held.push_back(exchange.Defer());
      FUZZ_CHECK(held.back().pending());
      FUZZ_CHECK(!exchange.Defer().pending());  // at most once per request
      answers.push_back(drop ? std::string() : answer);
    } else if (absl::StrContains(r.target, "s")) {
      kinds.push_back(Kind::kSilent);
    } else {
      kinds.push_back(Kind::kAnswered);
      exchange.out() += answer;
    }
  }

  // Completes (or drops) the oldest held response; false if none.
  bool ResolveOldest() {
    if (held.empty()) return false;
    if (answers.front().empty()) {
      DeferredResponse dropped = std::move(held.front());
    } else {
      held.front().Complete(answers.front());
    }
    held.pop_front();
    answers.pop_front();
    return true;
  }

  std::vector<Kind> kinds;  // per handled request, in order

 private:
  absl::string_view input_;
  const bool keep_body_;
  std::deque<DeferredResponse> held;
  std::deque<std::string> answers;
};

// A client reading responses: a blocking socket in miniature.
class Driver {
 public:
  Driver(const HttpServerOptions& options, FuzzHandler* handler, Schedule* schedule)
      : h_(options, handler),
        handler_(handler),
        schedule_(schedule),
        max_output_bytes_(options.max_output_bytes) {}

  internal::ConnectionProtocol& protocol() { return h_.protocol(); }
  testing::ProtocolHarness& harness() { return h_; }
  const std::string& received() const { return h_.received(); }

  // Whether the connection would read now (Connection::Continue ended in
  // StartRead).
  bool WantsRead() const { return wants_read_; }

  void Continue() {
    wants_read_ = false;
    for (bool more = true; more;) {
      more = protocol().Process();
      // Every response here is under 512 bytes.
      const size_t held = protocol().output().size() + (async_ ? writing_.size() - sent_ : 0);
      FUZZ_CHECK(held < max_output_bytes_ + 512);
      if (!protocol().output().empty() && !async_) WriteOut();
      if (async_ || protocol().deferred_pending()) return;
    }
    // Finishing: the connection closes or lingers, reading nothing more.
    wants_read_ = !protocol().finishing() && !protocol().peer_eof();
  }

  void Read(absl::string_view bytes) {
    FUZZ_CHECK(wants_read_);
    const absl::Span<char> space = protocol().ReadSpace();
    FUZZ_CHECK(!space.empty());
    const size_t n = h_.Receive(bytes);
    FUZZ_CHECK(n == std::min(bytes.size(), space.size()));
    consumed_ += n;
    Continue();
  }
  size_t consumed() const { return consumed_; }

  void Eof() {
    FUZZ_CHECK(wants_read_);
    protocol().ReceivedEof();
    Continue();
  }

  // The socket took the rest of a partial write.
  bool FinishWrite() {
    if (!async_) return false;
    async_ = false;
    h_.AppendReceived(writing_.substr(sent_));
    protocol().AsyncWriteDone();
    Continue();
    return true;
  }

  bool ResolveDeferred() {
    if (!handler_->ResolveOldest()) return false;
    FUZZ_CHECK(h_.DeliverDeferred() == 1);
    Continue();
    return true;
  }

  void MaybeRelease() {
    // As the sweep: never with a write pending.
    if (!async_ && protocol().ShouldReleaseBuffers()) protocol().ReleaseBuffers();
  }

 private:
  void WriteOut() {
    const std::string& out = protocol().output();
    // Sometimes the socket takes only part: the rest goes asynchronously.
    const size_t take = schedule_->OneIn(3) ? schedule_->Next() % out.size() : out.size();
    if (take == out.size()) {
      h_.TakeOutput();
      return;
    }
    writing_ = protocol().BeginAsyncWrite();
    sent_ = take;
    h_.AppendReceived(writing_.substr(0, take));
    async_ = true;
  }

  testing::ProtocolHarness h_;
  FuzzHandler* handler_;
  Schedule* schedule_;
  const size_t max_output_bytes_;
  absl::string_view writing_;
  size_t sent_ = 0;
  size_t consumed_ = 0;
  bool async_ = false;
  bool wants_read_ = false;
};

bool IsTokenChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

struct Response {
  int status = 0;
  bool close = false;
  std::string body;
};

// Parses one complete response off the front of `rest`.
Response TakeResponse(absl::string_view& rest) {
  const size_t head_end = rest.find("\r\n\r\n");
  FUZZ_CHECK(head_end != absl::string_view::npos);
  const absl::string_view head = rest.substr(0, head_end + 2);
  std::vector<absl::string_view> lines = absl::StrSplit(head.substr(0, head.size() - 2), "\r\n");
  const absl::string_view status_line = lines[0];
  FUZZ_CHECK(absl::StartsWith(status_line, "HTTP/1.1 ") && status_line.size() > 13);
  Response r;
  FUZZ_CHECK(absl::SimpleAtoi(status_line.substr(9, 3), &r.status));
  FUZZ_CHECK(r.status >= 100 && r.status <= 599 && status_line[12] == ' ');
  for (char c : status_line) FUZZ_CHECK(c >= 0x20 && c < 0x7f);
  int content_lengths = 0;
  size_t length = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const absl::string_view line = lines[i];
    const size_t colon = line.find(':');
    FUZZ_CHECK(colon != absl::string_view::npos && colon > 0);
    for (char c : line.substr(0, colon)) FUZZ_CHECK(IsTokenChar(c));
    for (char c : line.substr(colon + 1)) FUZZ_CHECK(c >= 0x20 && c < 0x7f);
    FUZZ_CHECK(line.size() > colon + 1 && line[colon + 1] == ' ');
    const absl::string_view name = line.substr(0, colon);
    const absl::string_view value = line.substr(colon + 2);
    if (absl::EqualsIgnoreCase(name, "content-length")) {
      ++content_lengths;
      FUZZ_CHECK(absl::SimpleAtoi(value, &length));
    } else if (absl::EqualsIgnoreCase(name, "connection")) {
      FUZZ_CHECK(value == "close" || value == "keep-alive");
      r.close = value == "close";
    }
  }
  FUZZ_CHECK(content_lengths == 1);
  FUZZ_CHECK(rest.size() >= head_end + 4 + length);
  r.body = std::string(rest.substr(head_end + 4, length));
  rest.remove_prefix(head_end + 4 + length);
  return r;
}

bool IsServerRefusal(int status) {
  for (int s : kServerResponseStatuses) {
    if (s == status && s != 500) return true;
  }
  return false;
}

void CheckOutput(absl::string_view output, const std::vector<Kind>& kinds, bool keep_body) {
  size_t next = 0;  // the handled request the next response answers
  bool ended = false;
  constexpr absl::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  while (!output.empty()) {
    FUZZ_CHECK(!ended);  // nothing after the last response
    if (absl::StartsWith(output, kContinue)) {
      FUZZ_CHECK(keep_body);
      output.remove_prefix(kContinue.size());
      continue;
    }
    const Response r = TakeResponse(output);
    if (r.status == 200) {
      FUZZ_CHECK(next < kinds.size());
      FUZZ_CHECK(kinds[next] == Kind::kAnswered || kinds[next] == Kind::kDeferred);
      FUZZ_CHECK(r.body == absl::StrCat("#", next));
      ++next;
      ended = r.close;
    } else if (r.status == 500) {
      FUZZ_CHECK(next < kinds.size());
      FUZZ_CHECK(kinds[next] == Kind::kDropped || kinds[next] == Kind::kSilent);
      FUZZ_CHECK(r.close);
      ++next;
      ended = true;
    } else {
      FUZZ_CHECK(IsServerRefusal(r.status));
      FUZZ_CHECK(next == kinds.size());  // every handled request answered first
      FUZZ_CHECK(r.close);
      ended = true;
    }
  }
  // Every request handled was answered.
  FUZZ_CHECK(next == kinds.size());
}

HttpServerOptions OptionsFrom(uint8_t bits) {
  HttpServerOptions options;
  if (bits & 1) options.max_output_bytes = 200;
  if (bits & 2) {
    options.max_request_line = 64;
    options.max_header_bytes = 256;
  }
  if (bits & 4) options.max_header_fields = 4;
  if (bits & 8) options.max_body_bytes = 16;
  if (bits & 32) options.keep_body = true;
  return options;
}

void FuzzOne(const uint8_t* data, size_t size) {
  if (size < 2) return;
  Schedule schedule(uint64_t{data[0]} << 8 | data[1]);
  const bool drain_midway = (data[1] & 16) != 0;
  const absl::string_view input(reinterpret_cast<const char*>(data) + 2, size - 2);

  const HttpServerOptions options = OptionsFrom(data[1]);
  FuzzHandler handler(input, options.keep_body);
  Driver driver(options, &handler, &schedule);
  driver.Continue();  // as Connection::Start
  for (size_t steps = 0;; ++steps) {
    FUZZ_CHECK(steps < 1000000);
    if (driver.WantsRead()) {
      if (schedule.OneIn(8)) driver.MaybeRelease();
      if (drain_midway && driver.consumed() * 2 >= input.size()) {
        driver.harness().context().draining = true;
      }
      const size_t at = driver.consumed();
      if (at == input.size()) {
        driver.Eof();
      } else {
        driver.Read(input.substr(at, schedule.ChunkSize()));
      }
      continue;
    }
    // Waiting for the socket to take a write, or for a deferred response:
    // either may come first.
    const bool write_first = schedule.OneIn(2);
    if (write_first ? driver.FinishWrite() || driver.ResolveDeferred()
                    : driver.ResolveDeferred() || driver.FinishWrite()) {
      continue;
    }
    break;  // finished
  }
  FUZZ_CHECK(!driver.protocol().deferred_pending());
  CheckOutput(driver.received(), handler.kinds, options.keep_body);
}

}  // namespace
}  // namespace shortener::edge::http

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shortener::edge::http::FuzzOne(data, size);
  return 0;
}
