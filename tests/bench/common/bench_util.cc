#include "tests/bench/common/bench_util.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace shortener::bench {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(s.size() - n);
}

bool NumberAfter(absl::string_view output, absl::string_view prefix, double* value) {
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (!absl::ConsumePrefix(&line, prefix)) continue;
    std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    return !words.empty() && absl::SimpleAtod(words[0], value);
  }
  return false;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view v = line;
    if (absl::ConsumePrefix(&v, "model name")) {
      v = absl::StripLeadingAsciiWhitespace(v);
      absl::ConsumePrefix(&v, ":");
      return std::string(absl::StripAsciiWhitespace(v));
    }
  }
  return "unknown";
}

}  // namespace shortener::bench
