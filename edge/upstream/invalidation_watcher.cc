#include "edge/upstream/invalidation_watcher.h"

#include <random>
#include <utility>

#include "grpcpp/client_context.h"
#include "grpcpp/support/client_callback.h"
#include "lib/common/log.h"

namespace shortener::edge {

namespace pb = ::shortener::v1;

// One stream. Lives on the watcher thread's stack frame until OnDone.
class InvalidationWatcher::Reader : public grpc::ClientReadReactor<pb::Invalidation> {
 public:
  Reader(InvalidationWatcher* watcher) : watcher_(watcher) {
    request_.set_subscriber(watcher_->options_.subscriber);
  }

  void Begin() {
    watcher_->sink_->StreamStarting();
    watcher_->stub_->async()->WatchInvalidations(&context_, &request_, this);
    StartRead(&message_);
    StartCall();
  }

  void Cancel() { context_.TryCancel(); }

  void OnReadDone(bool ok) override {
    if (!ok) return;  // OnDone follows
    InvalidationSink* sink = watcher_->sink_;
    sink->MessageReceived(message_.codes_size(), message_.drop_all());
    if (message_.drop_all()) sink->DropAll();
    for (const std::string& code : message_.codes()) sink->Invalidate(code);
    if (!acknowledged_) {
      acknowledged_ = true;
      watcher_->subscribed_.store(true, std::memory_order_release);
      sink->StreamState(true);
      LogInfo("invalidation stream subscribed");
    }
    message_.Clear();
    StartRead(&message_);
  }

  void OnDone(const grpc::Status& status) override {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = status;
    done_ = true;
    cv_.notify_all();
  }

  // Blocks until OnDone; returns whether the stream was ever acknowledged.
  bool Wait(grpc::Status* status) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return done_; });
    *status = status_;
    return acknowledged_;
  }

 private:
  InvalidationWatcher* watcher_;
  grpc::ClientContext context_;
  pb::WatchInvalidationsRequest request_;
  pb::Invalidation message_;
  bool acknowledged_ = false;  // reactor callbacks are serialised

  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  grpc::Status status_;
};

InvalidationWatcher::InvalidationWatcher(std::shared_ptr<grpc::Channel> channel,
                                         InvalidationSink* sink, InvalidationWatcherOptions options)
    : stub_(pb::ShortenService::NewStub(std::move(channel))),
      sink_(sink),
      options_(std::move(options)) {}

InvalidationWatcher::~InvalidationWatcher() { Stop(); }

void InvalidationWatcher::Start() {
  thread_ = std::thread([this] { Run(); });
}

void InvalidationWatcher::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    if (current_ != nullptr) current_->Cancel();
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void InvalidationWatcher::Run() {
  std::mt19937_64 rng(std::random_device{}());
  absl::Duration backoff = options_.initial_backoff;
  while (true) {
    Reader reader(this);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      current_ = &reader;
    }
    reader.Begin();
    grpc::Status status;
    const bool acknowledged = reader.Wait(&status);
    {
      std::lock_guard<std::mutex> lock(mu_);
      current_ = nullptr;
    }
    if (acknowledged) {
      subscribed_.store(false, std::memory_order_release);
      sink_->StreamState(false);
      LogWarning("invalidation stream ended (%s); resubscribing", status.error_message());
      backoff = options_.initial_backoff;
    } else if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
               status.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
      // Not a network blip: the service refuses this edge's key. Say so on
      // every attempt (they are max_backoff apart) until someone fixes it.
      LogError(
          "invalidation stream refused: %s; check --api_key_file (an infrastructure key "
          "with scope watch_invalidations)",
          status.error_message());
    }
    // Sleep backoff * [0.5, 1.5) so edges restarted together spread out.
    std::uniform_real_distribution<double> jitter(0.5, 1.5);
    const absl::Duration sleep = backoff * jitter(rng);
    backoff = std::min(backoff * 2, options_.max_backoff);
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, absl::ToChronoNanoseconds(sleep), [this] { return stopping_; })) return;
  }
}

}  // namespace shortener::edge
