// Fuzzes edge/request_target.h: ClassifyRequest with a real ShortCodec.
//
// Input: "<method> <target>", split at the first space (no space: the whole
// input is the target of a GET). Invariants, besides no memory error or UB:
//  - 414 exactly when the request line is over the limit; else 405 exactly
//    for methods other than GET and HEAD;
//  - a code or alias to look up (or a prefiltered one) is a non-empty view
//    into the target, right after its '/', of at most kMaxCodeLength
//    characters of [A-Za-z0-9_-], followed by the end or the query;
//  - kLookupCode exactly for codes Decode() accepts, and such a code is the
//    Encode() of its id; kPrefiltered for the generated shape Decode()
//    refuses with NOT_FOUND; kLookupAlias never has the generated shape;
//  - every alias ValidateAlias() accepts is looked up as an alias;
//  - a bad-request result always names its reason, others never do.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "edge/request_target.h"
#include "lib/codec/alias.h"
#include "lib/codec/short_codec.h"
#include "tests/fuzz/fuzz_check.h"

namespace shortener::edge {
namespace {

constexpr size_t kMaxRequestLine = 512;  // run with -max_len a little above

const codec::ShortCodec& Codec() {
  static const codec::ShortCodec* codec = [] {
    codec::CodecOptions options;
    options.secret = std::string(32, 'f');
    return new codec::ShortCodec(*codec::ShortCodec::Create(options));
  }();
  return *codec;
}

bool IsCodeChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

void CheckLookup(const RequestTarget& result, absl::string_view target) {
  const codec::ShortCodec& codec = Codec();
  absl::string_view code = result.code;
  FUZZ_CHECK(!code.empty() && code.size() <= kMaxCodeLength);
  FUZZ_CHECK(code.data() == target.data() + 1);
  for (char c : code) FUZZ_CHECK(IsCodeChar(c));
  FUZZ_CHECK(target.size() == code.size() + 1 || target[code.size() + 1] == '?');
  absl::StatusOr<uint64_t> id = codec.Decode(code);
  switch (result.kind) {
    case TargetKind::kLookupCode: {
      FUZZ_CHECK(id.ok());
      absl::StatusOr<std::string> again = codec.Encode(*id);
      FUZZ_CHECK(again.ok() && *again == code);
      break;
    }
    case TargetKind::kPrefiltered:
      FUZZ_CHECK(codec.IsGeneratedShape(code));
      FUZZ_CHECK(absl::IsNotFound(id.status()));
      break;
    default:  // kLookupAlias
      FUZZ_CHECK(!codec.IsGeneratedShape(code));
      FUZZ_CHECK(!id.ok());
      break;
  }
}

void FuzzOne(absl::string_view input) {
  absl::string_view method = "GET";
  absl::string_view target = input;
  if (size_t space = input.find(' '); space != absl::string_view::npos) {
    method = input.substr(0, space);
    target = input.substr(space + 1);
  }
  RequestTargetOptions options;
  options.max_request_line = kMaxRequestLine;
  const RequestTarget result = ClassifyRequest(method, target, Codec(), options);

  FUZZ_CHECK(result.method == ParseMethod(method));
  const bool too_long = method.size() + 1 + target.size() + 9 > kMaxRequestLine;
  FUZZ_CHECK((result.kind == TargetKind::kUriTooLong) == too_long);
  if (too_long) return;
  FUZZ_CHECK((result.kind == TargetKind::kMethodNotAllowed) == (result.method == Method::kOther));
  FUZZ_CHECK((result.kind == TargetKind::kBadRequest) ==
             (result.bad_reason != BadTargetReason::kNone));
  switch (result.kind) {
    case TargetKind::kLookupCode:
    case TargetKind::kLookupAlias:
    case TargetKind::kPrefiltered:
      CheckLookup(result, target);
      break;
    default:
      FUZZ_CHECK(result.code.empty());
      break;
  }
  if (result.method != Method::kOther && !target.empty() && target.front() == '/') {
    absl::string_view path = target.substr(1, target.find('?') - 1);
    if (codec::ValidateAlias(path, Codec()).ok()) {
      FUZZ_CHECK(result.kind == TargetKind::kLookupAlias);
    }
  }
}

}  // namespace
}  // namespace shortener::edge

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shortener::edge::FuzzOne(absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
