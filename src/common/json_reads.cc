#include "common/json_reads.h"

#include <algorithm>
#include <climits>

#include "common/json_nesting.h"
#include "common/limits.h"

namespace serac {

void AppendJsonString(std::string& out, std::string_view text) {
  // Locations, names and endpoints are nearly always printable ASCII without quotes or
  // backslashes, which JSON writes as they are; anything else goes through the JSON writer.
  const bool plain = std::all_of(text.begin(), text.end(),
                                 [](char c) { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\'; });
  if (plain) {
    out += '"';
    out += text;
    out += '"';
  } else {
    out += Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

Result<Json> ParseJson(std::string_view text) {
  if (!JsonNestingWithin(text, limits::kJsonNestingDepthMax)) {
    return Error(ErrorCode::kInvalidArgument, "JSON nested deeper than limits::kJsonNestingDepthMax (" +
                                                  std::to_string(limits::kJsonNestingDepthMax) + " levels)");
  }
  Json parsed = Json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_discarded()) return parsed;
  // Parsed again for where it fails: the first byte the parser could not take, as an editor's
  // line and column (1-based).
  size_t failed_at = text.size();
  try {
    const Json unreachable = Json::parse(text);  // throws: the text did not parse above
    static_cast<void>(unreachable);
  } catch (const Json::parse_error& e) {
    failed_at = std::min(text.size(), e.byte > 0 ? e.byte - 1 : 0);
  } catch (const Json::exception&) {
    // A number too large for any JSON number type (out_of_range) has no byte position.
    return Error(ErrorCode::kInvalidArgument, "malformed JSON: a number out of range");
  }
  const std::string_view before = text.substr(0, failed_at);
  const size_t line = static_cast<size_t>(std::count(before.begin(), before.end(), '\n')) + 1;
  const size_t line_start = before.rfind('\n');
  const size_t column = failed_at - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
  // The text there is not quoted: a configuration file's broken line may hold a secret.
  return Error(ErrorCode::kInvalidArgument,
               "malformed JSON at line " + std::to_string(line) + ", column " + std::to_string(column) +
                   (failed_at >= text.size() ? " (the text ends too early)" : ""));
}

std::string StringOr(const Json& object, const char* key, std::string_view fallback) {
  if (!object.is_object()) return std::string(fallback);
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return std::string(fallback);
  return it->get<std::string>();
}

Result<const Json*> RequiredMember(const Json& object, const char* key, Json::value_t type) {
  if (!object.is_object())
    return Error(ErrorCode::kInvalidArgument, std::string("expected an object holding ") + key);
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    return Error(ErrorCode::kInvalidArgument, std::string("missing field: ") + key);
  }
  bool type_ok = it->type() == type || (type == Json::value_t::number_integer && it->is_number_integer());
  if (!type_ok) return Error(ErrorCode::kInvalidArgument, std::string("wrong type for field: ") + key);
  return &*it;
}

Result<int64_t> RequiredInt(const Json& object, const char* key) {
  SERAC_ASSIGN_OR_RETURN(const Json* value, RequiredMember(object, key, Json::value_t::number_integer));
  if (value->is_number_unsigned() && value->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    return Error(ErrorCode::kInvalidArgument, std::string("number out of range: ") + key);
  }
  return value->get<int64_t>();
}

Result<std::optional<int64_t>> OptionalInt(const Json& object, const char* key) {
  if (!object.is_object())
    return Error(ErrorCode::kInvalidArgument, std::string("expected an object holding ") + key);
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::optional<int64_t>();
  SERAC_ASSIGN_OR_RETURN(int64_t value, RequiredInt(object, key));
  return std::optional<int64_t>(value);
}

Result<std::string> RequiredString(const Json& object, const char* key) {
  SERAC_ASSIGN_OR_RETURN(const Json* value, RequiredMember(object, key, Json::value_t::string));
  return value->get<std::string>();
}

Result<std::map<std::string, std::string>> StringMap(const Json& object) {
  if (!object.is_object()) return Error(ErrorCode::kInvalidArgument, "properties must be an object");
  std::map<std::string, std::string> out;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (!it->is_string()) {
      return Error(ErrorCode::kInvalidArgument, "property value must be a string: " + it.key());
    }
    out[it.key()] = it->get<std::string>();
  }
  return out;
}

}  // namespace serac
