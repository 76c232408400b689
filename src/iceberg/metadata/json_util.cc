// Reads of client JSON with the reference parsers' rules (its JsonUtil), failing with kInvalidArgument
// and their wording instead of throwing; the generic reads are common/json_reads.h.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "iceberg/metadata/metadata_internal.h"

namespace serac::iceberg {

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

namespace {

Status CheckString(const Json& object, const char* key, bool null_allowed) {
  if (!object.is_object()) return Invalid(std::string("expected an object holding ") + key);
  auto it = object.find(key);
  if (it == object.end() || it->is_string() || (null_allowed && it->is_null())) return Status::Ok();
  return Invalid(std::string("Cannot parse to a string value: ") + key + ": " + ShownJson(*it));
}

}  // namespace

Status CheckOptionalString(const Json& object, const char* key) { return CheckString(object, key, true); }

Status CheckStringOrAbsent(const Json& object, const char* key) { return CheckString(object, key, false); }

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
