// Typed reads from client JSON that fail with kInvalidArgument instead of throwing.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "common/json_nesting.h"
#include "common/limits.h"
#include "iceberg/metadata_internal.h"

namespace serac::iceberg {

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
  if (parsed.is_discarded()) return Error(ErrorCode::kInvalidArgument, "malformed JSON");
  return parsed;
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

namespace {

Status Invalid(std::string message) { return Error(ErrorCode::kInvalidArgument, std::move(message)); }

bool FitsInt32(const Json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>() <= static_cast<uint64_t>(INT32_MAX);
  if (!value.is_number_integer()) return false;
  const int64_t number = value.get<int64_t>();
  return number >= INT32_MIN && number <= INT32_MAX;
}

int8_t Base64Digit(char c) {
  if (c >= 'A' && c <= 'Z') return static_cast<int8_t>(c - 'A');
  if (c >= 'a' && c <= 'z') return static_cast<int8_t>(c - 'a' + 26);
  if (c >= '0' && c <= '9') return static_cast<int8_t>(c - '0' + 52);
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::string ShownJson(const Json& value) {
  constexpr size_t kShownBytesMax = 80;
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > kShownBytesMax) text = text.substr(0, kShownBytesMax) + "...";
  return text;
}

Result<int32_t> RequiredInt32(const Json& object, const char* key) {
  if (!object.is_object()) return Invalid(std::string("expected an object holding ") + key);
  auto it = object.find(key);
  if (it == object.end()) return Invalid(std::string("Cannot parse missing int: ") + key);
  if (!FitsInt32(*it))
    return Invalid(std::string("Cannot parse to an integer value: ") + key + ": " + ShownJson(*it));
  return static_cast<int32_t>(it->get<int64_t>());
}

Result<std::optional<int32_t>> OptionalInt32(const Json& object, const char* key) {
  if (!object.is_object()) return Invalid(std::string("expected an object holding ") + key);
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::optional<int32_t>();
  SERAC_ASSIGN_OR_RETURN(int32_t value, RequiredInt32(object, key));
  return std::optional<int32_t>(value);
}

Result<bool> RequiredBool(const Json& object, const char* key) {
  if (!object.is_object()) return Invalid(std::string("expected an object holding ") + key);
  auto it = object.find(key);
  if (it == object.end()) return Invalid(std::string("Cannot parse missing boolean: ") + key);
  if (!it->is_boolean())
    return Invalid(std::string("Cannot parse to a boolean value: ") + key + ": " + ShownJson(*it));
  return it->get<bool>();
}

Status CheckOptionalString(const Json& object, const char* key) {
  if (!object.is_object()) return Invalid(std::string("expected an object holding ") + key);
  auto it = object.find(key);
  if (it == object.end() || it->is_null() || it->is_string()) return Status::Ok();
  return Invalid(std::string("Cannot parse to a string value: ") + key + ": " + ShownJson(*it));
}

Status CheckStringMap(const Json& object, const char* key) {
  if (!object.is_object()) return Invalid(std::string("expected an object holding ") + key);
  auto it = object.find(key);
  if (it == object.end()) return Invalid(std::string("Cannot parse missing map: ") + key);
  if (!it->is_object()) {
    return Invalid(std::string("Cannot parse string map from non-object value: ") + key + ": " +
                   ShownJson(*it));
  }
  for (auto entry = it->begin(); entry != it->end(); ++entry) {
    if (!entry->is_string()) {
      return Invalid("Cannot parse to a string value: " + entry.key() + ": " + ShownJson(*entry));
    }
  }
  return Status::Ok();
}

namespace {

// A list member whose every element passes `element_ok`; `element_error` words the failure the
// way the reference's JsonUtil does for that element type.
template <typename ElementOk>
Status CheckList(const Json& object, const char* key, ElementOk element_ok, const char* element_error) {
  if (!object.is_object()) return Invalid(std::string("expected an object holding ") + key);
  auto it = object.find(key);
  if (it == object.end()) return Invalid(std::string("Cannot parse missing list: ") + key);
  if (!it->is_array()) {
    return Invalid(std::string("Cannot parse JSON array from non-array value: ") + key + ": " +
                   ShownJson(*it));
  }
  for (const Json& element : *it) {
    if (!element_ok(element)) return Invalid(std::string(element_error) + key + ": " + ShownJson(element));
  }
  return Status::Ok();
}

}  // namespace

Status CheckStringList(const Json& object, const char* key) {
  return CheckList(
      object, key, [](const Json& element) { return element.is_string(); },
      "Cannot parse string from non-text value in ");
}

Status CheckInt32List(const Json& object, const char* key) {
  return CheckList(
      object, key, [](const Json& element) { return FitsInt32(element); },
      "Cannot parse integer from non-int value in ");
}

// The rules of java.util.Base64.getDecoder(): the standard alphabet, no line breaks, padding
// optional but exact when present, and never a lone digit in the last group.
bool IsBase64(std::string_view text) {
  size_t digits = 0;
  size_t i = 0;
  for (; i < text.size() && text[i] != '='; ++i) {
    if (Base64Digit(text[i]) < 0) return false;
    ++digits;
  }
  const size_t tail = digits % 4;
  if (tail == 1) return false;
  const size_t padding = text.size() - i;
  if (padding == 0) return true;
  if (tail == 0) return false;  // '=' where a group starts
  const size_t expected = tail == 2 ? 2 : 1;
  return padding == expected && text.substr(i) == std::string_view("==", expected);
}

Result<std::map<std::string, std::string>> PropertyUpdates(const Json& update) {
  // Writers before the key was renamed sent "updated"; the reference reads it indefinitely.
  const char* key = !update.contains("updates") && update.contains("updated") ? "updated" : "updates";
  SERAC_ASSIGN_OR_RETURN(const Json* updates, RequiredMember(update, key, Json::value_t::object));
  return StringMap(*updates);
}

Result<std::vector<std::string>> PropertyRemovals(const Json& update) {
  // Likewise "removed" for "removals".
  const char* key = !update.contains("removals") && update.contains("removed") ? "removed" : "removals";
  SERAC_ASSIGN_OR_RETURN(const Json* removals, RequiredMember(update, key, Json::value_t::array));
  std::vector<std::string> out;
  out.reserve(removals->size());
  for (const Json& name : *removals) {
    if (!name.is_string()) return Invalid(std::string(key) + " must hold strings");
    out.push_back(name.get<std::string>());
  }
  return out;
}

}  // namespace serac::iceberg
