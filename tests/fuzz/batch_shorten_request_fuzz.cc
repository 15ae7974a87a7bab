// Fuzzes the service side of BatchShorten: bytes -> v1::BatchShortenRequest
// -> the service's decoding (services/shorten/proto_mapping.h FromProto) ->
// Shortener::BatchShorten over the in-memory store and id source (no
// PostgreSQL) -> the answer as ShortenServiceImpl builds it.
//
// Input: byte 0 picks the caller (no key, or a tenant key limited to
// *.acme.com and acme.com); the rest is the serialised request (bytes that
// do not parse are what gRPC refuses before our code runs). Every input
// gets a fresh store, so a result never depends on earlier inputs.
// Invariants, besides no memory error, leak or UB:
//  - 0 or more than 1000 items fail the whole call INVALID_ARGUMENT;
//    otherwise there is one result per item, in order;
//  - an accepted item's link holds Normalize(long_url), its code is the
//    alias asked for or a generated code that decodes to the link's id, its
//    short URL is base URL + code, its owner the caller's tenant, Resolve
//    finds it with the same URL, and (unless it answers a reused
//    request_id) its redirect status and click budget are the ones asked
//    for;
//  - a refused item has a code a client may see for bad input
//    (INVALID_ARGUMENT, ALREADY_EXISTS, PERMISSION_DENIED) and a short
//    message of valid UTF-8, decode errors in their own slots;
//  - the answer serialises and parses back (a proto3 string that is not
//    UTF-8 would make the whole call fail on the client).
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
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

// The contract's mapping spelled out here on purpose, not taken from
// proto/redirect_type.h: an independent oracle for what was stored.
int ExpectedRedirectStatus(v1::RedirectType type) {
  switch (type) {
    case v1::REDIRECT_TYPE_MOVED_PERMANENTLY:
      return 301;
    case v1::REDIRECT_TYPE_TEMPORARY:
      return 307;
    case v1::REDIRECT_TYPE_PERMANENT:
      return 308;
    default:
      return 302;
  }
}

void CheckAccepted(Service& service, const v1::ShortenRequest& request, const ShortenOutput& out,
                   const auth::Principal* caller) {
  const Shared& shared = GetShared();
  const LinkView& view = out.link;
  absl::StatusOr<std::string> normalized = shared.policy->Normalize(request.long_url());
  FUZZ_CHECK(normalized.ok() && view.link.long_url == *normalized);
  FUZZ_CHECK(view.short_url == kBaseUrl + view.code);
  FUZZ_CHECK(view.link.owner == (caller != nullptr ? caller->tenant : "anonymous"));
  absl::StatusOr<LinkView> resolved = service.shortener.Resolve(view.code);
  FUZZ_CHECK(resolved.ok() && resolved->link.long_url == view.link.long_url);
  // A reused request_id answers with the link of its first use, made from
  // that request's other fields.
  if (!out.created && !request.request_id().empty()) return;
  if (!request.custom_alias().empty()) {
    FUZZ_CHECK(view.code == request.custom_alias());
  } else {
    absl::StatusOr<uint64_t> id = shared.codec->Decode(view.code);
    FUZZ_CHECK(id.ok() && static_cast<int64_t>(*id) == view.link.id);
  }
  FUZZ_CHECK(view.link.redirect_status == ExpectedRedirectStatus(request.redirect_type()));
  FUZZ_CHECK(view.link.max_clicks.value_or(0) == request.max_clicks());
}

void CheckRefused(const absl::Status& status) {
  FUZZ_CHECK(absl::IsInvalidArgument(status) || absl::IsAlreadyExists(status) ||
             absl::IsPermissionDenied(status));
  FUZZ_CHECK(!status.message().empty() && status.message().size() <= 1024);
  FUZZ_CHECK(utf8::IsValid(status.message()));
}

void FuzzOne(uint8_t caller_selector, const v1::BatchShortenRequest& request) {
  const std::shared_ptr<const auth::Principal> caller =
      caller_selector % 2 == 0 ? nullptr : GetShared().tenant;
  Service service;
  std::vector<absl::StatusOr<ShortenInput>> inputs = FromProto(request, caller);
  FUZZ_CHECK(inputs.size() == static_cast<size_t>(request.requests_size()));
  std::vector<absl::Status> decode_errors;
  for (const absl::StatusOr<ShortenInput>& input : inputs) decode_errors.push_back(input.status());

  std::promise<absl::StatusOr<std::vector<absl::StatusOr<ShortenOutput>>>> done;
  service.shortener.BatchShorten(
      std::move(inputs), absl::Now() + absl::Seconds(5),
      [&done](absl::StatusOr<std::vector<absl::StatusOr<ShortenOutput>>> results) {
        done.set_value(std::move(results));
      });
  absl::StatusOr<std::vector<absl::StatusOr<ShortenOutput>>> results = done.get_future().get();

  const int items = request.requests_size();
  if (items == 0 || items > 1000) {
    FUZZ_CHECK(absl::IsInvalidArgument(results.status()));
    return;
  }
  FUZZ_CHECK(results.ok() && results->size() == static_cast<size_t>(items));
  for (int i = 0; i < items; ++i) {
    const absl::Status& decode_error = decode_errors[i];
    FUZZ_CHECK(decode_error.ok() || absl::IsInvalidArgument(decode_error));
    const absl::StatusOr<ShortenOutput>& out = (*results)[i];
    // A decode error is the item's answer, as it is.
    FUZZ_CHECK(decode_error.ok() || out.status() == decode_error);
    if (out.ok()) {
      CheckAccepted(service, request.requests(i), *out, caller.get());
    } else {
      CheckRefused(out.status());
    }
  }
  // The answer as ShortenServiceImpl::BatchShorten builds it.
  v1::BatchShortenResponse response;
  ToProto(*std::move(results), &response);
  std::string wire;
  FUZZ_CHECK(response.SerializeToString(&wire));
  v1::BatchShortenResponse parsed;
  FUZZ_CHECK(parsed.ParseFromString(wire) && parsed.results_size() == items);
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
  if (size == 0) return 0;
  shortener::v1::BatchShortenRequest request;
  if (!request.ParseFromArray(data + 1, static_cast<int>(size - 1))) return 0;
  shortener::service::FuzzOne(data[0], request);
  return 0;
}
