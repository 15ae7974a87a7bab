#include "services/shorten/http/transcoder.h"

#include <google/protobuf/util/json_util.h>

#include <map>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/common/status_macros.h"
#include "lib/common/utf8.h"
#include "services/shorten/http/http_status.h"

namespace shortener::service::http {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using FieldPath = std::vector<const FieldDescriptor*>;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// application/x-www-form-urlencoded decoding of one name or value.
absl::StatusOr<std::string> DecodeQueryPart(absl::string_view part) {
  std::string out;
  out.reserve(part.size());
  for (size_t i = 0; i < part.size(); ++i) {
    if (part[i] == '+') {
      out.push_back(' ');
    } else if (part[i] != '%') {
      out.push_back(part[i]);
    } else {
      const int hi = i + 2 < part.size() ? HexValue(part[i + 1]) : -1;
      const int lo = hi >= 0 ? HexValue(part[i + 2]) : -1;
      if (lo < 0) return absl::InvalidArgumentError("query: '%' not followed by two hex digits");
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    }
  }
  return out;
}

void AppendJsonString(absl::string_view text, std::string& out) {
  out.push_back('"');
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      constexpr char kHex[] = "0123456789abcdef";
      absl::StrAppend(&out, "\\u00", std::string(1, kHex[(c >> 4) & 0xf]),
                      std::string(1, kHex[c & 0xf]));
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

// A JSON parser's message up to its first line end (it adds the input's
// text and a caret below).
std::string Str(google::protobuf::StringPiece s) {
  const absl::string_view text(s.data(), s.size());
  return std::string(absl::StripTrailingAsciiWhitespace(text.substr(0, text.find('\n'))));
}

bool IsJsonMediaType(absl::string_view content_type) {
  const absl::string_view type =
      absl::StripAsciiWhitespace(content_type.substr(0, content_type.find(';')));
  return type.empty() || absl::EqualsIgnoreCase(type, "application/json");
}

std::string Canonical(const FieldPath& path) {
  return absl::StrJoin(path, ".",
                       [](std::string* out, const FieldDescriptor* f) { out->append(f->name()); });
}

// A JSON object assembled from query parameters, keyed by proto field name.
struct JsonTree {
  std::map<std::string, JsonTree> children;
  std::vector<std::string> values;  // JSON texts of a leaf's values
  bool repeated = false;

  void AppendTo(std::string& out) const {
    if (children.empty()) {
      if (repeated) absl::StrAppend(&out, "[", absl::StrJoin(values, ","), "]");
      if (!repeated) out.append(values.front());
      return;
    }
    out.push_back('{');
    bool first = true;
    for (const auto& [name, child] : children) {
      if (!first) out.push_back(',');
      first = false;
      AppendJsonString(name, out);
      out.push_back(':');
      child.AppendTo(out);
    }
    out.push_back('}');
  }
};

bool IsWellKnown(const Descriptor* message) {
  return absl::StartsWith(message->full_name(), "google.protobuf.");
}

// One query value as the JSON the proto3 mapping reads for `field`.
absl::StatusOr<std::string> QueryValueJson(const FieldDescriptor* field, absl::string_view name,
                                           absl::string_view value) {
  std::string json;
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL:
      if (value != "true" && value != "false") {
        return absl::InvalidArgumentError(
            absl::StrCat("query parameter \"", name, "\": expected true or false"));
      }
      return std::string(value);
    case FieldDescriptor::CPPTYPE_ENUM: {
      int number = 0;
      if (absl::SimpleAtoi(value, &number)) return absl::StrCat(number);
      break;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      if (!IsWellKnown(field->message_type())) {
        return absl::InvalidArgumentError(
            absl::StrCat("query parameter \"", name, "\": ", field->name(),
                         " is a message; name one of its fields (", name, ".FIELD)"));
      }
      break;
    default:
      break;
  }
  // Strings, bytes (base64), numbers (the parser reads and range-checks
  // quoted numbers), enum names and the well-known types' string forms.
  AppendJsonString(value, json);
  return json;
}

struct QueryContext {
  const HttpRoute& route;
  std::vector<std::string> bound;  // canonical paths the path and presets set
};

absl::Status AddQueryParameter(const QueryContext& context, const std::string& name,
                               const std::string& value, bool preset, JsonTree& tree) {
  const HttpRoute& route = context.route;
  auto refuse = [&name](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("query parameter \"", name, "\": ", why));
  };
  if (route.body == "*" && !preset) {
    return refuse("this route takes every field in its JSON body, none in the query");
  }
  absl::StatusOr<FieldPath> path = ResolveFieldPath(route.method->input_type(), name);
  if (!path.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown query parameter ", path.status().message()));
  }
  const std::string canonical = Canonical(*path);
  if (!route.body.empty() && path->front()->name() == route.body) {
    return refuse(absl::StrCat("field \"", route.body, "\" comes in the JSON body"));
  }
  if (!preset) {
    for (const std::string& bound : context.bound) {
      if (bound == canonical) return refuse("the request path sets this field");
    }
  }
  const FieldDescriptor* leaf = path->back();
  if (leaf->is_map()) return refuse("a map cannot be set from the query; send a JSON body");
  if (leaf->is_repeated() && leaf->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    return refuse("a list of messages cannot be set from the query");
  }
  SHORTENER_ASSIGN_OR_RETURN(std::string json, QueryValueJson(leaf, name, value));
  JsonTree* node = &tree;
  for (const FieldDescriptor* field : *path) node = &node->children[field->name()];
  if (!node->children.empty() || (!leaf->is_repeated() && !node->values.empty())) {
    return refuse("given more than once");
  }
  node->repeated = leaf->is_repeated();
  node->values.push_back(std::move(json));
  return absl::OkStatus();
}

absl::Status ApplyBody(const HttpRoute& route, const HttpRequestParts& parts, Message* request) {
  if (route.body.empty()) {
    if (!parts.body.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(route.http_method, " ", route.path.text(), " takes no request body"));
    }
    return absl::OkStatus();
  }
  if (!IsJsonMediaType(parts.content_type)) {
    return WithHttpStatus(
        absl::InvalidArgumentError(absl::StrCat("Content-Type must be application/json, got \"",
                                                parts.content_type, "\"")),
        415);
  }
  Message* target = request;
  if (route.body != "*") {
    const FieldDescriptor* field = request->GetDescriptor()->FindFieldByName(route.body);
    target = request->GetReflection()->MutableMessage(request, field);
  }
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const absl::string_view json = parts.body.empty() ? absl::string_view("{}") : parts.body;
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), target, options);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("body: ", Str(parsed.message())));
  }
  return absl::OkStatus();
}

// Sets the path variable `path` (a scalar field) to `text`.
absl::Status SetBoundField(const FieldPath& path, const std::string& field_name,
                           const std::string& text, Message* request) {
  Message* message = request;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    message = message->GetReflection()->MutableMessage(message, path[i]);
  }
  const FieldDescriptor* field = path.back();
  const Reflection* reflection = message->GetReflection();
  auto refuse = [&field_name, &text](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("path: {", field_name, "} \"", text, "\" ", why));
  };
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING: {
      // Percent-decoding can make any bytes; a proto3 string must be UTF-8
      // (gRPC would refuse the whole call, and protobuf log each one).
      if (!utf8::IsValid(text)) return refuse("is not valid UTF-8");
      const std::string before = reflection->GetString(*message, field);
      if (!before.empty() && before != text) {
        return refuse(absl::StrCat("differs from the body's \"", before, "\""));
      }
      reflection->SetString(message, field, text);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_INT32: {
      const bool wide = field->cpp_type() == FieldDescriptor::CPPTYPE_INT64;
      int64_t value = 0;
      if (!absl::SimpleAtoi(text, &value)) return refuse("is not an integer");
      if (!wide && (value < INT32_MIN || value > INT32_MAX)) return refuse("is out of range");
      const int64_t before =
          wide ? reflection->GetInt64(*message, field) : reflection->GetInt32(*message, field);
      if (before != 0 && before != value) return refuse("differs from the body's value");
      if (wide) reflection->SetInt64(message, field, value);
      if (!wide) reflection->SetInt32(message, field, static_cast<int32_t>(value));
      return absl::OkStatus();
    }
    default:
      return refuse("cannot be set from a path");
  }
}

absl::Status ApplyQuery(const RouteMatch& match, absl::string_view query, Message* request) {
  const HttpRoute& route = *match.route;
  QueryContext context{route, {}};
  for (const auto& binding : match.bindings) {
    SHORTENER_ASSIGN_OR_RETURN(FieldPath path,
                               ResolveFieldPath(route.method->input_type(), binding.first));
    context.bound.push_back(Canonical(path));
  }
  for (const auto& preset : route.presets) {
    SHORTENER_ASSIGN_OR_RETURN(FieldPath path,
                               ResolveFieldPath(route.method->input_type(), preset.first));
    context.bound.push_back(Canonical(path));
  }
  SHORTENER_ASSIGN_OR_RETURN(auto parameters, ParseQuery(query));
  JsonTree tree;
  for (const auto& [name, value] : parameters) {
    SHORTENER_RETURN_IF_ERROR(AddQueryParameter(context, name, value, false, tree));
  }
  for (const auto& [name, value] : route.presets) {
    SHORTENER_RETURN_IF_ERROR(AddQueryParameter(context, name, value, true, tree));
  }
  if (tree.children.empty()) return absl::OkStatus();
  std::string json;
  tree.AppendTo(json);
  std::unique_ptr<Message> from_query(request->New());
  google::protobuf::util::JsonParseOptions options;
  const auto parsed = google::protobuf::util::JsonStringToMessage(json, from_query.get(), options);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("query: ", Str(parsed.message())));
  }
  request->MergeFrom(*from_query);
  return absl::OkStatus();
}

std::string PercentEncodeSegment(absl::string_view text) {
  std::string out;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (absl::ascii_isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(c);
    } else {
      constexpr char kHex[] = "0123456789ABCDEF";
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xf]);
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseQuery(
    absl::string_view query) {
  std::vector<std::pair<std::string, std::string>> out;
  for (absl::string_view pair : absl::StrSplit(query, '&')) {
    if (pair.empty()) continue;
    if (out.size() == kMaxQueryParameters) {
      return absl::InvalidArgumentError(
          absl::StrCat("query: more than ", kMaxQueryParameters, " parameters"));
    }
    const size_t eq = pair.find('=');
    SHORTENER_ASSIGN_OR_RETURN(std::string name, DecodeQueryPart(pair.substr(0, eq)));
    std::string value;
    if (eq != absl::string_view::npos) {
      SHORTENER_ASSIGN_OR_RETURN(value, DecodeQueryPart(pair.substr(eq + 1)));
    }
    if (name.empty()) return absl::InvalidArgumentError("query: a parameter without a name");
    out.emplace_back(std::move(name), std::move(value));
  }
  return out;
}

absl::Status BuildRequest(const RouteMatch& match, const HttpRequestParts& parts,
                          Message* request) {
  const HttpRoute& route = *match.route;
  SHORTENER_RETURN_IF_ERROR(ApplyBody(route, parts, request));
  SHORTENER_RETURN_IF_ERROR(ApplyQuery(match, parts.query, request));
  for (const auto& [name, text] : match.bindings) {
    SHORTENER_ASSIGN_OR_RETURN(FieldPath path, ResolveFieldPath(route.method->input_type(), name));
    SHORTENER_RETURN_IF_ERROR(SetBoundField(path, name, text, request));
  }
  return absl::OkStatus();
}

absl::StatusOr<HttpAnswer> EncodeResponse(const HttpRoute& route, absl::string_view path,
                                          const Message& response) {
  HttpAnswer answer;
  const Descriptor* type = response.GetDescriptor();
  const Reflection* reflection = response.GetReflection();
  if (!route.response_body.empty()) {
    answer.body = reflection->GetString(response, type->FindFieldByName(route.response_body));
    const FieldDescriptor* content_type = type->FindFieldByName("content_type");
    if (content_type != nullptr && content_type->type() == FieldDescriptor::TYPE_STRING) {
      answer.content_type = reflection->GetString(response, content_type);
    }
    if (answer.content_type.empty()) answer.content_type = "application/octet-stream";
    return answer;
  }
  google::protobuf::util::JsonPrintOptions options;
  // Zeros, false and empty lists too ("created": false, "humanClicks": 0):
  // a client reading JSON should not have to know proto3's defaults.
  options.always_print_primitive_fields = true;
  const auto printed = google::protobuf::util::MessageToJsonString(response, &answer.body, options);
  if (!printed.ok()) {
    return absl::InternalError(absl::StrCat("response as JSON: ", Str(printed.message())));
  }
  answer.content_type = "application/json";
  const FieldDescriptor* created = type->FindFieldByName("created");
  const FieldDescriptor* code = type->FindFieldByName("code");
  if (created != nullptr && code != nullptr && created->type() == FieldDescriptor::TYPE_BOOL &&
      code->type() == FieldDescriptor::TYPE_STRING && reflection->GetBool(response, created)) {
    answer.status = 201;
    answer.location =
        absl::StrCat(path, "/", PercentEncodeSegment(reflection->GetString(response, code)));
  }
  return answer;
}

}  // namespace shortener::service::http
