#include "tests/bench/edge/link_loader.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "lib/grpcutil/api_key_channel.h"
#include "shortener/v1/shortener.grpc.pb.h"

namespace shortener::bench::edge {

std::string BenchUrl(const std::string& tag, int64_t index) {
  // About the length of a campaign link sent by SMS.
  return absl::StrCat(
      "https://www.example.com/campaign/spring-sale/landing?utm_source=sms&utm_medium=", tag,
      "&id=", index);
}

absl::StatusOr<std::vector<std::string>> CreateLinks(const LinkLoadOptions& o) {
  std::vector<std::string> codes(static_cast<size_t>(o.count));
  std::atomic<int64_t> next_batch{0};
  const int64_t batches = (o.count + o.batch_size - 1) / o.batch_size;
  absl::Mutex mu;
  absl::Status first_error;
  auto worker = [&] {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection of its own
    args.SetMaxReceiveMessageSize(64 << 20);
    auto channel = grpcutil::CreateChannelWithApiKey(o.target, grpc::InsecureChannelCredentials(),
                                                     args, o.api_key);
    auto stub = v1::ShortenService::NewStub(channel);
    while (true) {
      const int64_t b = next_batch.fetch_add(1);
      if (b >= batches) return;
      {
        absl::MutexLock lock(&mu);
        if (!first_error.ok()) return;
      }
      const int64_t begin = b * o.batch_size;
      const int64_t end = std::min(o.count, begin + o.batch_size);
      v1::BatchShortenRequest request;
      for (int64_t i = begin; i < end; ++i) {
        v1::ShortenRequest* item = request.add_requests();
        item->set_long_url(BenchUrl(o.tag, i));
        item->set_force_new(true);
      }
      v1::BatchShortenResponse response;
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
      grpc::Status st = stub->BatchShorten(&ctx, request, &response);
      absl::Status error;
      if (!st.ok()) {
        error = absl::UnavailableError(absl::StrCat("BatchShorten: ", st.error_message()));
      } else if (response.results_size() != end - begin) {
        error = absl::InternalError("BatchShorten: wrong result count");
      } else {
        for (int64_t i = begin; i < end && error.ok(); ++i) {
          const v1::BatchShortenResult& r = response.results(static_cast<int>(i - begin));
          if (r.has_error()) {
            error = absl::InternalError(absl::StrCat("BatchShorten item: ", r.error().message()));
          } else {
            codes[static_cast<size_t>(i)] = r.response().code();
          }
        }
      }
      if (!error.ok()) {
        absl::MutexLock lock(&mu);
        if (first_error.ok()) first_error = error;
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < o.inflight; ++i) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  if (!first_error.ok()) return first_error;
  return codes;
}

}  // namespace shortener::bench::edge
