#include "services/shorten/shortener.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/codec/alias.h"
#include "lib/common/redirect_status.h"
#include "lib/common/sha256.h"
#include "lib/common/status_macros.h"
#include "lib/common/utf8.h"
#include "lib/url/host_name.h"

namespace shortener::service {
namespace {

absl::Status ValidateRequestId(const std::string& id, size_t max_length) {
  if (id.size() > max_length) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request_id: is ", id.size(), " bytes, longer than the limit of ", max_length));
  }
  for (unsigned char c : id) {
    if (utf8::IsControl(c)) {
      return absl::InvalidArgumentError("request_id: contains a control character");
    }
  }
  return absl::OkStatus();
}

// PERMISSION_DENIED unless the caller's key may shorten to the URL's host.
absl::Status CheckTargetDomain(absl::string_view normalized_url, const auth::Principal& caller) {
  if (caller.allowed_domains.empty()) return absl::OkStatus();
  // Canonical, as UrlPolicy normalised it; an IPv6 literal keeps its
  // brackets (and so never matches a domain list).
  absl::string_view host = url::HostOfUrl(normalized_url);
  if (caller.allowed_domains.Allows(host)) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      "long_url: host \"", absl::CHexEscape(host), "\" is not among the domains api key \"",
      caller.key_name, "\" may shorten to (", caller.allowed_domains.ToString(), ")"));
}

}  // namespace

Shortener::Shortener(const codec::ShortCodec* codec, const url::UrlPolicy* url_policy,
                     idalloc::SegmentIdAllocator* ids, store::LinkStore* store,
                     store::GroupCommitter* committer, store::ReadBatcher* reads,
                     ThreadPool* blocking_pool, ShortenerOptions options, const Clock& clock)
    : codec_(codec),
      url_policy_(url_policy),
      ids_(ids),
      store_(store),
      committer_(committer),
      reads_(reads),
      blocking_pool_(blocking_pool),
      options_(std::move(options)),
      clock_(&clock) {}

absl::Time Shortener::IdDeadline(absl::Time call_deadline) const {
  return std::min(call_deadline, absl::Now() + options_.id_wait);
}

absl::StatusOr<store::NewLink> Shortener::Prepare(const ShortenInput& input,
                                                  absl::Time id_deadline) {
  store::NewLink link;
  if (input.long_url.empty()) {
    return absl::InvalidArgumentError("long_url: is required");
  }
  SHORTENER_ASSIGN_OR_RETURN(link.long_url, url_policy_->Normalize(input.long_url));
  if (input.caller != nullptr) {
    SHORTENER_RETURN_IF_ERROR(CheckTargetDomain(link.long_url, *input.caller));
  }
  if (!input.custom_alias.empty()) {
    SHORTENER_RETURN_IF_ERROR(codec::ValidateAlias(input.custom_alias, *codec_));
    link.alias = input.custom_alias;
  }
  if (!IsRedirectStatus(input.redirect_status)) {
    return absl::InvalidArgumentError(absl::StrCat("redirect_type: status ", input.redirect_status,
                                                   " is not one of 301, 302, 307, 308"));
  }
  link.create_time = clock_->Now();
  if (input.expire_time.has_value() && *input.expire_time <= link.create_time) {
    return absl::InvalidArgumentError(
        absl::StrCat("expire_time: ", absl::FormatTime(*input.expire_time, absl::UTCTimeZone()),
                     " is not in the future"));
  }
  SHORTENER_RETURN_IF_ERROR(ValidateRequestId(input.request_id, options_.max_request_id_length));
  if (input.max_clicks < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_clicks: must be positive (or 0 for unlimited), got ", input.max_clicks));
  }
  if (input.max_clicks > 0) link.max_clicks = input.max_clicks;
  SHORTENER_RETURN_IF_ERROR(store::ValidateLabels(input.labels));
  link.labels = input.labels;
  link.expire_time = input.expire_time;
  link.redirect_status = input.redirect_status;
  link.long_url_sha256 = Sha256String(link.long_url);
  link.owner = input.caller != nullptr ? input.caller->tenant : options_.owner;
  // Only plain requests (no alias, no expiry, no click budget, default 302)
  // are answered with an existing link: a vanity alias is a deliberate new
  // name, a budget is the caller's own (sharing one would spend it twice),
  // and a request with its own expiry or redirect type must not silently get
  // a link with other settings.
  link.dedupe = !input.force_new && !link.alias.has_value() && !link.expire_time.has_value() &&
                !link.max_clicks.has_value() && link.redirect_status == 302;
  if (!input.request_id.empty()) link.request_id = input.request_id;
  // Ids are allocated last so that invalid requests do not burn them.
  SHORTENER_ASSIGN_OR_RETURN(link.id, ids_->Next(id_deadline));
  return link;
}

void Shortener::Shorten(const ShortenInput& input, absl::Time deadline, ShortenDone done) {
  auto submit = [this](absl::StatusOr<store::NewLink> link, ShortenDone done) {
    if (!link.ok()) {
      done(link.status());
      return;
    }
    committer_->Create(*std::move(link),
                       [this, done = std::move(done)](absl::StatusOr<store::CreateOutcome> o) {
                         done(ToOutput(std::move(o)));
                       });
  };
  // Normally the allocator has ids at hand; only Prepare's id step can be
  // UNAVAILABLE. Then waiting for a segment happens on the blocking pool, not
  // on the caller's (reactor) thread.
  absl::StatusOr<store::NewLink> link = Prepare(input, absl::InfinitePast());
  if (absl::IsUnavailable(link.status()) && absl::Now() < deadline) {
    // `done` is copied in: a refusal still has it to answer with.
    absl::Status queued = blocking_pool_->Schedule([this, input, deadline, submit, done]() mutable {
      submit(Prepare(input, IdDeadline(deadline)), std::move(done));
    });
    if (!queued.ok()) done(queued);
    return;
  }
  submit(std::move(link), std::move(done));
}

void Shortener::BatchShorten(std::vector<absl::StatusOr<ShortenInput>> items, absl::Time deadline,
                             BatchShortenDone done) {
  if (items.empty()) {
    done(absl::InvalidArgumentError("requests: at least one request is required"));
    return;
  }
  if (items.size() > options_.max_batch_size) {
    done(absl::InvalidArgumentError(absl::StrCat("requests: ", items.size(),
                                                 " requests, more than the limit of ",
                                                 options_.max_batch_size)));
    return;
  }
  // Validating up to 1000 URLs takes milliseconds and ids may need a wait:
  // off the caller's thread. `done` is copied in: a refusal still has it.
  absl::Status queued =
      blocking_pool_->Schedule([this, items = std::move(items), deadline, done]() mutable {
        PrepareBatch(items, deadline, std::move(done));
      });
  if (!queued.ok()) done(queued);
}

void Shortener::PrepareBatch(const std::vector<absl::StatusOr<ShortenInput>>& items,
                             absl::Time deadline, BatchShortenDone done) {
  // Items that fail decoding or validation get their error now; the rest go
  // to the store together and their results are slotted back in input order.
  // Every slot is assigned below. Default slots hold a status with no
  // message: copies of one with a message would take and drop a reference
  // to it 1000 times per batch.
  auto results = std::make_shared<std::vector<absl::StatusOr<ShortenOutput>>>(items.size());
  std::vector<store::NewLink> to_create;
  to_create.reserve(items.size());
  auto positions = std::make_shared<std::vector<size_t>>();
  positions->reserve(items.size());
  const absl::Time id_deadline = IdDeadline(deadline);  // one wait budget per batch
  for (size_t i = 0; i < items.size(); ++i) {
    absl::StatusOr<store::NewLink> link =
        items[i].ok() ? Prepare(*items[i], id_deadline) : items[i].status();
    if (!link.ok()) {
      (*results)[i] = link.status();
      continue;
    }
    to_create.push_back(*std::move(link));
    positions->push_back(i);
  }
  if (to_create.empty()) {
    done(std::move(*results));
    return;
  }
  committer_->CreateMany(std::move(to_create),
                         [this, results, positions, done = std::move(done)](
                             std::vector<absl::StatusOr<store::CreateOutcome>> outcomes) {
                           for (size_t j = 0; j < outcomes.size(); ++j) {
                             (*results)[(*positions)[j]] = ToOutput(std::move(outcomes[j]));
                           }
                           done(std::move(*results));
                         });
}

absl::StatusOr<ShortenOutput> Shortener::ToOutput(
    absl::StatusOr<store::CreateOutcome> outcome) const {
  if (!outcome.ok()) return outcome.status();
  ShortenOutput out;
  out.created = outcome->created;
  SHORTENER_ASSIGN_OR_RETURN(out.link, ToView(std::move(outcome->link)));
  return out;
}

absl::StatusOr<LinkView> Shortener::ToView(store::Link link) const {
  std::string code;
  if (link.alias.has_value()) {
    code = *link.alias;
  } else {
    SHORTENER_ASSIGN_OR_RETURN(code, codec_->Encode(static_cast<uint64_t>(link.id)));
  }
  return ToView(std::move(link), std::move(code));
}

LinkView Shortener::ToView(store::Link link, std::string code) const {
  LinkView view;
  view.code = std::move(code);
  view.short_url = absl::StrCat(options_.base_url, view.code);
  if (link.revoke_time.has_value()) {
    view.state = LinkState::kRevoked;
  } else if (link.clicks_exhausted_time.has_value() ||
             (link.expire_time.has_value() && *link.expire_time <= clock_->Now())) {
    view.state = LinkState::kExpired;
  } else {
    view.state = LinkState::kActive;
  }
  view.link = std::move(link);
  return view;
}

absl::StatusOr<std::optional<int64_t>> Shortener::ParseCode(absl::string_view code) const {
  if (codec_->IsGeneratedShape(code)) {
    absl::StatusOr<uint64_t> id = codec_->Decode(code);
    if (!id.ok()) return id.status();
    return std::optional<int64_t>(static_cast<int64_t>(*id));
  }
  // Alias syntax only: the full rules (reserved words, generated shape)
  // apply when an alias is created.
  if (codec::HasAliasSyntax(code)) return std::optional<int64_t>();
  return absl::InvalidArgumentError(
      absl::StrCat("code: \"", absl::CHexEscape(code.substr(0, 80)),
                   "\" is neither a short code nor an alias ([A-Za-z0-9_-], 1 to ",
                   codec::kMaxAliasLength, " characters)"));
}

absl::StatusOr<store::Link> Shortener::Found(absl::string_view code,
                                             absl::StatusOr<store::Link> link) const {
  // Every "no such link" looks the same to clients, whatever the reason (bad
  // check character, unknown id, unknown alias): the store's messages name
  // ids, which the keyed permutation exists to hide.
  // A link with an alias has exactly one code: its alias.
  const bool by_id = codec_->IsGeneratedShape(code);
  if (absl::IsNotFound(link.status()) || (link.ok() && by_id && link->alias.has_value())) {
    return absl::NotFoundError(absl::StrCat("code \"", code, "\" does not exist"));
  }
  return link;
}

absl::StatusOr<store::Link> Shortener::Lookup(absl::string_view code) {
  absl::StatusOr<std::optional<int64_t>> id = ParseCode(code);
  if (!id.ok()) return Found(code, id.status());
  if (id->has_value()) return Found(code, store_->GetById(**id));
  return Found(code, store_->GetByAlias(std::string(code)));
}

absl::StatusOr<int64_t> Shortener::LinkIdOf(absl::string_view code) {
  const std::string codes[] = {std::string(code)};
  return std::move(LinkIdsOf(codes).front());
}

absl::StatusOr<std::string> Shortener::TenantFor(const auth::Principal* caller,
                                                 const std::string& asked) const {
  if (caller == nullptr) return asked.empty() ? options_.owner : asked;
  if (asked.empty() || asked == caller->tenant) return caller->tenant;
  if (caller->admin()) return asked;
  return absl::PermissionDeniedError(
      absl::StrCat("tenant: api key \"", absl::CHexEscape(caller->key_name),
                   "\" may read only its own tenant \"", absl::CHexEscape(caller->tenant),
                   "\" (naming another needs the admin scope)"));
}

absl::StatusOr<int64_t> Shortener::FindLabelId(const std::string& tenant, const std::string& key,
                                               const std::string& value) {
  return store_->FindLabelId(tenant, key, value);
}

std::vector<absl::StatusOr<int64_t>> Shortener::LinkIdsOf(absl::Span<const std::string> codes) {
  std::vector<absl::StatusOr<int64_t>> ids(codes.size(), absl::StatusOr<int64_t>(0));
  // Every alias look-up is queued first, then all are awaited together.
  struct Waiting {
    std::mutex mu;
    std::condition_variable done;
    size_t left = 0;
  };
  Waiting waiting;
  for (size_t i = 0; i < codes.size(); ++i) {
    absl::StatusOr<std::optional<int64_t>> id = ParseCode(codes[i]);
    if (!id.ok()) {
      ids[i] = Found(codes[i], id.status()).status();
    } else if (id->has_value()) {
      ids[i] = **id;
    } else {
      {
        std::lock_guard<std::mutex> lock(waiting.mu);
        ++waiting.left;
      }
      reads_->GetByAlias(codes[i],
                         [this, &ids, &waiting, &codes, i](absl::StatusOr<store::Link> link) {
                           link = Found(codes[i], std::move(link));
                           absl::StatusOr<int64_t> result =
                               link.ok() ? absl::StatusOr<int64_t>(link->id) : link.status();
                           std::lock_guard<std::mutex> lock(waiting.mu);
                           ids[i] = std::move(result);
                           if (--waiting.left == 0) waiting.done.notify_all();
                         });
    }
  }
  std::unique_lock<std::mutex> lock(waiting.mu);
  waiting.done.wait(lock, [&] { return waiting.left == 0; });
  return ids;
}

void Shortener::Resolve(absl::string_view code, ResolveDone done) {
  absl::StatusOr<std::optional<int64_t>> id = ParseCode(code);
  if (!id.ok()) {
    done(Found(code, id.status()).status());
    return;
  }
  // A code that resolves is the link's own code (codes are canonical: one
  // per id), so the view needs no Encode.
  auto answer = [this, code = std::string(code),
                 done = std::move(done)](absl::StatusOr<store::Link> link) {
    link = Found(code, std::move(link));
    if (!link.ok()) {
      done(link.status());
    } else {
      done(ToView(*std::move(link), code));
    }
  };
  if (id->has_value()) {
    reads_->GetById(**id, std::move(answer));
  } else {
    reads_->GetByAlias(std::string(code), std::move(answer));
  }
}

void Shortener::BatchResolve(std::vector<std::string> codes, BatchResolveDone done) {
  const size_t n = codes.size();
  if (n < 1 || n > options_.max_batch_size) {
    done(absl::InvalidArgumentError(absl::StrCat("codes: BatchResolve takes 1 to ",
                                                 options_.max_batch_size, " codes, got ", n)));
    return;
  }
  // Codes that do not decode are answered here; the others go to the read
  // batcher as one group, so that they share its statements.
  std::vector<absl::StatusOr<LinkView>> views(n);
  std::vector<store::LinkKey> keys;
  std::vector<size_t> slots;  // keys[j] is the look-up of codes[slots[j]]
  for (size_t i = 0; i < n; ++i) {
    absl::StatusOr<std::optional<int64_t>> id = ParseCode(codes[i]);
    if (!id.ok()) {
      views[i] = Found(codes[i], id.status()).status();
      continue;
    }
    keys.push_back(id->has_value() ? store::LinkKey::Id(**id) : store::LinkKey::Alias(codes[i]));
    slots.push_back(i);
  }
  reads_->GetMany(std::move(keys), [this, codes = std::move(codes), slots = std::move(slots),
                                    views = std::move(views), done = std::move(done)](
                                       std::vector<absl::StatusOr<store::Link>> links) mutable {
    for (size_t j = 0; j < links.size(); ++j) {
      const std::string& code = codes[slots[j]];
      absl::StatusOr<store::Link> link = Found(code, std::move(links[j]));
      if (link.ok()) {
        views[slots[j]] = ToView(*std::move(link), code);
      } else {
        views[slots[j]] = link.status();
      }
    }
    done(std::move(views));
  });
}

absl::StatusOr<LinkView> Shortener::Resolve(absl::string_view code) {
  std::promise<absl::StatusOr<LinkView>> result;
  Resolve(code, [&result](absl::StatusOr<LinkView> view) { result.set_value(std::move(view)); });
  return result.get_future().get();
}

void Shortener::GetLink(absl::string_view code, const auth::Principal* caller, ResolveDone done) {
  Resolve(code, [this, code = std::string(code), caller,
                 done = std::move(done)](absl::StatusOr<LinkView> view) {
    if (!view.ok()) {
      done(view.status());
      return;
    }
    absl::StatusOr<store::Link> visible = Visible(code, caller, view->link);
    if (!visible.ok()) {
      done(visible.status());
    } else {
      done(*std::move(view));
    }
  });
}

absl::StatusOr<store::Link> Shortener::Visible(absl::string_view code,
                                               const auth::Principal* caller,
                                               absl::StatusOr<store::Link> link) const {
  if (!link.ok() || caller == nullptr || caller->admin() || link->owner == caller->tenant) {
    return link;
  }
  // Exactly what an unknown code gets: another tenant must not learn which
  // codes exist.
  return Found(code, absl::NotFoundError("not this caller's link"));
}

absl::StatusOr<LinkView> Shortener::UpdateLink(const LinkEdit& edit,
                                               const auth::Principal* caller) {
  store::LinkUpdate update;
  if (edit.long_url.has_value()) {
    if (edit.long_url->empty()) return absl::InvalidArgumentError("long_url: cannot be cleared");
    SHORTENER_ASSIGN_OR_RETURN(std::string normalised, url_policy_->Normalize(*edit.long_url));
    if (caller != nullptr) SHORTENER_RETURN_IF_ERROR(CheckTargetDomain(normalised, *caller));
    update.long_url_sha256 = Sha256String(normalised);
    update.long_url = std::move(normalised);
  }
  update.when = clock_->Now();
  if (edit.expire_time.has_value()) {
    if (edit.expire_time->has_value() && **edit.expire_time <= update.when) {
      return absl::InvalidArgumentError(
          absl::StrCat("expire_time: ", absl::FormatTime(**edit.expire_time, absl::UTCTimeZone()),
                       " is not in the future"));
    }
    update.expire_time = *edit.expire_time;
  }
  if (edit.redirect_status.has_value()) {
    if (!IsRedirectStatus(*edit.redirect_status)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "redirect_type: status ", *edit.redirect_status, " is not one of 301, 302, 307, 308"));
    }
    update.redirect_status = *edit.redirect_status;
  }
  if (edit.max_clicks.has_value()) {
    if (*edit.max_clicks < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "max_clicks: must be positive (or 0 for unlimited), got ", *edit.max_clicks));
    }
    update.max_clicks =
        *edit.max_clicks > 0 ? std::optional<int64_t>(*edit.max_clicks) : std::nullopt;
  }
  if (edit.labels.has_value()) {
    SHORTENER_RETURN_IF_ERROR(store::ValidateLabels(*edit.labels));
    update.labels = *edit.labels;
  }
  SHORTENER_ASSIGN_OR_RETURN(store::Link link, OwnedLink(edit.code, caller));
  update.id = link.id;
  update.code = edit.code;
  update.actor = ActorOf(caller);
  SHORTENER_ASSIGN_OR_RETURN(store::Link updated, store_->UpdateLink(update));
  return ToView(std::move(updated), edit.code);
}

absl::StatusOr<std::vector<store::LinkChange>> Shortener::LinkHistory(int64_t id) {
  return store_->LinkHistory(id);
}

absl::StatusOr<store::Link> Shortener::OwnedLink(absl::string_view code,
                                                 const auth::Principal* caller) {
  return Visible(code, caller, Lookup(code));
}

std::string Shortener::ActorOf(const auth::Principal* caller) {
  if (caller == nullptr) return "shortener";
  return absl::StrCat(caller->key_name, " (api key ", caller->key_id, ")");
}

absl::StatusOr<LinkView> Shortener::Revoke(absl::string_view code, const auth::Principal* caller) {
  SHORTENER_ASSIGN_OR_RETURN(store::Link link, OwnedLink(code, caller));
  SHORTENER_ASSIGN_OR_RETURN(store::Link revoked,
                             store_->Revoke(link.id, clock_->Now(), std::string(code)));
  return ToView(std::move(revoked), std::string(code));
}

}  // namespace shortener::service
