#include "services/shorten/rpc_counters.h"

#include "absl/strings/str_cat.h"

namespace shortener::service {

const char* RpcName(Rpc rpc) {
  switch (rpc) {
    case Rpc::kShorten:
      return "Shorten";
    case Rpc::kBatchShorten:
      return "BatchShorten";
    case Rpc::kResolve:
      return "Resolve";
    case Rpc::kBatchResolve:
      return "BatchResolve";
    case Rpc::kGetLink:
      return "GetLink";
    case Rpc::kListLinks:
      return "ListLinks";
    case Rpc::kRevoke:
      return "Revoke";
    case Rpc::kUpdateLink:
      return "UpdateLink";
    case Rpc::kDeleteLink:
      return "DeleteLink";
    case Rpc::kRevokeLinks:
      return "RevokeLinks";
    case Rpc::kDeleteLinks:
      return "DeleteLinks";
    case Rpc::kRecordClicks:
      return "RecordClicks";
    case Rpc::kGetClickStats:
      return "GetClickStats";
    case Rpc::kGetQrCode:
      return "GetQrCode";
    case Rpc::kWatchInvalidations:
      return "WatchInvalidations";
    case Rpc::kCreateApiKey:
      return "CreateApiKey";
    case Rpc::kListApiKeys:
      return "ListApiKeys";
    case Rpc::kRevokeApiKey:
      return "RevokeApiKey";
  }
  return "unknown";
}

std::string RpcCounters::Summary() const {
  std::string line = "served:";
  for (size_t i = 0; i < kRpcCount; ++i) {
    Rpc rpc = static_cast<Rpc>(i);
    absl::StrAppend(&line, " ", RpcName(rpc), "=", Get(rpc));
  }
  return line;
}

}  // namespace shortener::service
