// Early-return helpers for absl::Status / absl::StatusOr, which abseil
// 20220623 does not ship. Prefixed so they never clash with a later abseil.
#ifndef SHORTENER_LIB_COMMON_STATUS_MACROS_H_
#define SHORTENER_LIB_COMMON_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns the status of `expr` from the enclosing function if it is not OK.
#define SHORTENER_RETURN_IF_ERROR(expr)                    \
  do {                                                     \
    ::absl::Status shortener_status_ = (expr);             \
    if (!shortener_status_.ok()) return shortener_status_; \
  } while (0)

#define SHORTENER_STATUS_CONCAT_INNER_(a, b) a##b
#define SHORTENER_STATUS_CONCAT_(a, b) SHORTENER_STATUS_CONCAT_INNER_(a, b)

// `SHORTENER_ASSIGN_OR_RETURN(auto x, Foo());` declares/assigns the value of
// a StatusOr, or returns its status from the enclosing function.
#define SHORTENER_ASSIGN_OR_RETURN(lhs, expr)                                                    \
  SHORTENER_ASSIGN_OR_RETURN_IMPL_(SHORTENER_STATUS_CONCAT_(shortener_statusor_, __LINE__), lhs, \
                                   expr)

#define SHORTENER_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                     \
  if (!statusor.ok()) return std::move(statusor).status();    \
  lhs = std::move(statusor).value()

#endif  // SHORTENER_LIB_COMMON_STATUS_MACROS_H_
