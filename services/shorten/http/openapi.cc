#include "services/shorten/http/openapi.h"

#include <map>
#include <memory>
#include <set>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace shortener::service::http {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

// A JSON value whose objects keep their keys sorted: the document's bytes
// depend on nothing but the routes.
struct Json {
  using Object = std::map<std::string, Json>;
  using Array = std::vector<Json>;
  std::variant<std::string, bool, int, Object, Array> value;

  Json() : value(Object()) {}
  Json(const char* s) : value(std::string(s)) {}  // NOLINT: literals read as strings
  Json(std::string s) : value(std::move(s)) {}    // NOLINT
  Json(bool b) : value(b) {}                      // NOLINT
  Json(int i) : value(i) {}                       // NOLINT
  Json(Array a) : value(std::move(a)) {}          // NOLINT

  Json& operator[](const std::string& key) { return std::get<Object>(value)[key]; }
  void Append(Json item) {
    if (!std::holds_alternative<Array>(value)) value = Array();
    std::get<Array>(value).push_back(std::move(item));
  }

  void Write(int indent, std::string& out) const {
    const std::string pad(static_cast<size_t>(indent) + 2, ' ');
    if (const auto* s = std::get_if<std::string>(&value)) {
      AppendString(*s, out);
    } else if (const auto* b = std::get_if<bool>(&value)) {
      out += *b ? "true" : "false";
    } else if (const auto* i = std::get_if<int>(&value)) {
      absl::StrAppend(&out, *i);
    } else if (const auto* o = std::get_if<Object>(&value)) {
      if (o->empty()) return out.append("{}"), void();
      out += "{\n";
      for (auto it = o->begin(); it != o->end(); ++it) {
        out += pad;
        AppendString(it->first, out);
        out += ": ";
        it->second.Write(indent + 2, out);
        out += std::next(it) == o->end() ? "\n" : ",\n";
      }
      absl::StrAppend(&out, std::string(static_cast<size_t>(indent), ' '), "}");
    } else {
      const Array& a = std::get<Array>(value);
      if (a.empty()) return out.append("[]"), void();
      out += "[\n";
      for (size_t k = 0; k < a.size(); ++k) {
        out += pad;
        a[k].Write(indent + 2, out);
        out += k + 1 == a.size() ? "\n" : ",\n";
      }
      absl::StrAppend(&out, std::string(static_cast<size_t>(indent), ' '), "]");
    }
  }

  static void AppendString(const std::string& s, std::string& out) {
    out += '"';
    for (char c : s) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
};

Json Ref(const Descriptor* message) {
  Json ref;
  ref["$ref"] = absl::StrCat("#/components/schemas/", message->full_name());
  return ref;
}

// The schema of one value of `field` (not repeated), in proto3 JSON terms;
// messages met are added to `pending`.
Json ValueSchema(const FieldDescriptor* field, std::set<const Descriptor*>& pending) {
  Json schema;
  switch (field->type()) {
    case FieldDescriptor::TYPE_STRING:
      schema["type"] = "string";
      break;
    case FieldDescriptor::TYPE_BYTES:
      schema["type"] = "string";
      schema["format"] = "byte";
      break;
    case FieldDescriptor::TYPE_BOOL:
      schema["type"] = "boolean";
      break;
    case FieldDescriptor::TYPE_DOUBLE:
    case FieldDescriptor::TYPE_FLOAT:
      schema["type"] = "number";
      break;
    case FieldDescriptor::TYPE_INT64:
    case FieldDescriptor::TYPE_UINT64:
    case FieldDescriptor::TYPE_SINT64:
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64:
      schema["type"] = "string";  // proto3 JSON: 64-bit integers are strings
      schema["format"] = "int64";
      break;
    case FieldDescriptor::TYPE_ENUM: {
      schema["type"] = "string";
      Json::Array names;
      for (int i = 0; i < field->enum_type()->value_count(); ++i) {
        names.emplace_back(field->enum_type()->value(i)->name());
      }
      schema["enum"] = Json(std::move(names));
      break;
    }
    case FieldDescriptor::TYPE_MESSAGE: {
      const std::string& name = field->message_type()->full_name();
      if (name == "google.protobuf.Timestamp") {
        schema["type"] = "string";
        schema["format"] = "date-time";
      } else if (name == "google.protobuf.FieldMask") {
        schema["type"] = "string";
        schema["description"] = "field paths, comma-separated (lowerCamelCase)";
      } else if (name == "google.protobuf.Duration") {
        schema["type"] = "string";
        schema["description"] = "seconds with an s suffix, e.g. \"1.5s\"";
      } else {
        pending.insert(field->message_type());
        return Ref(field->message_type());
      }
      break;
    }
    default:
      schema["type"] = "integer";
      schema["format"] = "int32";
      break;
  }
  return schema;
}

Json FieldSchema(const FieldDescriptor* field, std::set<const Descriptor*>& pending) {
  if (field->is_map()) {
    Json schema;
    schema["type"] = "object";
    schema["additionalProperties"] = ValueSchema(field->message_type()->map_value(), pending);
    return schema;
  }
  if (field->is_repeated()) {
    Json schema;
    schema["type"] = "array";
    schema["items"] = ValueSchema(field, pending);
    return schema;
  }
  return ValueSchema(field, pending);
}

Json MessageSchema(const Descriptor* message, std::set<const Descriptor*>& pending) {
  Json schema;
  schema["type"] = "object";
  Json properties;
  for (int i = 0; i < message->field_count(); ++i) {
    const FieldDescriptor* field = message->field(i);
    properties[field->json_name()] = FieldSchema(field, pending);
  }
  schema["properties"] = properties;
  return schema;
}

bool IsWellKnownValue(const Descriptor* message) {
  return absl::StartsWith(message->full_name(), "google.protobuf.");
}

// The query parameters of `message` under `prefix`: scalar fields, lists of
// scalars, and the well-known types, nested messages dotted (a few levels).
void AddQueryParameters(const Descriptor* message, const std::string& prefix,
                        const std::set<std::string>& bound, int depth, Json& parameters,
                        std::set<const Descriptor*>& pending) {
  for (int i = 0; i < message->field_count(); ++i) {
    const FieldDescriptor* field = message->field(i);
    const std::string name = prefix + field->json_name();
    const std::string proto_path = prefix.empty() ? field->name() : prefix + field->name();
    if (bound.count(field->name()) > 0 || bound.count(proto_path) > 0 || field->is_map()) continue;
    const bool nested =
        field->type() == FieldDescriptor::TYPE_MESSAGE && !IsWellKnownValue(field->message_type());
    if (nested) {
      if (!field->is_repeated() && depth < 2) {
        AddQueryParameters(field->message_type(), name + ".", bound, depth + 1, parameters,
                           pending);
      }
      continue;
    }
    Json parameter;
    parameter["name"] = name;
    parameter["in"] = "query";
    parameter["schema"] = FieldSchema(field, pending);
    if (field->is_repeated()) parameter["description"] = "repeat the parameter for each value";
    parameters.Append(std::move(parameter));
  }
}

Json JsonContent(Json schema) {
  Json content;
  content["application/json"]["schema"] = std::move(schema);
  return content;
}

Json Operation(const HttpRoute& route, const std::string& operation_id,
               std::set<const Descriptor*>& pending) {
  const Descriptor* input = route.method->input_type();
  Json operation;
  operation["operationId"] = operation_id;
  operation["summary"] = absl::StrCat(route.method->full_name(), " (docs/api.md)");
  Json parameters;
  parameters.value = Json::Array();
  std::set<std::string> bound;
  for (const std::string& variable : route.path.Variables()) {
    bound.insert(variable);
    const absl::StatusOr<std::vector<const FieldDescriptor*>> path =
        ResolveFieldPath(input, variable);
    Json parameter;
    parameter["name"] = variable;
    parameter["in"] = "path";
    parameter["required"] = true;
    parameter["schema"] = ValueSchema(path->back(), pending);
    parameters.Append(std::move(parameter));
  }
  for (const auto& preset : route.presets) bound.insert(preset.first);
  if (route.body != "*") {
    if (!route.body.empty()) bound.insert(route.body);
    AddQueryParameters(input, "", bound, 0, parameters, pending);
  }
  operation["parameters"] = parameters;
  if (!route.body.empty()) {
    const Descriptor* body =
        route.body == "*" ? input : input->FindFieldByName(route.body)->message_type();
    pending.insert(body);
    operation["requestBody"]["required"] = true;
    operation["requestBody"]["content"] = JsonContent(Ref(body));
  }
  Json responses;
  if (route.response_body.empty()) {
    pending.insert(route.method->output_type());
    responses["200"]["description"] = "OK";
    responses["200"]["content"] = JsonContent(Ref(route.method->output_type()));
    if (route.method->output_type()->FindFieldByName("created") != nullptr) {
      responses["200"]["description"] = "OK: an existing link (created false)";
      responses["201"]["description"] = "Created (created true); Location: the link's path";
      responses["201"]["content"] = JsonContent(Ref(route.method->output_type()));
    }
  } else {
    const std::string& text = route.path.text();
    const char* type = absl::EndsWith(text, ".png")   ? "image/png"
                       : absl::EndsWith(text, ".svg") ? "image/svg+xml"
                                                      : "application/octet-stream";
    responses["200"]["description"] = absl::StrCat("the ", route.response_body, " field, raw");
    Json binary;
    binary["type"] = "string";
    binary["format"] = "binary";
    responses["200"]["content"][type]["schema"] = binary;
  }
  responses["default"]["description"] =
      "an error: google.rpc.Status; the HTTP status from the gRPC code (docs/api.md)";
  Json status;
  status["$ref"] = "#/components/schemas/google.rpc.Status";
  responses["default"]["content"] = JsonContent(status);
  operation["responses"] = responses;
  return operation;
}

Json Schemas(std::set<const Descriptor*> pending) {
  Json schemas;
  std::set<const Descriptor*> done;
  while (!pending.empty()) {
    const Descriptor* message = *pending.begin();
    pending.erase(pending.begin());
    if (!done.insert(message).second) continue;
    schemas[message->full_name()] = MessageSchema(message, pending);
  }
  Json status;
  status["type"] = "object";
  status["properties"]["code"]["type"] = "integer";
  status["properties"]["code"]["description"] = "the gRPC code (google.rpc.Code)";
  status["properties"]["message"]["type"] = "string";
  status["properties"]["details"]["type"] = "array";
  status["properties"]["details"]["items"]["type"] = "object";
  schemas["google.rpc.Status"] = status;
  return schemas;
}

}  // namespace

std::string OpenApiJson(const RouteTable& routes) {
  Json doc;
  doc["openapi"] = "3.0.3";
  doc["info"]["title"] = "shortener HTTP/JSON API";
  doc["info"]["version"] = "v1";
  doc["info"]["description"] =
      "Generated from proto/shortener/v1/shortener.proto's google.api.http options by "
      "shorten-openapi (services/shorten/http/openapi.h); do not edit. Every call needs "
      "Authorization: Bearer <api key>. See docs/api.md, \"HTTP/JSON API\".";
  doc["components"]["securitySchemes"]["bearer"]["type"] = "http";
  doc["components"]["securitySchemes"]["bearer"]["scheme"] = "bearer";
  Json requirement;
  requirement["bearer"] = Json(Json::Array());
  doc["security"].Append(std::move(requirement));
  std::set<const Descriptor*> pending;
  std::map<std::string, int> per_method;
  for (const HttpRoute& route : routes.routes()) {
    const int n = per_method[route.method->name()]++;
    const std::string id = n == 0 ? route.method->name() : absl::StrCat(route.method->name(), n);
    std::string method = route.http_method;
    for (char& c : method) c = static_cast<char>(c - 'A' + 'a');
    doc["paths"][route.path.text()][method] = Operation(route, id, pending);
  }
  doc["components"]["schemas"] = Schemas(std::move(pending));
  std::string out;
  doc.Write(0, out);
  out += '\n';
  return out;
}

}  // namespace shortener::service::http
