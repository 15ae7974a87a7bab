// Fuzzes lib/useragent/user_agent.h: Classify, which reads the User-Agent
// of every recorded click.
//
// Input: the header value. Invariants, besides no memory error or UB:
//  - browser and os are short printable ASCII names from the rule tables,
//    never text of the input: over the whole run they take at most a few
//    hundred distinct values (statistics group by them);
//  - os_version is empty, one to three dot-separated runs of one to six
//    digits, or a Windows release name ("Vista", "XP");
//    browser_major is 0..999999999;
//  - a bot (the empty agent included) has device kBot, os "Other" and no
//    os_version, and device kBot only for bots;
//  - only the first 1024 bytes count, and Classify is deterministic;
//  - BatchClassifier (the per-batch memo RecordClicks uses), given the
//    input's lines in order, answers each as Classify does, keeping at
//    most its bound.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "lib/useragent/user_agent.h"
#include "tests/fuzz/fuzz_check.h"

namespace shortener::useragent {
namespace {

constexpr size_t kMaxExamined = 1024;  // user_agent.h
// The tables hold well under a hundred names each; a few hundred means the
// names come from the input.
constexpr size_t kMaxDistinctNames = 300;

bool IsTableName(absl::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != ' ' && c != '-' && c != '!' &&
        c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

bool IsVersion(absl::string_view version) {
  if (version.empty() || version == "Vista" || version == "XP") return true;
  int components = 1;
  size_t digits = 0;
  for (char c : version) {
    if (c == '.') {
      if (digits == 0) return false;
      ++components;
      digits = 0;
    } else if (absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      ++digits;
      if (digits > 6) return false;
    } else {
      return false;
    }
  }
  return digits > 0 && components <= 3;
}

void CheckNameCardinality(const ClientInfo& info) {
  static auto* names = new absl::flat_hash_set<std::string>();
  names->insert("b:" + info.browser);
  names->insert("o:" + info.os);
  FUZZ_CHECK(names->size() <= kMaxDistinctNames);
}

}  // namespace
}  // namespace shortener::useragent

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shortener::useragent;
  const absl::string_view ua(reinterpret_cast<const char*>(data), size);
  const ClientInfo info = Classify(ua);
  FUZZ_CHECK(IsTableName(info.browser) && IsTableName(info.os));
  FUZZ_CHECK(IsVersion(info.os_version));
  FUZZ_CHECK(info.browser_major >= 0 && info.browser_major <= 999999999);
  FUZZ_CHECK(info.bot == (info.device == DeviceType::kBot));
  if (info.bot) FUZZ_CHECK(info.os == "Other" && info.os_version.empty());
  if (absl::StripAsciiWhitespace(ua).empty()) FUZZ_CHECK(info.bot);
  FUZZ_CHECK(DeviceTypeName(info.device).size() <= 7);
  CheckNameCardinality(info);
  FUZZ_CHECK(Classify(ua) == info);
  if (size > kMaxExamined) FUZZ_CHECK(Classify(ua.substr(0, kMaxExamined)) == info);
  // The lines of the input as the agents of one batch, repeats included.
  const std::vector<absl::string_view> agents = absl::StrSplit(ua, '\n');
  BatchClassifier memo(4);
  for (absl::string_view agent : agents) {
    FUZZ_CHECK(memo.Classify(agent) == Classify(agent));
    FUZZ_CHECK(memo.agents_kept() <= 4);
  }
  return 0;
}
