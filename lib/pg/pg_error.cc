#include "lib/pg/pg_error.h"

#include <pqxx/pqxx>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace shortener::pg {
namespace {

absl::Status FromSqlState(absl::string_view what, const std::string& sqlstate,
                          const std::string& detail) {
  absl::string_view state(sqlstate);
  std::string message = absl::StrCat(what, ": ", detail);
  if (absl::StartsWith(state, "08") || absl::StartsWith(state, "53") || state == "57P01" ||
      state == "57P02" || state == "57P03") {
    return absl::UnavailableError(message);
  }
  if (state == "23505") return absl::AlreadyExistsError(message);
  if (state == "40001" || state == "40P01") return absl::AbortedError(message);
  if (state == "57014") return absl::DeadlineExceededError(message);
  return absl::InternalError(message);
}

// First line of a server message, without the SQL libpqxx may append.
std::string FirstLine(const char* text) {
  std::string s(text);
  size_t nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  return s;
}

}  // namespace

absl::Status StatusFromCurrentException(absl::string_view what) {
  try {
    throw;
  } catch (const pqxx::broken_connection& e) {
    return absl::UnavailableError(
        absl::StrCat(what, ": database connection lost: ", FirstLine(e.what())));
  } catch (const pqxx::in_doubt_error& e) {
    return absl::UnavailableError(
        absl::StrCat(what, ": commit outcome unknown (connection lost during commit)"));
  } catch (const pqxx::sql_error& e) {
    return FromSqlState(what, e.sqlstate(), FirstLine(e.what()));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(what, ": ", FirstLine(e.what())));
  } catch (...) {
    return absl::InternalError(absl::StrCat(what, ": unknown error"));
  }
}

}  // namespace shortener::pg
