// Changing a link after it was made (UpdateLink, issue 21 item 2): what a
// change asks for, what the history keeps of it, and the rules every
// LinkStore applies, owned here so that the stores agree.
//
// Thread safety: plain values and pure functions.
#ifndef SHORTENER_LIB_STORE_LINK_UPDATE_H_
#define SHORTENER_LIB_STORE_LINK_UPDATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "lib/store/link.h"

namespace shortener::store {

// The fields to set; an unset optional leaves its field as it is.
struct LinkUpdate {
  int64_t id = 0;
  // The link's code as clients and edges know it: published as an
  // invalidation when the link changes (as Revoke does).
  std::string code;
  std::string actor;                                     // who, for the history
  absl::Time when = absl::UnixEpoch();                   // the change's time
  std::optional<std::string> long_url;                   // normalised
  std::optional<std::string> long_url_sha256;            // 32 raw bytes; set with long_url
  std::optional<std::optional<absl::Time>> expire_time;  // inner nullopt: never
  std::optional<int> redirect_status;                    // 301, 302, 307, 308
  std::optional<std::optional<int64_t>> max_clicks;      // inner nullopt: unlimited
  std::optional<Labels> labels;
};

// A field's value before and after, as text (FieldText).
struct FieldChange {
  std::string field;  // long_url, expire_time, redirect_type, max_clicks, labels
  std::string old_value;
  std::string new_value;

  friend bool operator==(const FieldChange& a, const FieldChange& b) {
    return a.field == b.field && a.old_value == b.old_value && a.new_value == b.new_value;
  }
};

// One UpdateLink that changed something.
struct LinkChange {
  absl::Time time = absl::UnixEpoch();
  std::string actor;
  std::vector<FieldChange> fields;
};

// The checks every store applies to an update before anything is written:
// INVALID_ARGUMENT naming the field for a long_url without its 32-byte
// hash (or a hash without a URL), text that is not storable (UTF-8 without
// NUL), a redirect status other than 301/302/307/308, a max_clicks that is
// not positive, labels that break the label rule (ValidateLabels); an
// empty actor or code.
absl::Status ValidateLinkUpdate(const LinkUpdate& update);

// `link` with `update` applied (the fields it sets), but for the click
// budget's exhaustion, which the store judges (it knows the clicks).
Link ApplyUpdate(Link link, const LinkUpdate& update);

// The fields whose value differs between `before` and `after`, in the order
// long_url, expire_time, redirect_type, max_clicks, labels, as text:
// long_url the URL; expire_time RFC 3339 in UTC or "" (never);
// redirect_type "301".."308"; max_clicks the number or "" (unlimited);
// labels "k=v,k2=v2" in key order.
std::vector<FieldChange> DiffLink(const Link& before, const Link& after);

// The click budget after a change: whether the link is exhausted with
// `human_clicks` counted and its (new) max_clicks, and since when:
// nullopt when it has no budget or has not reached it; its old
// clicks_exhausted_time when it was exhausted already; `when` otherwise.
std::optional<absl::Time> ExhaustedAfter(const Link& updated, int64_t human_clicks,
                                         absl::Time when);

// Whether a link takes part in de-duplication after a change: it did
// (held its dedupe key) and has no click budget (budgets never dedupe).
// Such a link's key follows its URL and labels (DedupeKey).
bool KeepsDedupe(bool held_key, const Link& updated);

}  // namespace shortener::store

#endif  // SHORTENER_LIB_STORE_LINK_UPDATE_H_
