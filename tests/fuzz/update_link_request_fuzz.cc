// Fuzzes the service side of UpdateLink: bytes -> v1::UpdateLinkRequest ->
// the service's decoding (services/shorten/proto_mapping.h FromProto) ->
// Shortener::UpdateLink over the in-memory store -> the answer as
// ShortenServiceImpl builds it.
//
// Input: byte 0 picks the caller (no key, or a tenant key limited to
// *.acme.com and acme.com) and whether the request's code is replaced by
// the code of a link made first (https://acme.com/start, alias "spring",
// owned by the caller); the rest is the serialised request. Every input
// gets a fresh store.
// Invariants, besides no memory error, leak or UB:
//  - FromProto refuses only INVALID_ARGUMENT naming link.code, update_mask,
//    link.expire_time or link.redirect_type;
//  - an update that succeeds answers the link as GetLink then reads it,
//    with exactly the fields the mask named changed as asked (the URL
//    normalised) and the others as they were; the history grew by one
//    change exactly when a field's value changed, naming the caller;
//  - a refusal is INVALID_ARGUMENT, PERMISSION_DENIED or NOT_FOUND with a
//    short UTF-8 message, and changes nothing;
//  - the answer serialises and parses back.
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "google/protobuf/stubs/logging.h"
#include "lib/auth/principal.h"
#include "lib/codec/short_codec.h"
#include "lib/common/clock.h"
#include "lib/common/thread_pool.h"
#include "lib/common/utf8.h"
#include "lib/idalloc/segment_id_allocator.h"
#include "lib/idalloc/segment_source.h"
#include "lib/store/group_committer.h"
#include "lib/store/in_memory_link_store.h"
#include "lib/store/read_batcher.h"
#include "lib/url/url_policy.h"
#include "services/shorten/proto_mapping.h"
#include "services/shorten/shortener.h"
#include "shortener/v1/shortener.pb.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_shortener.h"

namespace shortener::service {
namespace {

using fuzzing::GetShared;
using fuzzing::kBaseUrl;
using fuzzing::Service;
using fuzzing::Shared;

void CheckRefused(const absl::Status& status) {
  FUZZ_CHECK(absl::IsInvalidArgument(status) || absl::IsPermissionDenied(status) ||
             absl::IsNotFound(status));
  FUZZ_CHECK(!status.message().empty() && status.message().size() <= 1024);
  FUZZ_CHECK(utf8::IsValid(status.message()));
}

bool Named(const std::vector<std::string>& paths, absl::string_view path) {
  for (const std::string& p : paths) {
    if (p == path || p == "*") return true;
  }
  return false;
}

void FuzzOne(uint8_t selector, v1::UpdateLinkRequest request) {
  const Shared& shared = GetShared();
  const std::shared_ptr<const auth::Principal> caller = selector % 2 == 0 ? nullptr : shared.tenant;
  Service service;
  ShortenInput first;
  first.long_url = "https://acme.com/start";
  first.custom_alias = "spring";
  first.caller = caller;
  std::promise<absl::StatusOr<ShortenOutput>> made;
  service.shortener.Shorten(
      first, absl::Now() + absl::Seconds(5),
      [&made](absl::StatusOr<ShortenOutput> out) { made.set_value(std::move(out)); });
  absl::StatusOr<ShortenOutput> link = made.get_future().get();
  FUZZ_CHECK(link.ok());
  if (selector & 2) request.mutable_link()->set_code("spring");

  absl::StatusOr<LinkEdit> edit = FromProto(request);
  if (!edit.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(edit.status()));
    const absl::string_view m = edit.status().message();
    FUZZ_CHECK(absl::StartsWith(m, "link.code: ") || absl::StartsWith(m, "update_mask: ") ||
               absl::StartsWith(m, "link.expire_time: ") ||
               absl::StartsWith(m, "link.redirect_type: "));
    return;
  }
  std::vector<std::string> paths(request.update_mask().paths().begin(),
                                 request.update_mask().paths().end());
  const store::Link before = link->link.link;
  absl::StatusOr<LinkView> updated = service.shortener.UpdateLink(*edit, caller.get());
  absl::StatusOr<LinkView> now = service.shortener.Resolve("spring");
  FUZZ_CHECK(now.ok());
  absl::StatusOr<std::vector<store::LinkChange>> history = service.store.LinkHistory(before.id);
  FUZZ_CHECK(history.ok());
  if (!updated.ok()) {
    CheckRefused(updated.status());
    FUZZ_CHECK(now->link.long_url == before.long_url && history->empty());
    return;
  }
  FUZZ_CHECK(updated->code == request.link().code());
  FUZZ_CHECK(now->link.long_url == updated->link.long_url);
  FUZZ_CHECK(now->link.redirect_status == updated->link.redirect_status);
  FUZZ_CHECK(now->link.labels == updated->link.labels);
  const bool masked = !paths.empty();
  const v1::Link& asked = request.link();
  auto changes = [&](absl::string_view path, bool set_in_link) {
    return masked ? Named(paths, path) : set_in_link;
  };
  if (changes("long_url", !asked.long_url().empty())) {
    absl::StatusOr<std::string> normalized = shared.policy->Normalize(asked.long_url());
    FUZZ_CHECK(normalized.ok() && updated->link.long_url == *normalized);
  } else {
    FUZZ_CHECK(updated->link.long_url == before.long_url);
  }
  if (changes("max_clicks", asked.max_clicks() != 0)) {
    FUZZ_CHECK(updated->link.max_clicks.value_or(0) == asked.max_clicks());
  } else {
    FUZZ_CHECK(updated->link.max_clicks == before.max_clicks);
  }
  if (changes("labels", !asked.labels().empty())) {
    FUZZ_CHECK(updated->link.labels == store::Labels(asked.labels().begin(), asked.labels().end()));
  } else {
    FUZZ_CHECK(updated->link.labels == before.labels);
  }
  if (!changes("redirect_type", asked.redirect_type() != v1::REDIRECT_TYPE_UNSPECIFIED)) {
    FUZZ_CHECK(updated->link.redirect_status == before.redirect_status);
  }
  const bool changed = !store::DiffLink(before, updated->link).empty();
  FUZZ_CHECK(history->size() == (changed ? 1u : 0u));
  if (changed) {
    FUZZ_CHECK(history->front().actor ==
               (caller != nullptr ? "acme-campaigns (api key 7)" : "shortener"));
  }
  v1::Link response;
  ToProto(*updated, &response);
  std::string wire;
  FUZZ_CHECK(response.SerializeToString(&wire));
  v1::Link parsed;
  FUZZ_CHECK(parsed.ParseFromString(wire));
}

}  // namespace
}  // namespace shortener::service

// Text that is not UTF-8 fails the parse, as gRPC would refuse it, and
// protobuf logs a line each time: millions of them, slowing the run.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  shortener::v1::UpdateLinkRequest request;
  if (!request.ParseFromArray(data + 1, static_cast<int>(size - 1))) return 0;
  shortener::service::FuzzOne(data[0], std::move(request));
  return 0;
}
