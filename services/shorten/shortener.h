// Shortener: the domain logic of shorten-service, free of gRPC and proto
// types. It validates input, allocates ids, builds codes, and talks to the
// store (writes through the group committer, reads directly).
//
// Thread-safe. Shorten/BatchShorten and the callback forms of Resolve,
// BatchResolve and GetLink never block the calling thread: they queue and complete through a
// callback (from a committer thread, a read batcher thread, or
// `blocking_pool` when they had to wait for an id segment or validate a
// large batch). Generated codes and aliases are resolved through the read
// batcher, so concurrent look-ups share one query per kind. Revoke,
// LinkIdOf(s) and the blocking form of Resolve block; call them off gRPC
// reactor threads.
//
// Every queue behind it is bounded (the blocking pool, the read batcher, the
// group committer): a call that finds one full fails RESOURCE_EXHAUSTED
// naming it, through `done` like any other error.
#ifndef SHORTENER_SERVICES_SHORTEN_SHORTENER_H_
#define SHORTENER_SERVICES_SHORTEN_SHORTENER_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/auth/principal.h"
#include "lib/codec/short_codec.h"
#include "lib/common/clock.h"
#include "lib/common/thread_pool.h"
#include "lib/idalloc/segment_id_allocator.h"
#include "lib/store/group_committer.h"
#include "lib/store/link_store.h"
#include "lib/store/read_batcher.h"
#include "lib/url/url_policy.h"

namespace shortener::service {

enum class LinkState { kActive, kRevoked, kExpired };

struct ShortenInput {
  std::string long_url;
  std::string custom_alias;  // empty: generate a code
  std::optional<absl::Time> expire_time;
  int redirect_status = 302;  // 301, 302, 307 or 308
  bool force_new = false;
  std::string request_id;  // empty: no idempotency key
  int64_t max_clicks = 0;  // human click budget; 0: unlimited
  store::Labels labels;    // store::ValidateLabels' rule; part of the dedupe key
  // Who asks: the link is owned by caller->tenant, and the target host must
  // be in caller->allowed_domains (PERMISSION_DENIED naming the host and the
  // key otherwise). Null (tests, tools): owner ShortenerOptions::owner, any
  // domain.
  std::shared_ptr<const auth::Principal> caller;
};

// A stored link as clients see it.
struct LinkView {
  std::string code;
  std::string short_url;
  LinkState state = LinkState::kActive;
  store::Link link;
};

// UpdateLink's request, decoded: the fields to change (unset: unchanged).
struct LinkEdit {
  std::string code;
  std::optional<std::string> long_url;                   // "" is refused
  std::optional<std::optional<absl::Time>> expire_time;  // inner nullopt: never
  std::optional<int> redirect_status;                    // 301, 302, 307 or 308
  std::optional<int64_t> max_clicks;                     // 0: unlimited
  std::optional<store::Labels> labels;
};

struct ShortenOutput {
  bool created = false;
  LinkView link;
};

struct ShortenerOptions {
  std::string base_url;             // short_url = base_url + code
  std::string owner = "anonymous";  // owner of links made without a caller
  size_t max_batch_size = 1000;     // BatchShorten items, BatchResolve codes
  size_t max_request_id_length = 128;
  // How long Shorten may wait for an id segment when none is leased.
  absl::Duration id_wait = absl::Seconds(2);
};

class Shortener {
 public:
  // Dependencies outlive the Shortener. `clock` gives link times (create,
  // expiry checks, revocation); deadlines always use the real clock.
  Shortener(const codec::ShortCodec* codec, const url::UrlPolicy* url_policy,
            idalloc::SegmentIdAllocator* ids, store::LinkStore* store,
            store::GroupCommitter* committer, store::ReadBatcher* reads, ThreadPool* blocking_pool,
            ShortenerOptions options, const Clock& clock = SystemClock());

  using ShortenDone = std::function<void(absl::StatusOr<ShortenOutput>)>;
  using BatchShortenDone =
      std::function<void(absl::StatusOr<std::vector<absl::StatusOr<ShortenOutput>>>)>;

  // Errors (through `done`): INVALID_ARGUMENT for bad input, ALREADY_EXISTS
  // (alias taken, request_id reused with another URL), UNAVAILABLE (no id
  // segment before `deadline`, database down), RESOURCE_EXHAUSTED (a full
  // queue). `done` may run on the calling thread (validation errors,
  // refusals) or on a committer thread.
  void Shorten(const ShortenInput& input, absl::Time deadline, ShortenDone done);

  // One result per item, in order; a bad item fails only itself. An item
  // that holds an error instead of an input (the caller could not decode
  // it) has that error as its result, as it is: it is neither validated nor
  // given an id. INVALID_ARGUMENT for the whole call when there are 0 or
  // more than max_batch_size items.
  void BatchShorten(std::vector<absl::StatusOr<ShortenInput>> items, absl::Time deadline,
                    BatchShortenDone done);

  using ResolveDone = std::function<void(absl::StatusOr<LinkView>)>;

  // INVALID_ARGUMENT for a string that is neither a code nor an alias;
  // NOT_FOUND for unknown ones; UNAVAILABLE (and other store errors) when
  // the database fails; RESOURCE_EXHAUSTED when the read batcher is full.
  // Revoked and expired links are returned with their state, not as errors.
  // `done` runs on the calling thread (malformed codes, wrong check
  // characters, refusals) or on a read batcher thread.
  void Resolve(absl::string_view code, ResolveDone done);
  // Resolve for the link's owner: another tenant's link is NOT_FOUND, with
  // the very message of a code that does not exist, unless `caller` is an
  // admin (or null: tests, tools). `caller` must stay valid until `done`.
  void GetLink(absl::string_view code, const auth::Principal* caller, ResolveDone done);
  using BatchResolveDone =
      std::function<void(absl::StatusOr<std::vector<absl::StatusOr<LinkView>>>)>;
  // Resolve of every code, one result per code in order; a code that fails
  // fails only itself. INVALID_ARGUMENT for the whole call when there are 0
  // or more than max_batch_size codes. Every look-up is queued before any
  // is answered, so the codes of one call share the read batcher's queries.
  // `done` runs once, on the calling thread or a read batcher thread.
  void BatchResolve(std::vector<std::string> codes, BatchResolveDone done);
  // Resolve, waiting for the answer: for tests and tools. Never call it on a
  // read batcher thread (it would wait for a reader).
  absl::StatusOr<LinkView> Resolve(absl::string_view code);

  // Marks the link revoked (idempotent) and returns it. The store publishes
  // the link's code as an invalidation when this call is the one that
  // revoked it. Errors as Resolve; ownership as GetLink (another tenant's
  // link is NOT_FOUND and stays untouched).
  absl::StatusOr<LinkView> Revoke(absl::string_view code, const auth::Principal* caller = nullptr);
  // Changes the link `edit.code` names (LinkStore::UpdateLink: history,
  // invalidation, dedupe key), checked as Shorten checks a new link: the
  // URL policy and `caller`'s domain list for a new long_url
  // (INVALID_ARGUMENT "long_url: ...", PERMISSION_DENIED), an expire_time
  // in the future, a redirect status, max_clicks >= 0, the label rule.
  // The history names `caller`'s key ("name (api key 7)"; "shortener" for
  // a null caller: tests, tools). Ownership and errors otherwise as Revoke;
  // FAILED_PRECONDITION for a revoked link. Blocks: call it off reactor and
  // read batcher threads.
  absl::StatusOr<LinkView> UpdateLink(const LinkEdit& edit,
                                      const auth::Principal* caller = nullptr);
  // The link `code` names, if `caller` may change it: errors and ownership
  // as Revoke (another tenant's link is NOT_FOUND, unless `caller` is an
  // admin or null). Blocks.
  absl::StatusOr<store::Link> OwnedLink(absl::string_view code, const auth::Principal* caller);
  // Who made a change, as link histories and deletions record it:
  // "keyname (api key 7)", or "shortener" for a null caller (tests, tools).
  static std::string ActorOf(const auth::Principal* caller);
  // The link's history (LinkStore::LinkHistory), for GetLink's FULL view.
  // Blocks.
  absl::StatusOr<std::vector<store::LinkChange>> LinkHistory(int64_t id);
  // The link id `code` names, for click statistics: a generated code is
  // decoded (no database look-up: the edge only reports codes it redirected),
  // an alias is looked up through the read batcher, so this blocks; call it
  // off gRPC reactor threads and read batcher threads. Errors as Resolve.
  absl::StatusOr<int64_t> LinkIdOf(absl::string_view code);
  // LinkIdOf for many codes at once: the aliases among them are all queued
  // before waiting, so they share the read batcher's queries (a click batch
  // with 50 distinct aliases costs one statement, not 50). Result i is
  // LinkIdOf(codes[i]).
  std::vector<absl::StatusOr<int64_t>> LinkIdsOf(absl::Span<const std::string> codes);
  // The id of label key=value of `tenant` (LinkStore::FindLabelId: NOT_FOUND
  // when no link of the tenant ever had it). Blocks (a database read).
  absl::StatusOr<int64_t> FindLabelId(const std::string& tenant, const std::string& key,
                                      const std::string& value);
  // The owner of links made without a caller (ShortenerOptions::owner).
  const std::string& default_owner() const { return options_.owner; }

  // The tenant whose links (or labels) `caller` reads when a request names
  // `asked` ("": its own): its own tenant, or any one for an admin (and for
  // a null caller: tests, tools; "" is then default_owner()).
  // PERMISSION_DENIED naming the key and its tenant when a key without
  // admin names another tenant. Used by every read that takes a `tenant`
  // field (GetClickStats by label, ListLinks).
  absl::StatusOr<std::string> TenantFor(const auth::Principal* caller,
                                        const std::string& asked) const;

  // By value: a view owns its link, and most callers hand over one they no
  // longer need (a 1000-link batch would otherwise copy every URL again).
  // INTERNAL when a generated code cannot be made for its id.
  absl::StatusOr<LinkView> ToView(store::Link link) const;

 private:
  // Validates `input` and turns it into a row to create, with an id taken
  // from the allocator, waiting for a segment until `id_deadline` at most
  // (absl::InfinitePast(): never wait).
  absl::StatusOr<store::NewLink> Prepare(const ShortenInput& input, absl::Time id_deadline);
  absl::Time IdDeadline(absl::Time call_deadline) const;
  void PrepareBatch(const std::vector<absl::StatusOr<ShortenInput>>& items, absl::Time deadline,
                    BatchShortenDone done);
  absl::StatusOr<ShortenOutput> ToOutput(absl::StatusOr<store::CreateOutcome> outcome) const;
  // The view of `link`, whose code is known to be `code`.
  LinkView ToView(store::Link link, std::string code) const;
  // The id a generated code names, or nullopt for an alias. INVALID_ARGUMENT
  // for neither; NOT_FOUND for a generated code that fails its check.
  absl::StatusOr<std::optional<int64_t>> ParseCode(absl::string_view code) const;
  // The store's answer for `code` as clients see it: every "no such link" is
  // the same NOT_FOUND, and a link with an alias is not found by id.
  absl::StatusOr<store::Link> Found(absl::string_view code, absl::StatusOr<store::Link> link) const;
  absl::StatusOr<store::Link> Lookup(absl::string_view code);
  // `link` unless `caller` may not see it: then NOT_FOUND as Found gives.
  absl::StatusOr<store::Link> Visible(absl::string_view code, const auth::Principal* caller,
                                      absl::StatusOr<store::Link> link) const;

  const codec::ShortCodec* codec_;
  const url::UrlPolicy* url_policy_;
  idalloc::SegmentIdAllocator* ids_;
  store::LinkStore* store_;
  store::GroupCommitter* committer_;
  store::ReadBatcher* reads_;
  ThreadPool* blocking_pool_;
  ShortenerOptions options_;
  const Clock* clock_;
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_SHORTENER_H_
