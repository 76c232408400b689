// JSON documents in and out of the protocols that speak it (the Iceberg REST catalog, the admin
// API): the one way a client's JSON text is parsed, its nesting depth checked against
// limits::kJsonNestingDepthMax before any recursion, and typed reads of members that fail with
// kInvalidArgument naming the member instead of throwing.
// Pulls in nlohmann/json: include it from .cc files, never from a widely included header.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace serac {

using Json = nlohmann::json;

Result<Json> ParseJson(std::string_view text);
Result<const Json*> RequiredMember(const Json& object, const char* key, Json::value_t type);
Result<int64_t> RequiredInt(const Json& object, const char* key);
Result<std::optional<int64_t>> OptionalInt(const Json& object, const char* key);  // null = absent
Result<std::string> RequiredString(const Json& object, const char* key);
// The member's text when `object` is an object holding a string under `key`, else `fallback`
// (Json::value throws when the member has another type).
std::string StringOr(const Json& object, const char* key, std::string_view fallback);
Result<std::map<std::string, std::string>> StringMap(const Json& object);  // {"k": "v"} only
// Appends `text` as a JSON string (quoted and escaped as Json::dump would), without building a Json.
void AppendJsonString(std::string& out, std::string_view text);

}  // namespace serac
