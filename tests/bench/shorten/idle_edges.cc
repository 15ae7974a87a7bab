#include "tests/bench/shorten/idle_edges.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "shortener/v1/shortener.grpc.pb.h"
#include "tests/support/process_probe.h"

namespace shortener::bench {
namespace {

namespace v1 = ::shortener::v1;

// One idle edge: its own connection and one subscription on it.
struct Subscriber {
  std::unique_ptr<v1::ShortenService::Stub> stub;
  grpc::ClientContext ctx;
  v1::Invalidation first;  // the drop_all that acknowledges the subscription
  std::unique_ptr<grpc::ClientAsyncReader<v1::Invalidation>> reader;
  grpc::Status status;
};

// Waits for `events` completions on `cq`; false if one failed or the
// deadline passed first.
bool AwaitAll(grpc::CompletionQueue& cq, int events, std::chrono::system_clock::time_point until) {
  for (int i = 0; i < events; ++i) {
    void* tag = nullptr;
    bool ok = false;
    if (cq.AsyncNext(&tag, &ok, until) != grpc::CompletionQueue::GOT_EVENT || !ok) return false;
  }
  return true;
}

absl::StatusOr<uint64_t> Rss(pid_t pid) {
  absl::StatusOr<testing::ProcessMemory> m = testing::ReadProcessMemory(pid);
  if (!m.ok()) return m.status();
  return m->rss_bytes;
}

}  // namespace

double IdleEdgesResult::bytes_per_edge() const {
  if (edges <= 0 || rss_open_bytes <= rss_before_bytes) return 0;
  return static_cast<double>(rss_open_bytes - rss_before_bytes) / edges;
}

absl::StatusOr<IdleEdgesResult> MeasureIdleEdges(const std::string& target,
                                                 const std::string& api_key, pid_t service_pid,
                                                 int edges) {
  IdleEdgesResult result;
  result.edges = edges;
  absl::StatusOr<uint64_t> before = Rss(service_pid);
  if (!before.ok()) return before.status();
  result.rss_before_bytes = *before;

  grpc::CompletionQueue cq;
  std::vector<std::unique_ptr<Subscriber>> subs;
  v1::WatchInvalidationsRequest request;
  for (int i = 0; i < edges; ++i) {
    grpc::ChannelArguments args;
    // One TCP connection (one server transport) per edge, as N edge pods
    // have: without it, channels to one target share a connection.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    auto s = std::make_unique<Subscriber>();
    s->stub = v1::ShortenService::NewStub(
        grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
    s->ctx.AddMetadata("authorization", absl::StrCat("Bearer ", api_key));
    request.set_subscriber(absl::StrCat("idle-edge-", i));
    s->reader = s->stub->PrepareAsyncWatchInvalidations(&s->ctx, request, &cq);
    s->reader->StartCall(s.get());
    s->reader->Read(&s->first, s.get());
    subs.push_back(std::move(s));
  }
  const bool opened =
      AwaitAll(cq, 2 * edges, std::chrono::system_clock::now() + std::chrono::seconds(10));
  if (opened) {
    // Whatever the service allocates lazily after a subscription settles.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    absl::StatusOr<uint64_t> open = Rss(service_pid);
    if (open.ok()) result.rss_open_bytes = *open;
  }
  // Cancelling ends every stream, also those whose operations are still
  // pending when opening failed; the queue is drained before it goes.
  for (auto& s : subs) {
    s->ctx.TryCancel();
    s->reader->Finish(&s->status, s.get());
  }
  cq.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (cq.Next(&tag, &ok)) {
  }
  if (!opened) {
    return absl::UnavailableError(
        absl::StrCat("idle edges: ", edges, " WatchInvalidations streams to ", target,
                     " not all acknowledged within 10 s (--max_invalidation_subscribers?)"));
  }
  if (result.rss_open_bytes == 0) return absl::NotFoundError("idle edges: the service exited");
  return result;
}

}  // namespace shortener::bench
