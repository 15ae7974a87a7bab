// Runs one ConnectionProtocol with no socket and no event loop, for the
// socket-free tests and the fuzz target (tests/fuzz/http_request_fuzz.cc):
// the caller hands it bytes as reads, takes the output as a client reading
// it would, and delivers deferred responses when it chooses. Header-only so
// the fuzz target needs no library beyond edge_http.
//
// Deferred responses completed (from any thread) are queued and delivered,
// in completion order, by DeliverDeferred() on the caller's thread, as the
// loop would run them later.
//
// Thread safety: one thread drives it; DeferredResponse::Complete may be
// called from any thread while it lives.
#ifndef SHORTENER_TESTS_EDGE_HTTP_PROTOCOL_HARNESS_H_
#define SHORTENER_TESTS_EDGE_HTTP_PROTOCOL_HARNESS_H_

#include <algorithm>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "edge/http/connection_protocol.h"
#include "edge/http/http_server.h"
#include "edge/http/loop_context.h"

namespace shortener::edge::http::testing {

class ProtocolHarness final : public internal::DeferredSink, public internal::DeferredTarget {
 public:
  // 2024-01-02 03:04:05 GMT; the monotonic clock starts at 1 s.
  static constexpr std::time_t kUnixSecond = 1704164645;
  static constexpr int64_t kStartNs = 1'000'000'000;

  ProtocolHarness(const HttpServerOptions& options, Handler* handler, const PeerAddress& peer = {})
      : context_(0, options, handler, std::make_shared<internal::LoopGate>()) {
    context_.SetClock(kStartNs, kUnixSecond);
    {
      std::lock_guard<std::mutex> lock(context_.gate->mu);
      context_.gate->sink = this;
    }
    protocol_.emplace(&context_, this, peer);
  }
  ~ProtocolHarness() {
    // DeferredResponses still held elsewhere become no-ops.
    std::lock_guard<std::mutex> lock(context_.gate->mu);
    context_.gate->sink = nullptr;
  }
  ProtocolHarness(const ProtocolHarness&) = delete;
  ProtocolHarness& operator=(const ProtocolHarness&) = delete;

  internal::ConnectionProtocol& protocol() { return *protocol_; }
  internal::LoopContext& context() { return context_; }

  // One read: copies as much of `bytes` as the read buffer takes into it;
  // returns how many (0 only if the buffer has no room at all).
  size_t Receive(absl::string_view bytes) {
    const absl::Span<char> space = protocol_->ReadSpace();
    const size_t n = std::min(space.size(), bytes.size());
    if (n > 0) std::memcpy(space.data(), bytes.data(), n);
    protocol_->Received(n);
    return n;
  }

  // As Connection::Continue with a client that reads everything at once:
  // processes and takes the output until the protocol waits for input or a
  // deferred response.
  void Run() {
    for (bool more = true; more;) {
      more = protocol_->Process();
      TakeOutput();
      if (protocol_->deferred_pending()) return;
    }
  }

  // Receives all of `bytes` (several reads if need be), running after each;
  // stops early once the connection is finishing. Returns the bytes taken.
  size_t Send(absl::string_view bytes) {
    size_t taken = 0;
    while (taken < bytes.size() && !protocol_->finishing() && !protocol_->deferred_pending()) {
      const size_t n = Receive(bytes.substr(taken));
      if (n == 0) break;
      taken += n;
      Run();
    }
    return taken;
  }

  // What a transport sent of a write begun with BeginAsyncWrite().
  void AppendReceived(absl::string_view bytes) { received_.append(bytes.data(), bytes.size()); }

  // Appends the output to what the client received.
  void TakeOutput() {
    if (protocol_->output().empty()) return;
    received_ += protocol_->output();
    protocol_->OutputWritten();
  }

  // Delivers the deferred responses completed so far (OnDeferredDone on
  // the protocol, as the loop would); returns how many.
  size_t DeliverDeferred() {
    std::vector<Delivery> ready;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ready.swap(pending_);
    }
    for (Delivery& d : ready) d.target->OnDeferredDone(std::move(d.bytes), d.completed);
    return ready.size();
  }

  // What the client has received so far.
  const std::string& received() const { return received_; }
  std::string TakeReceived() { return std::exchange(received_, std::string()); }

 private:
  struct Delivery {
    internal::DeferredTarget* target;
    std::string bytes;
    bool completed;
  };

  // DeferredSink, under the gate's mutex, any thread.
  void Post(internal::DeferredTarget* target, std::string bytes, bool completed) override {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.push_back(Delivery{target, std::move(bytes), completed});
  }
  // DeferredTarget, from DeliverDeferred.
  void OnDeferredDone(std::string bytes, bool completed) override {
    protocol_->OnDeferredDone(std::move(bytes), completed);
  }

  internal::LoopContext context_;
  std::optional<internal::ConnectionProtocol> protocol_;
  std::string received_;
  std::mutex mu_;
  std::vector<Delivery> pending_;  // guarded by mu_
};

}  // namespace shortener::edge::http::testing

#endif  // SHORTENER_TESTS_EDGE_HTTP_PROTOCOL_HARNESS_H_
