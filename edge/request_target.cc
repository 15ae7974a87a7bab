#include "edge/request_target.h"

#include <optional>

namespace shortener::edge {
namespace {

// The request line around method and target: ' ' + target + " HTTP/1.1".
constexpr size_t kLineOverhead = 1 + 9;

RequestTarget Bad(Method method, BadTargetReason reason) {
  RequestTarget result;
  result.kind = TargetKind::kBadRequest;
  result.method = method;
  result.bad_reason = reason;
  return result;
}

// Built-in paths, compared exactly (paths are case-sensitive).
std::optional<TargetKind> MatchBuiltin(absl::string_view path) {
  struct Builtin {
    absl::string_view path;
    TargetKind kind;
  };
  static constexpr Builtin kBuiltins[] = {
      {"/healthz", TargetKind::kHealthz},   {"/readyz", TargetKind::kReadyz},
      {"/metrics", TargetKind::kMetrics},   {"/favicon.ico", TargetKind::kFavicon},
      {"/robots.txt", TargetKind::kRobots},
  };
  for (const Builtin& b : kBuiltins) {
    if (path == b.path) return b.kind;
  }
  return std::nullopt;
}

// The specific reason `code` does not have alias syntax (codec::HasAliasSyntax,
// which every code has too), or kNone.
BadTargetReason CheckCodeSyntax(absl::string_view code) {
  if (code.empty()) return BadTargetReason::kEmpty;
  // Specific reasons first (they matter for metrics), then the alias
  // character set, which on its own would already reject all of them.
  if (code.find("..") != absl::string_view::npos) {
    return BadTargetReason::kDotSegment;
  }
  if (code.find('%') != absl::string_view::npos) {
    return BadTargetReason::kPercent;
  }
  if (code.find('/') != absl::string_view::npos) {
    return BadTargetReason::kSlash;
  }
  for (char c : code) {
    if (!codec::IsAliasChar(c)) return BadTargetReason::kBadCharacter;
  }
  if (code.size() > kMaxCodeLength) return BadTargetReason::kTooLong;
  return BadTargetReason::kNone;
}

}  // namespace

Method ParseMethod(absl::string_view method) {
  if (method == "GET") return Method::kGet;
  if (method == "HEAD") return Method::kHead;
  return Method::kOther;
}

RequestTarget ClassifyRequest(absl::string_view method, absl::string_view target,
                              const codec::ShortCodec& codec, const RequestTargetOptions& options) {
  RequestTarget result;
  result.method = ParseMethod(method);
  if (method.size() + target.size() + kLineOverhead > options.max_request_line) {
    result.kind = TargetKind::kUriTooLong;
    return result;
  }
  if (result.method == Method::kOther) {
    result.kind = TargetKind::kMethodNotAllowed;
    return result;
  }
  if (target.empty() || target.front() != '/') {
    return Bad(result.method, BadTargetReason::kNotOriginForm);
  }
  absl::string_view path = target.substr(0, target.find('?'));
  if (std::optional<TargetKind> builtin = MatchBuiltin(path)) {
    result.kind = *builtin;
    return result;
  }

  absl::string_view code = path.substr(1);
  if (BadTargetReason reason = CheckCodeSyntax(code); reason != BadTargetReason::kNone) {
    return Bad(result.method, reason);
  }
  result.code = code;
  if (codec.IsGeneratedShape(code)) {
    result.kind = codec.PassesPrefilter(code) ? TargetKind::kLookupCode : TargetKind::kPrefiltered;
  } else {
    result.kind = TargetKind::kLookupAlias;
  }
  return result;
}

}  // namespace shortener::edge
