#include "tests/bench/shorten/grpc_load.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "lib/grpcutil/api_key_channel.h"
#include "shortener/v1/shortener.grpc.pb.h"

namespace shortener::bench {
namespace {

namespace v1 = ::shortener::v1;
using Clock = std::chrono::steady_clock;

enum Phase : int { kWarmup = 0, kWindow = 1, kStop = 2 };

// One chain of calls: at most one call of a slot is outstanding, so a slot's
// fields are only touched by one callback at a time (gRPC orders the start
// of a call before its completion callback), and read by the driver after
// every slot has stopped.
struct Slot {
  int index = 0;
  int64_t seq = 0;
  std::unique_ptr<grpc::ClientContext> ctx;
  // The async-queue API's call objects and status (unused by the callback API).
  std::unique_ptr<grpc::ClientAsyncResponseReader<v1::ShortenResponse>> reader;
  std::unique_ptr<grpc::ClientAsyncResponseReader<v1::BatchShortenResponse>> batch_reader;
  grpc::Status status;
  v1::ShortenRequest request;
  v1::ShortenResponse response;
  v1::BatchShortenRequest batch_request;
  v1::BatchShortenResponse batch_response;
  Clock::time_point start;
  std::vector<double> latencies_ms;  // calls completed in the window
  int64_t window_calls = 0;
  int64_t window_links = 0;
};

class ClosedLoop {
 public:
  ClosedLoop(const LoadOptions& options, bool batch)
      : options_(options), batch_(batch), stopped_(options.inflight) {}

  absl::StatusOr<LoadResult> Run();

 private:
  absl::Status Connect();
  void StartCall(Slot& slot);
  void StartAsyncQueueCall(Slot& slot, v1::ShortenService::Stub& stub);
  void Poll(grpc::CompletionQueue& queue);
  void OnDone(Slot& slot, const grpc::Status& status);
  void NoteError(const std::string& message);
  std::string NextUrl(Slot& slot) {
    return absl::StrCat(options_.rejected_urls ? "ftp" : "https",
                        "://www.example.com/campaign/landing?src=", options_.url_tag,
                        "&s=", slot.index, "&n=", slot.seq++);
  }
  LoadResult Collect(double seconds);

  const LoadOptions options_;
  const bool batch_;
  const std::string bearer_ = absl::StrCat("Bearer ", options_.api_key);
  std::vector<std::unique_ptr<v1::ShortenService::Stub>> stubs_;
  std::vector<std::unique_ptr<grpc::CompletionQueue>> queues_;  // async-queue API
  std::vector<std::thread> pollers_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::atomic<int> phase_{kWarmup};
  std::atomic<int64_t> call_errors_{0}, item_errors_{0}, not_created_{0};
  absl::BlockingCounter stopped_;
  absl::Mutex mu_;
  std::string first_error_ ABSL_GUARDED_BY(mu_);
};

absl::Status ClosedLoop::Connect() {
  for (int i = 0; i < options_.channels; ++i) {
    grpc::ChannelArguments args;
    // Without a local subchannel pool, channels to one target share one TCP
    // connection (and one server-side transport), which would understate
    // what several clients get.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt("shortener.bench.channel", i);
    // A load generator never retries (it would count one link twice), and
    // without a retry policy the retry filter only adds per-call work.
    args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
    // Per-call work a load generator has no use for: channelz's call
    // counters, and the optional filters of the full client stack (the
    // deadline still reaches the server, which enforces it).
    args.SetInt(GRPC_ARG_ENABLE_CHANNELZ, 0);
    args.SetInt(GRPC_ARG_MINIMAL_STACK, 1);
    args.SetMaxReceiveMessageSize(64 << 20);
    args.SetMaxSendMessageSize(64 << 20);
    // The async-queue calls add the key themselves (StartAsyncQueueCall):
    // no interceptor object per call.
    auto channel =
        options_.api == LoadOptions::Api::kAsyncQueue
            ? grpc::CreateCustomChannel(options_.target, grpc::InsecureChannelCredentials(), args)
            : grpcutil::CreateChannelWithApiKey(options_.target, grpc::InsecureChannelCredentials(),
                                                args, options_.api_key);
    if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
      return absl::UnavailableError(absl::StrCat("cannot connect to ", options_.target));
    }
    stubs_.push_back(v1::ShortenService::NewStub(channel));
  }
  return absl::OkStatus();
}

void ClosedLoop::StartCall(Slot& slot) {
  if (phase_.load(std::memory_order_acquire) == kStop) {
    stopped_.DecrementCount();
    return;
  }
  slot.ctx = std::make_unique<grpc::ClientContext>();
  slot.ctx->set_deadline(std::chrono::system_clock::now() +
                         absl::ToChronoMilliseconds(options_.call_timeout));
  v1::ShortenService::Stub& stub = *stubs_[slot.index % stubs_.size()];
  if (options_.api == LoadOptions::Api::kAsyncQueue) {
    StartAsyncQueueCall(slot, stub);
    return;
  }
  auto done = [this, &slot](grpc::Status status) { OnDone(slot, status); };
  slot.start = Clock::now();
  if (batch_) {
    // Clear() keeps the item objects for reuse: no per-call allocation of
    // 1000 messages on the load generator.
    slot.batch_request.Clear();
    for (int i = 0; i < options_.batch_size; ++i) {
      v1::ShortenRequest* item = slot.batch_request.add_requests();
      item->set_long_url(NextUrl(slot));
      item->set_force_new(options_.force_new);
      item->mutable_labels()->insert(options_.labels.begin(), options_.labels.end());
    }
    slot.batch_response.Clear();
    stub.async()->BatchShorten(slot.ctx.get(), &slot.batch_request, &slot.batch_response,
                               std::move(done));
  } else {
    slot.request.Clear();
    slot.request.set_long_url(NextUrl(slot));
    slot.request.set_force_new(options_.force_new);
    slot.request.mutable_labels()->insert(options_.labels.begin(), options_.labels.end());
    slot.response.Clear();
    stub.async()->Shorten(slot.ctx.get(), &slot.request, &slot.response, std::move(done));
  }
}

void ClosedLoop::StartAsyncQueueCall(Slot& slot, v1::ShortenService::Stub& stub) {
  if (!options_.api_key.empty()) slot.ctx->AddMetadata("authorization", bearer_);
  grpc::CompletionQueue* queue = queues_[slot.index % queues_.size()].get();
  slot.start = Clock::now();
  if (batch_) {
    slot.batch_request.Clear();
    for (int i = 0; i < options_.batch_size; ++i) {
      v1::ShortenRequest* item = slot.batch_request.add_requests();
      item->set_long_url(NextUrl(slot));
      item->set_force_new(options_.force_new);
      item->mutable_labels()->insert(options_.labels.begin(), options_.labels.end());
    }
    slot.batch_response.Clear();
    slot.batch_reader = stub.AsyncBatchShorten(slot.ctx.get(), slot.batch_request, queue);
    slot.batch_reader->Finish(&slot.batch_response, &slot.status, &slot);
  } else {
    slot.request.Clear();
    slot.request.set_long_url(NextUrl(slot));
    slot.request.set_force_new(options_.force_new);
    slot.request.mutable_labels()->insert(options_.labels.begin(), options_.labels.end());
    slot.response.Clear();
    slot.reader = stub.AsyncShorten(slot.ctx.get(), slot.request, queue);
    slot.reader->Finish(&slot.response, &slot.status, &slot);
  }
}

// One poller per queue; a completion is handled, and the slot's next call
// started, on the thread that polled it.
void ClosedLoop::Poll(grpc::CompletionQueue& queue) {
  void* tag = nullptr;
  bool ok = false;
  while (queue.Next(&tag, &ok)) {
    Slot& slot = *static_cast<Slot*>(tag);
    OnDone(slot, slot.status);
  }
}

void ClosedLoop::OnDone(Slot& slot, const grpc::Status& status) {
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - slot.start).count();
  int64_t links = 0;
  bool expected_rejection =
      options_.rejected_urls && status.error_code() == grpc::StatusCode::INVALID_ARGUMENT;
  if (expected_rejection) {
    // The RPC-floor run: nothing is created, the call itself is the unit.
  } else if (!status.ok()) {
    call_errors_.fetch_add(1, std::memory_order_relaxed);
    NoteError(absl::StrCat("code ", status.error_code(), ": ", status.error_message()));
  } else if (batch_) {
    for (const v1::BatchShortenResult& r : slot.batch_response.results()) {
      if (r.has_error()) {
        item_errors_.fetch_add(1, std::memory_order_relaxed);
        NoteError(absl::StrCat("item code ", r.error().code(), ": ", r.error().message()));
      } else if (!r.response().created()) {
        not_created_.fetch_add(1, std::memory_order_relaxed);
      } else {
        ++links;
      }
    }
    int64_t missing = options_.batch_size - slot.batch_response.results_size();
    if (missing != 0) {
      item_errors_.fetch_add(std::abs(missing), std::memory_order_relaxed);
      NoteError(absl::StrCat("batch answered ", slot.batch_response.results_size(), " results for ",
                             options_.batch_size, " items"));
    }
  } else if (!slot.response.created()) {
    not_created_.fetch_add(1, std::memory_order_relaxed);
  } else {
    links = 1;
  }
  if (phase_.load(std::memory_order_acquire) == kWindow && (status.ok() || expected_rejection)) {
    slot.latencies_ms.push_back(ms);
    ++slot.window_calls;
    slot.window_links += links;
  }
  StartCall(slot);
}

void ClosedLoop::NoteError(const std::string& message) {
  absl::MutexLock lock(&mu_);
  if (first_error_.empty()) first_error_ = message;
}

absl::StatusOr<LoadResult> ClosedLoop::Run() {
  if (options_.inflight < 1 || options_.channels < 1 || options_.batch_size < 1) {
    return absl::InvalidArgumentError("inflight, channels and batch_size must be >= 1");
  }
  if (options_.api == LoadOptions::Api::kAsyncQueue && options_.client_threads < 1) {
    return absl::InvalidArgumentError("client_threads must be >= 1");
  }
  if (absl::Status st = Connect(); !st.ok()) return st;
  for (int i = 0; i < options_.inflight; ++i) {
    slots_.push_back(std::make_unique<Slot>());
    slots_.back()->index = i;
  }
  if (options_.api == LoadOptions::Api::kAsyncQueue) {
    for (int i = 0; i < options_.client_threads; ++i) {
      queues_.push_back(std::make_unique<grpc::CompletionQueue>());
    }
    for (auto& queue : queues_) pollers_.emplace_back([this, q = queue.get()] { Poll(*q); });
  }
  for (auto& slot : slots_) StartCall(*slot);
  absl::SleepFor(options_.warmup);
  options_.on_window_start();
  absl::Time window_start = absl::Now();
  phase_.store(kWindow, std::memory_order_release);
  absl::SleepFor(options_.window);
  phase_.store(kStop, std::memory_order_release);
  double seconds = absl::ToDoubleSeconds(absl::Now() - window_start);
  options_.on_window_end();
  // Calls still outstanding finish (or time out) before the slots go away.
  stopped_.Wait();
  for (auto& queue : queues_) queue->Shutdown();
  for (std::thread& t : pollers_) t.join();
  return Collect(seconds);
}

LoadResult ClosedLoop::Collect(double seconds) {
  LoadResult r;
  r.seconds = seconds;
  std::vector<double> all;
  for (const auto& slot : slots_) {
    r.calls += slot->window_calls;
    r.links += slot->window_links;
    all.insert(all.end(), slot->latencies_ms.begin(), slot->latencies_ms.end());
  }
  r.calls_per_s = r.calls / seconds;
  r.links_per_s = r.links / seconds;
  if (!all.empty()) {
    std::sort(all.begin(), all.end());
    auto at = [&all](double q) {
      return all[std::min(all.size() - 1, static_cast<size_t>(q * all.size()))];
    };
    r.p50_ms = at(0.50);
    r.p99_ms = at(0.99);
    r.max_ms = all.back();
    r.mean_ms = std::accumulate(all.begin(), all.end(), 0.0) / all.size();
  }
  r.call_errors = call_errors_.load();
  r.item_errors = item_errors_.load();
  r.not_created = not_created_.load();
  absl::MutexLock lock(&mu_);
  r.first_error = first_error_;
  return r;
}

}  // namespace

absl::StatusOr<LoadResult> RunShortenLoad(const LoadOptions& options) {
  ClosedLoop loop(options, /*batch=*/false);
  return loop.Run();
}

absl::StatusOr<LoadResult> RunBatchShortenLoad(const LoadOptions& options) {
  ClosedLoop loop(options, /*batch=*/true);
  return loop.Run();
}

}  // namespace shortener::bench
