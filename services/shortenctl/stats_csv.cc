#include "services/shortenctl/stats_csv.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <ostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "services/shortenctl/format.h"

namespace shortener::ctl {
namespace {

constexpr absl::string_view kLineEnd = "\r\n";
constexpr absl::string_view kTopPrefix = "top_";

std::string ErrnoText() { return std::strerror(errno); }

}  // namespace

std::string FormatBucketsCsv(const v1::GetClickStatsResponse& response) {
  std::string out = absl::StrCat("start_time,human_clicks,bot_clicks,unique_visitors", kLineEnd);
  for (const v1::ClickBucket& bucket : response.buckets()) {
    absl::StrAppend(&out, FormatTimestamp(bucket.start_time()), ",", bucket.human_clicks(), ",",
                    bucket.bot_clicks(), ",", bucket.unique_visitors(), kLineEnd);
  }
  return out;
}

std::string FormatTopListsCsv(const v1::GetClickStatsResponse& response) {
  std::string out = absl::StrCat("list,rank,value,clicks", kLineEnd);
  const google::protobuf::Descriptor* descriptor = response.GetDescriptor();
  const google::protobuf::Reflection* reflection = response.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(i);
    if (!field->is_repeated() || field->message_type() != v1::CountedValue::descriptor() ||
        !absl::StartsWith(field->name(), kTopPrefix)) {
      continue;
    }
    const std::string list = CsvCell(absl::string_view(field->name()).substr(kTopPrefix.size()));
    for (int rank = 0; rank < reflection->FieldSize(response, field); ++rank) {
      // The field's type is CountedValue (checked above) and `response` a
      // generated message, so its elements are generated CountedValues.
      const auto& entry = static_cast<const v1::CountedValue&>(
          reflection->GetRepeatedMessage(response, field, rank));
      absl::StrAppend(&out, list, ",", rank + 1, ",", CsvCell(entry.value()), ",", entry.clicks(),
                      kLineEnd);
    }
  }
  return out;
}

absl::Status CheckCsvFlags(const StatsFlags& flags, bool json) {
  if (!flags.csv && flags.csv_top.empty()) return absl::OkStatus();
  if (json) return absl::InvalidArgumentError("--csv and --csv_top do not go with --json");
  if (flags.csv_top.empty() || flags.csv_top == "-") return absl::OkStatus();
  std::ofstream probe(flags.csv_top, std::ios::app | std::ios::binary);
  if (!probe) {
    return absl::InvalidArgumentError(
        absl::StrCat("--csv_top: cannot write ", flags.csv_top, ": ", ErrnoText()));
  }
  return absl::OkStatus();
}

int WriteClickStatsCsv(const StatsFlags& flags, const v1::GetClickStatsResponse& response,
                       Console io) {
  io.out << FormatBucketsCsv(response);
  if (flags.csv_top == "-") {
    io.out << kLineEnd << FormatTopListsCsv(response);
  } else if (!flags.csv_top.empty()) {
    std::ofstream file(flags.csv_top, std::ios::trunc | std::ios::binary);
    if (file) file << FormatTopListsCsv(response);
    if (file) file.close();
    if (!file) {
      io.err << "shortenctl: cannot write " << flags.csv_top << ": " << ErrnoText() << "\n";
      return kExitServiceError;
    }
  }
  io.out.flush();
  return kExitOk;
}

}  // namespace shortener::ctl
