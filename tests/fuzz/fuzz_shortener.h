// The Shortener the service-side fuzz targets drive (batch_shorten_request,
// update_link_request): a real codec, URL policy and tenant key made once,
// and an in-memory store, id source, group committer and read batcher made
// fresh for each input, so that no result depends on an earlier input.
#ifndef SHORTENER_TESTS_FUZZ_FUZZ_SHORTENER_H_
#define SHORTENER_TESTS_FUZZ_FUZZ_SHORTENER_H_

#include <memory>
#include <string>

#include "absl/time/time.h"
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

namespace shortener::service::fuzzing {

inline constexpr char kBaseUrl[] = "https://sho.rt/";

// Immutable pieces, made once: key derivation costs far more than a batch.
struct Shared {
  std::unique_ptr<codec::ShortCodec> codec;
  std::unique_ptr<url::UrlPolicy> policy;
  std::shared_ptr<const auth::Principal> tenant;
};

inline const Shared& GetShared() {
  static const Shared* shared = [] {
    auto* s = new Shared;
    codec::CodecOptions codec_options;
    codec_options.secret = std::string(32, 's');
    s->codec = std::make_unique<codec::ShortCodec>(*codec::ShortCodec::Create(codec_options));
    url::UrlPolicyOptions url_options;
    url_options.short_domains = {"sho.rt"};
    url_options.denied_domains = {"evil.example"};
    s->policy = std::make_unique<url::UrlPolicy>(url_options);
    auto tenant = std::make_shared<auth::Principal>();
    tenant->key_id = 7;
    tenant->key_name = "acme-campaigns";
    tenant->tenant = "acme";
    tenant->scopes = auth::ScopeSet{auth::Scope::kShorten};
    tenant->allowed_domains = *auth::DomainAllowlist::Parse("acme.com,*.acme.com");
    s->tenant = std::move(tenant);
    return s;
  }();
  return *shared;
}

// What a Shortener needs, in memory, fresh for each input.
struct Service {
  Service()
      : ids(&source, idalloc::IdAllocatorOptions{}),
        committer(&store, store::GroupCommitOptions{}),
        reads(&store, store::ReadBatchOptions{}),
        shortener(GetShared().codec.get(), GetShared().policy.get(), &ids, &store, &committer,
                  &reads, &pool, Options(), clock) {}

  static ShortenerOptions Options() {
    ShortenerOptions options;
    options.base_url = kBaseUrl;
    return options;
  }

  ManualClock clock{absl::FromUnixSeconds(1800000000)};
  idalloc::InMemorySegmentSource source;
  idalloc::SegmentIdAllocator ids;
  store::InMemoryLinkStore store;
  store::GroupCommitter committer;
  store::ReadBatcher reads;
  ThreadPool pool{1};
  Shortener shortener;
};

}  // namespace shortener::service::fuzzing

#endif  // SHORTENER_TESTS_FUZZ_FUZZ_SHORTENER_H_
