#include "lib/filter/filter.h"

#include <cstddef>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/common/status_macros.h"
#include "lib/common/utf8.h"

namespace shortener::filter {
namespace {

// How much of a word an error message quotes.
constexpr size_t kMaxQuotedWord = 32;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsAlpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSegmentStart(char c) { return IsAlpha(c) || c == '_'; }
bool IsSegmentChar(char c) { return IsAlpha(c) || IsDigit(c) || c == '_' || c == '-'; }
bool IsBareChar(char c) {
  return IsAlpha(c) || IsDigit(c) || c == '_' || c == '.' || c == ':' || c == '+' || c == '-';
}
// Characters of a "word" as error messages quote it: a field path, a bare
// value, a keyword.
bool IsWordChar(char c) { return IsSegmentChar(c) || c == '.'; }

absl::Status ErrorAt(size_t position, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrFormat("filter: at byte %d: %s", position, problem));
}

// The first fault of `text` outside the grammar's alphabet: bytes that are
// not well-formed UTF-8, or a control character other than whitespace.
absl::Status CheckText(absl::string_view text) {
  if (text.size() > kMaxFilterBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("filter: %d bytes, at most %d", text.size(), kMaxFilterBytes));
  }
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (utf8::IsControl(c) && !IsSpace(static_cast<char>(c))) {
        return ErrorAt(i, absl::StrFormat("control character 0x%02X", c));
      }
      ++i;
      continue;
    }
    const size_t length = utf8::CharLength(text.substr(i));
    if (length == 0) return ErrorAt(i, "invalid UTF-8");
    i += length;
  }
  return absl::OkStatus();
}

class Parser {
 public:
  // `text` has passed CheckText.
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<Filter> Parse() {
    Filter filter;
    SkipSpace();
    if (AtEnd()) return filter;
    while (true) {
      if (filter.terms.size() == kMaxTerms) {
        return ErrorAt(pos_, absl::StrFormat("more than %d terms", kMaxTerms));
      }
      SHORTENER_ASSIGN_OR_RETURN(Term term, ParseTerm());
      filter.terms.push_back(std::move(term));
      SkipSpace();
      if (AtEnd()) return filter;
      SHORTENER_RETURN_IF_ERROR(ParseAnd());
      SkipSpace();
      if (AtEnd()) return ErrorAt(pos_, "expected a term after AND");
    }
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }
  void SkipSpace() {
    while (!AtEnd() && IsSpace(Peek())) ++pos_;
  }

  // The run of word characters at `at` (possibly empty).
  absl::string_view WordAt(size_t at) const {
    size_t end = at;
    while (end < text_.size() && IsWordChar(text_[end])) ++end;
    return text_.substr(at, end - at);
  }

  // The one character at `at` (CheckText made sure it is well-formed),
  // ASCII ones C-escaped, for quoting in messages.
  std::string CharAt(size_t at) const {
    const size_t length = utf8::CharLength(text_.substr(at));
    if (length > 1) return std::string(text_.substr(at, length));
    return absl::CHexEscape(text_.substr(at, 1));
  }

  // What stands at `at`, for "got ..." in messages: a quoted word or
  // character, or "the end of the filter".
  std::string Describe(size_t at) const {
    if (at >= text_.size()) return "the end of the filter";
    const absl::string_view word = WordAt(at);
    if (word.empty()) return absl::StrCat("\"", CharAt(at), "\"");
    if (word.size() > kMaxQuotedWord) {
      return absl::StrCat("\"", word.substr(0, kMaxQuotedWord), "...\"");
    }
    return absl::StrCat("\"", word, "\"");
  }

  // Reads the AND between two terms.
  absl::Status ParseAnd() {
    const absl::string_view word = WordAt(pos_);
    if (word == "AND") {
      pos_ += word.size();
      return absl::OkStatus();
    }
    if (word == "OR") return ErrorAt(pos_, "OR is not supported: only AND joins terms");
    if (word == "and") return ErrorAt(pos_, "\"and\" is not an operator: AND is upper case");
    if (Peek() == '(' || Peek() == ')') return ErrorAt(pos_, "parentheses are not supported");
    return ErrorAt(pos_, "expected AND or the end of the filter, got " + Describe(pos_));
  }

  absl::StatusOr<Term> ParseTerm() {
    const size_t start = pos_;
    const char c = Peek();
    if (c == '(' || c == ')') return ErrorAt(pos_, "parentheses are not supported");
    if (c == '-') return ErrorAt(pos_, "negation (\"-\") is not supported");
    if (!IsSegmentStart(c)) return ErrorAt(pos_, "expected a field, got " + Describe(pos_));
    Term term;
    SHORTENER_ASSIGN_OR_RETURN(term.field, ParseField());
    if (term.field == "NOT") return ErrorAt(start, "NOT is not supported");
    if (term.field == "OR") return ErrorAt(start, "OR is not supported: only AND joins terms");
    if (term.field == "AND") return ErrorAt(start, "expected a field, got \"AND\"");
    SkipSpace();
    if (!AtEnd() && Peek() == '(') return ErrorAt(start, "function calls are not supported");
    const size_t op_start = pos_;
    SHORTENER_ASSIGN_OR_RETURN(term.op, ParseOp());
    const absl::string_view op_text = text_.substr(op_start, pos_ - op_start);
    SkipSpace();
    SHORTENER_RETURN_IF_ERROR(ParseValue(op_text, term));
    return term;
  }

  absl::StatusOr<std::string> ParseField() {
    const size_t start = pos_;
    while (true) {
      if (AtEnd() || !IsSegmentStart(Peek())) {
        return ErrorAt(pos_, "expected a field name after \".\", got " + Describe(pos_));
      }
      while (!AtEnd() && IsSegmentChar(Peek())) ++pos_;
      if (AtEnd() || Peek() != '.') break;
      ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  absl::StatusOr<Op> ParseOp() {
    if (AtEnd()) {
      return ErrorAt(pos_, "expected a comparison operator (=, !=, <, <=, >, >=)");
    }
    const bool then_eq = pos_ + 1 < text_.size() && text_[pos_ + 1] == '=';
    switch (Peek()) {
      case '=':
        ++pos_;
        return Op::kEq;
      case '!':
        if (!then_eq) break;
        pos_ += 2;
        return Op::kNe;
      case '<':
        pos_ += then_eq ? 2 : 1;
        return then_eq ? Op::kLe : Op::kLt;
      case '>':
        pos_ += then_eq ? 2 : 1;
        return then_eq ? Op::kGe : Op::kGt;
      case ':':
        return ErrorAt(pos_, "the has operator (\":\") is not supported");
      default:
        break;
    }
    return ErrorAt(pos_,
                   "expected a comparison operator (=, !=, <, <=, >, >=), got " + Describe(pos_));
  }

  // Reads the value after comparator `op_text` into `term`.
  absl::Status ParseValue(absl::string_view op_text, Term& term) {
    const std::string after = absl::StrCat("after \"", op_text, "\"");
    if (AtEnd()) return ErrorAt(pos_, absl::StrCat("expected a value ", after));
    const char c = Peek();
    if (c == '"' || c == '\'') {
      term.quoted = true;
      return ParseQuoted(term.value);
    }
    if (c == '(' || c == ')') return ErrorAt(pos_, "parentheses are not supported");
    if (!IsBareChar(c)) {
      return ErrorAt(pos_, absl::StrCat("expected a value ", after, ", got ", Describe(pos_)));
    }
    const size_t start = pos_;
    while (!AtEnd() && IsBareChar(Peek())) ++pos_;
    term.value = std::string(text_.substr(start, pos_ - start));
    return absl::OkStatus();
  }

  absl::Status ParseQuoted(std::string& value) {
    const size_t start = pos_;
    const char quote = Peek();
    ++pos_;
    while (true) {
      if (AtEnd()) return ErrorAt(start, "unterminated string");
      const char c = Peek();
      if (c == quote) {
        ++pos_;
        return absl::OkStatus();
      }
      if (utf8::IsControl(static_cast<unsigned char>(c))) {
        return ErrorAt(
            pos_, absl::StrFormat("control character 0x%02X in a string", static_cast<int>(c)));
      }
      if (c == '\\') {
        if (pos_ + 1 >= text_.size()) return ErrorAt(start, "unterminated string");
        const char escaped = text_[pos_ + 1];
        if (utf8::IsControl(static_cast<unsigned char>(escaped))) {
          return ErrorAt(pos_ + 1, absl::StrFormat("control character 0x%02X in a string",
                                                   static_cast<int>(escaped)));
        }
        if (escaped != '"' && escaped != '\'' && escaped != '\\') {
          return ErrorAt(pos_, absl::StrCat("unsupported escape \"\\", CharAt(pos_ + 1),
                                            "\" in a string (only \\\", \\' and \\\\)"));
        }
        value += escaped;
        pos_ += 2;
        continue;
      }
      value += c;
      ++pos_;
    }
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<Filter> ParseFilter(absl::string_view text) {
  SHORTENER_RETURN_IF_ERROR(CheckText(text));
  return Parser(text).Parse();
}

absl::string_view OpText(Op op) {
  switch (op) {
    case Op::kEq:
      return "=";
    case Op::kNe:
      return "!=";
    case Op::kLt:
      return "<";
    case Op::kLe:
      return "<=";
    case Op::kGt:
      return ">";
    case Op::kGe:
      return ">=";
  }
  return "?";
}

std::string Format(const Filter& filter) {
  std::string out;
  for (const Term& term : filter.terms) {
    if (!out.empty()) out += " AND ";
    absl::StrAppend(&out, term.field, " ", OpText(term.op), " ");
    if (!term.quoted) {
      out += term.value;
      continue;
    }
    out += '"';
    for (char c : term.value) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out;
}

}  // namespace shortener::filter
