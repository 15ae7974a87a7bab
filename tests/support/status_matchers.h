// Catch2 matchers for absl::Status / absl::StatusOr:
//   REQUIRE_THAT(store.Get(id), IsOk());
//   REQUIRE_THAT(codec.Decode("x"), HasCode(absl::StatusCode::kInvalidArgument));
//   REQUIRE_THAT(st, HasCodeAndMessage(kNotFound, "unknown code"));
#ifndef SHORTENER_TESTS_SUPPORT_STATUS_MATCHERS_H_
#define SHORTENER_TESTS_SUPPORT_STATUS_MATCHERS_H_

#include <catch2/catch.hpp>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"

namespace shortener::testing {

inline const absl::Status& GetStatus(const absl::Status& s) { return s; }
template <typename T>
absl::Status GetStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

class StatusCodeMatcher {
 public:
  StatusCodeMatcher(absl::StatusCode code, std::string substring)
      : code_(code), substring_(std::move(substring)) {}

  template <typename S>
  bool match(const S& s) const {
    absl::Status st = GetStatus(s);
    return st.code() == code_ && absl::StrContains(st.message(), substring_);
  }
  // Catch2 v2's MatchExpr calls match() and toString() on any matcher type.
  std::string toString() const {
    std::string d = "has code " + absl::StatusCodeToString(code_);
    if (!substring_.empty()) d += " and a message containing \"" + substring_ + "\"";
    return d;
  }

 private:
  absl::StatusCode code_;
  std::string substring_;
};

inline StatusCodeMatcher IsOk() { return {absl::StatusCode::kOk, ""}; }
inline StatusCodeMatcher HasCode(absl::StatusCode code) { return {code, ""}; }
inline StatusCodeMatcher HasCodeAndMessage(absl::StatusCode code, std::string substring) {
  return {code, std::move(substring)};
}

}  // namespace shortener::testing

// Printing of statuses in failure messages.
namespace Catch {
template <>
struct StringMaker<absl::Status> {
  static std::string convert(const absl::Status& s) { return s.ToString(); }
};
template <typename T>
struct StringMaker<absl::StatusOr<T>> {
  static std::string convert(const absl::StatusOr<T>& s) {
    return s.ok() ? std::string("OK (with value)") : s.status().ToString();
  }
};
}  // namespace Catch

#endif  // SHORTENER_TESTS_SUPPORT_STATUS_MATCHERS_H_
