// The per-item rules of LinkStore::CreateLinks as one pure function, shared
// by every LinkStore so that all of them implement exactly the same
// semantics. A store:
//   1. collects the keys the batch mentions (CollectKeys),
//   2. reads what it holds for them (a KeyState),
//   3. calls PlanCreate, which decides every item as if the items ran one
//      after the other and lists the rows to write,
//   4. writes those rows atomically, or, if a concurrent writer changed one of
//      the keys between 2 and 4, writes nothing and starts again at 2.
//
// Stateless; thread-compatible.
#ifndef SHORTENER_LIB_STORE_CREATE_PLANNER_H_
#define SHORTENER_LIB_STORE_CREATE_PLANNER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "lib/store/link.h"

namespace shortener::store {

// (owner, request_id) of an idempotency key.
using OwnerKey = std::pair<std::string, std::string>;

// The dedupe key of (owner, long_url_sha256): the first 8 bytes, big-endian,
// of SHA-256(owner || 0x00 || long_url_sha256), as a signed 64-bit integer
// (migration 0006 computes the same in SQL). One bigint instead of the
// (text, 32-byte bytea) pair makes the dedupe index ~3x smaller and its
// inserts ~2x cheaper. Two different (owner, URL) pairs may share a key
// (~1 in 10^9 at 10^10 links): the planner checks the owner and the URL hash
// of the link a key names, and a link whose key is held by another
// (owner, URL) is created without dedupe instead of being confused with it.
//
// With labels, the hashed text goes on with each label in key order, as
// key || 0x00 || value || 0x00 (neither holds a NUL byte): a link without
// labels keeps the key it always had (rows written before labels existed
// still de-duplicate), and the same URL with other labels gets another key.
int64_t DedupeKey(absl::string_view owner, absl::string_view long_url_sha256,
                  const Labels& labels = {});

// Whether `link` may be returned by dedupe for an item created at `at`: not
// revoked, its click budget not exhausted, and not expired at `at`.
bool IsLiveAt(const Link& link, absl::Time at);

// Whether item `link` takes part in dedupe (returns an existing link, becomes
// the key's target): dedupe set, no alias, no click budget.
bool Dedupes(const NewLink& link);

// Whether PostgreSQL can store `s` as text: valid UTF-8 without NUL bytes.
bool IsStorableText(absl::string_view s);

// OK, or INVALID_ARGUMENT naming the field: long_url_sha256 not 32 bytes,
// redirect_status not 301/302/307/308, text (long_url, owner, alias,
// request_id) not valid UTF-8 or holding a NUL byte (PostgreSQL stores
// neither), max_clicks set but not positive, labels breaking
// ValidateLabels.
absl::Status ValidateNewLink(const NewLink& link);

// The keys of the valid items of a batch, each once, sorted.
struct BatchKeys {
  std::vector<OwnerKey> requests;  // (owner, request_id) of items with one
  std::vector<int64_t> dedupe;     // DedupeKey of items that dedupe
  std::vector<std::string> aliases;
};
BatchKeys CollectKeys(absl::Span<const NewLink> links);

// What a store holds for the keys of a batch (absent key: no row).
struct StoredRequest {
  std::string long_url_sha256;
  std::optional<Link> link;  // nullopt: the row names a link that is missing
};
struct StoredDedupe {
  int64_t link_id = 0;
  std::optional<Link> link;     // nullopt: missing link (treated as dead)
  std::string long_url_sha256;  // the link's; empty when it is missing
};
struct KeyState {
  absl::flat_hash_map<OwnerKey, StoredRequest> requests;
  absl::flat_hash_map<int64_t, StoredDedupe> dedupe;  // by DedupeKey
  absl::flat_hash_set<std::string> aliases;           // taken
};

// A shorten_requests row to insert.
struct RequestWrite {
  OwnerKey key;
  std::string long_url_sha256;
  int64_t link_id = 0;
};
// New link `link_id` becomes the dedupe target of `key` (links.url_key),
// taking the key over from the dead link `replaces` when set.
struct DedupeWrite {
  int64_t key = 0;  // DedupeKey
  int64_t link_id = 0;
  std::optional<int64_t> replaces;
};

struct CreatePlan {
  // Result i belongs to item i.
  std::vector<absl::StatusOr<CreateOutcome>> results;
  // Items that get a new links row (results[i]->link, created=true), in batch
  // order; the ones with an alias also get a link_aliases row.
  std::vector<size_t> new_links;
  std::vector<RequestWrite> requests;  // sorted by key
  std::vector<DedupeWrite> dedupe;     // sorted by key
};

// Decides every item of `links` against `state` (which it updates as it goes,
// so later items see earlier ones). Rules per item, in order:
//  1. invalid -> INVALID_ARGUMENT (see ValidateNewLink);
//  2. (owner, request_id) known: same URL hash -> its link, created=false
//     (FAILED_PRECONDITION when that link was deleted); other hash ->
//     ALREADY_EXISTS "request_id \"r\" was already used with a different
//     long_url";
//  3. alias taken -> ALREADY_EXISTS "custom_alias \"x\" is already taken";
//  4. Dedupes(item), and the dedupe key names a link of the same owner,
//     URL hash and labels that is live at the item's create_time -> that link,
//     created=false;
//  5. otherwise a new link (created=true). When Dedupes(item) it becomes
//     the key's dedupe target, unless the key names a link of another
//     (owner, URL hash, labels) (a 64-bit key collision: that link keeps
//     the key);
//     links with an alias, a click budget or made with dedupe=false never
//     are.
// Steps 4 and 5 record (owner, request_id) -> the returned link.
CreatePlan PlanCreate(absl::Span<const NewLink> links, KeyState state);

}  // namespace shortener::store

#endif  // SHORTENER_LIB_STORE_CREATE_PLANNER_H_
