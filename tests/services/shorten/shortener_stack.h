// ShortenerStack: a Shortener over in-memory parts, for the unit tests of
// what sits on it (LinkStats, ShortenServiceImpl): codec, URL policy,
// in-memory segment source, the in-memory link store behind a
// FaultyLinkStore (`link_faults` fails, slows or holds its calls), group
// committer, read batcher and blocking pool, and a ManualClock at kStackNow
// for link times. The options size the bounded queues, so that a test can
// fill them.
//
// Thread safety: as its parts; the helpers are for the test's thread.
#ifndef SHORTENER_TESTS_SERVICES_SHORTEN_SHORTENER_STACK_H_
#define SHORTENER_TESTS_SERVICES_SHORTEN_SHORTENER_STACK_H_

#include <catch2/catch.hpp>
#include <future>
#include <memory>
#include <string>
#include <utility>

#include "lib/auth/principal.h"
#include "lib/codec/short_codec.h"
#include "lib/common/clock.h"
#include "lib/common/thread_pool.h"
#include "lib/idalloc/segment_id_allocator.h"
#include "lib/idalloc/segment_source.h"
#include "lib/store/group_committer.h"
#include "lib/store/in_memory_link_store.h"
#include "lib/store/read_batcher.h"
#include "lib/url/url_policy.h"
#include "services/shorten/shortener.h"
#include "tests/support/fault_plan.h"
#include "tests/support/faulty_link_store.h"
#include "tests/support/status_matchers.h"

namespace shortener::service {

// 2027-01-15T08:00:00Z: the stack's clock at start, on an hour boundary.
inline const absl::Time kStackNow = absl::FromUnixSeconds(1800000000);

struct ShortenerStackOptions {
  store::ReadBatchOptions reads;
  ThreadPoolOptions blocking_pool{"blocking pool", 2, 256};
};

class ShortenerStack {
 public:
  explicit ShortenerStack(ShortenerStackOptions options = {}) {
    codec::CodecOptions codec_options;
    codec_options.secret = std::string(32, 'k');
    codec = std::make_unique<codec::ShortCodec>(*codec::ShortCodec::Create(codec_options));
    url::UrlPolicyOptions url_options;
    url_options.short_domains = {"sho.rt"};
    policy = std::make_unique<url::UrlPolicy>(url_options);
    source.AddSequence("links", 1);
    ids = std::make_unique<idalloc::SegmentIdAllocator>(&source, idalloc::IdAllocatorOptions{});
    committer = std::make_unique<store::GroupCommitter>(&links, store::GroupCommitOptions{});
    reads = std::make_unique<store::ReadBatcher>(&links, options.reads);
    blocking_pool = std::make_unique<ThreadPool>(options.blocking_pool);
    ShortenerOptions shortener_options;
    shortener_options.base_url = "https://sho.rt/";
    shortener =
        std::make_unique<Shortener>(codec.get(), policy.get(), ids.get(), &links, committer.get(),
                                    reads.get(), blocking_pool.get(), shortener_options, clock);
  }
  // Lets held calls go, then runs what the pool and the batchers have
  // queued while everything they use still exists.
  ~ShortenerStack() {
    link_faults.OpenGate();
    blocking_pool.reset();
    committer.reset();
    reads.reset();
  }
  ShortenerStack(const ShortenerStack&) = delete;
  ShortenerStack& operator=(const ShortenerStack&) = delete;

  // A new link to `url` (with `alias` when not empty) owned by `owner`'s
  // tenant ("anonymous" for null), through Shortener::Shorten.
  LinkView Shorten(const std::string& url, std::shared_ptr<const auth::Principal> owner = nullptr,
                   const std::string& alias = "") {
    ShortenInput in;
    in.long_url = url;
    in.custom_alias = alias;
    in.caller = std::move(owner);
    std::promise<absl::StatusOr<ShortenOutput>> p;
    shortener->Shorten(in, absl::Now() + absl::Seconds(5),
                       [&p](absl::StatusOr<ShortenOutput> out) { p.set_value(std::move(out)); });
    absl::StatusOr<ShortenOutput> out = p.get_future().get();
    REQUIRE_THAT(out, testing::IsOk());
    return out->link;
  }

  ManualClock clock{kStackNow};
  std::unique_ptr<codec::ShortCodec> codec;
  std::unique_ptr<url::UrlPolicy> policy;
  idalloc::InMemorySegmentSource source;
  std::unique_ptr<idalloc::SegmentIdAllocator> ids;
  store::InMemoryLinkStore link_memory;
  testing::FaultPlan link_faults;
  testing::FaultyLinkStore links{&link_memory, &link_faults};
  std::unique_ptr<store::GroupCommitter> committer;
  std::unique_ptr<store::ReadBatcher> reads;
  std::unique_ptr<ThreadPool> blocking_pool;
  std::unique_ptr<Shortener> shortener;
};

}  // namespace shortener::service

#endif  // SHORTENER_TESTS_SERVICES_SHORTEN_SHORTENER_STACK_H_
