// An in-process ShortenService that implements WatchInvalidations only, for
// the invalidation watcher's tests: every stream opens with
// Invalidation{drop_all: true} (as the real service's does), then carries
// what the test sends; the test can end the current stream, or refuse the
// next subscriptions with a status, and sees every subscription attempt.
//
// Thread safety: the handler runs on gRPC threads; the test's calls come
// from its own; all under one mutex.
#ifndef SHORTENER_TESTS_EDGE_UPSTREAM_FAKE_INVALIDATION_SERVICE_H_
#define SHORTENER_TESTS_EDGE_UPSTREAM_FAKE_INVALIDATION_SERVICE_H_

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "shortener/v1/shortener.grpc.pb.h"
#include "tests/support/in_process_server.h"

namespace shortener::edge {

class FakeInvalidationService final : public v1::ShortenService::Service {
 public:
  grpc::Status WatchInvalidations(grpc::ServerContext* ctx,
                                  const v1::WatchInvalidationsRequest* request,
                                  grpc::ServerWriter<v1::Invalidation>* writer) override {
    std::unique_lock<std::mutex> lock(mu_);
    attempts_.push_back(Attempt{request->subscriber(), std::chrono::steady_clock::now()});
    changed_.notify_all();
    if (refusals_ > 0) {
      --refusals_;
      return refusal_;
    }
    ++open_;
    v1::Invalidation hello;
    hello.set_drop_all(true);
    lock.unlock();
    writer->Write(hello);
    lock.lock();
    grpc::Status ended = grpc::Status::CANCELLED;
    for (;;) {
      // Wakes now and then to notice a client that went away.
      changed_.wait_for(lock, std::chrono::milliseconds(20));
      if (ctx->IsCancelled()) break;
      if (end_stream_) {
        end_stream_ = false;
        ended = grpc::Status(grpc::StatusCode::UNAVAILABLE, "stream ended by the test");
        break;
      }
      while (!outbox_.empty()) {
        v1::Invalidation message = std::move(outbox_.front());
        outbox_.pop_front();
        lock.unlock();
        writer->Write(message);
        lock.lock();
      }
    }
    --open_;
    changed_.notify_all();
    return ended;
  }

  // Sends `codes` (and drop_all if asked) on the open stream.
  void Send(std::vector<std::string> codes, bool drop_all = false) {
    v1::Invalidation message;
    for (std::string& code : codes) message.add_codes(std::move(code));
    message.set_drop_all(drop_all);
    std::lock_guard<std::mutex> lock(mu_);
    outbox_.push_back(std::move(message));
    changed_.notify_all();
  }
  // Ends the open stream with UNAVAILABLE.
  void EndStream() {
    std::lock_guard<std::mutex> lock(mu_);
    end_stream_ = true;
    changed_.notify_all();
  }
  // The next `n` subscriptions end at once with `status`, unacknowledged.
  void RefuseNext(int n, grpc::Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    refusals_ = n;
    refusal_ = std::move(status);
  }

  struct Attempt {
    std::string subscriber;
    std::chrono::steady_clock::time_point when;
  };
  std::vector<Attempt> Attempts() const {
    std::lock_guard<std::mutex> lock(mu_);
    return attempts_;
  }
  // Waits until `n` subscriptions were attempted.
  bool WaitForAttempts(size_t n, absl::Duration timeout = absl::Seconds(20)) const {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                             [&] { return attempts_.size() >= n; });
  }
  // Waits until no stream is open.
  bool WaitForNoStream(absl::Duration timeout = absl::Seconds(20)) const {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [&] { return open_ == 0; });
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::vector<Attempt> attempts_;
  std::deque<v1::Invalidation> outbox_;
  bool end_stream_ = false;
  int refusals_ = 0;
  grpc::Status refusal_;
  int open_ = 0;
};

// The fake on 127.0.0.1:<any port> and a channel to it.
using FakeInvalidationServer = testing::InProcessServer<FakeInvalidationService>;

}  // namespace shortener::edge

#endif  // SHORTENER_TESTS_EDGE_UPSTREAM_FAKE_INVALIDATION_SERVICE_H_
