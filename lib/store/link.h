// The link record as the store sees it: plain data, no proto types.
#ifndef SHORTENER_LIB_STORE_LINK_H_
#define SHORTENER_LIB_STORE_LINK_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "lib/store/link_labels.h"

namespace shortener::store {

struct Link {
  int64_t id = 0;
  std::optional<std::string> alias;  // set for custom aliases
  std::string long_url;              // normalised
  std::string owner;
  int redirect_status = 302;  // 301, 302, 307 or 308
  absl::Time create_time = absl::UnixEpoch();
  std::optional<absl::Time> expire_time;
  std::optional<absl::Time> revoke_time;
  // Budget of human clicks; nullopt = unlimited.
  std::optional<int64_t> max_clicks;
  // When the click store counted the max_clicks-th human click; set only
  // with max_clicks. From then on the link is expired (IsExhausted).
  std::optional<absl::Time> clicks_exhausted_time;
  // The labels it was created with (link_labels.h); never change.
  Labels labels;
};

// A link to create. The id is allocated by the caller (segment allocator);
// the store never invents ids.
struct NewLink {
  int64_t id = 0;
  std::optional<std::string> alias;
  std::string long_url;         // normalised
  std::string long_url_sha256;  // 32 raw bytes of SHA-256(long_url)
  std::string owner;
  int redirect_status = 302;
  absl::Time create_time = absl::UnixEpoch();
  std::optional<absl::Time> expire_time;
  // Budget of human clicks (> 0); nullopt = unlimited. An item with a budget
  // never dedupes and is never a dedupe target: each budget is its own.
  std::optional<int64_t> max_clicks;
  // When true, an existing live link (not revoked, not expired at
  // create_time) of the same owner and URL is returned instead of a new one.
  // false = force_new. Ignored for custom aliases (an alias always asks for
  // a new link). Details: LinkStore::CreateLinks.
  bool dedupe = true;
  // Idempotency key: a retry with the same (owner, request_id) returns the
  // link the first call created, whatever `dedupe` says.
  std::optional<std::string> request_id;
  // Labels (ValidateLabels). Part of the dedupe key: an item dedupes only to
  // a link of the same owner, URL and labels.
  Labels labels;
};

struct CreateOutcome {
  Link link;
  bool created = false;  // false when an existing link was returned
};

}  // namespace shortener::store

#endif  // SHORTENER_LIB_STORE_LINK_H_
