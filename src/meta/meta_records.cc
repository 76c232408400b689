#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "common/limits.h"
#include "meta/meta_records_internal.h"

namespace serac::meta {
namespace {

constexpr char kLevelSeparator = '\x1F';

using nlohmann::json;

// Field names of the header object; short because they are stored in every row.
constexpr const char* kContentType = "ct";
constexpr const char* kContentEncoding = "ce";
constexpr const char* kContentLanguage = "cl";
constexpr const char* kContentDisposition = "cd";
constexpr const char* kCacheControl = "cc";
constexpr const char* kExpires = "ex";
constexpr const char* kUserMetadata = "meta";
constexpr const char* kTags = "tags";

using Pairs = std::vector<std::pair<std::string, std::string>>;

void PutIfSet(json& out, const char* name, const std::string& value) {
  if (!value.empty()) out[name] = value;
}

void PutPairsIfAny(json& out, const char* name, const Pairs& pairs) {
  if (pairs.empty()) return;
  json list = json::array();
  for (const auto& [key, value] : pairs) list.push_back(json::array({key, value}));
  out[name] = std::move(list);
}

std::string GetString(const json& in, const char* name) {
  auto found = in.find(name);
  return found == in.end() ? std::string() : found->get<std::string>();
}

Pairs GetPairs(const json& in, const char* name) {
  Pairs pairs;
  auto found = in.find(name);
  if (found == in.end()) return pairs;
  for (const json& pair : *found) {
    pairs.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
  }
  return pairs;
}

Status Corrupt(const char* what, const std::exception& error) {
  return Error(ErrorCode::kInternal, std::string("stored ") + what + " are malformed: " + error.what());
}

}  // namespace

std::string EncodeHeaders(const ObjectHeaders& headers) {
  json out = json::object();
  PutIfSet(out, kContentType, headers.content_type);
  PutIfSet(out, kContentEncoding, headers.content_encoding);
  PutIfSet(out, kContentLanguage, headers.content_language);
  PutIfSet(out, kContentDisposition, headers.content_disposition);
  PutIfSet(out, kCacheControl, headers.cache_control);
  PutIfSet(out, kExpires, headers.expires);
  PutPairsIfAny(out, kUserMetadata, headers.user_metadata);
  PutPairsIfAny(out, kTags, headers.tags);
  if (out.empty()) return {};
  // Header values come from clients and need not be valid UTF-8; replace rather than throw.
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<ObjectHeaders> DecodeHeaders(const std::string& text) {
  ObjectHeaders headers;
  if (text.empty()) return headers;
  try {
    json in = json::parse(text);
    headers.content_type = GetString(in, kContentType);
    headers.content_encoding = GetString(in, kContentEncoding);
    headers.content_language = GetString(in, kContentLanguage);
    headers.content_disposition = GetString(in, kContentDisposition);
    headers.cache_control = GetString(in, kCacheControl);
    headers.expires = GetString(in, kExpires);
    headers.user_metadata = GetPairs(in, kUserMetadata);
    headers.tags = GetPairs(in, kTags);
  } catch (const std::exception& error) {
    return Corrupt("headers", error);
  }
  return headers;
}

std::string EncodeSegments(const std::vector<Segment>& segments) {
  json list = json::array();
  for (const Segment& segment : segments) list.push_back(json::array({segment.blob_id, segment.size}));
  return list.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<std::vector<Segment>> DecodeSegments(const std::string& text) {
  std::vector<Segment> segments;
  if (text.empty()) return segments;
  try {
    json list = json::parse(text);
    segments.reserve(list.size());
    for (const json& entry : list) {
      segments.push_back(Segment{entry.at(0).get<std::string>(), entry.at(1).get<uint64_t>()});
    }
  } catch (const std::exception& error) {
    return Corrupt("segments", error);
  }
  return segments;
}

// Each piece is [size] (inline) or [size, shared_id].
std::string EncodePieces(const StoredPieces& stored) {
  json list = json::array();
  for (const StoredPiece& piece : stored.pieces) {
    list.push_back(piece.shared_id == 0 ? json::array({piece.size})
                                        : json::array({piece.size, piece.shared_id}));
  }
  if (stored.inline_encoding == InlineEncoding::kPlain) return list.dump();
  return json{{"inline", "zstd"}, {"pieces", std::move(list)}}.dump();
}

Result<StoredPieces> DecodePieces(const std::string& text) {
  StoredPieces stored;
  if (text.empty()) return stored;
  try {
    json parsed = json::parse(text);
    const json* list = &parsed;
    if (parsed.is_object()) {
      const std::string encoding = parsed.at("inline").get<std::string>();
      if (encoding != "zstd")
        return Error(ErrorCode::kInternal, "stored pieces name an unknown encoding: " + encoding);
      stored.inline_encoding = InlineEncoding::kZstd;
      list = &parsed.at("pieces");
    }
    stored.pieces.reserve(list->size());
    for (const json& entry : *list) {
      StoredPiece piece{entry.at(0).get<uint64_t>(), 0};
      if (entry.size() > 1) piece.shared_id = entry.at(1).get<int64_t>();
      stored.pieces.push_back(piece);
    }
  } catch (const std::exception& error) {
    return Corrupt("pieces", error);
  }
  return stored;
}

Status CheckWriteCondition(const std::string* current_etag, const WriteCondition& condition) {
  if (condition.if_none_match_any && current_etag != nullptr) {
    return Error(ErrorCode::kPreconditionFailed, "If-None-Match: the object exists");
  }
  if (!condition.if_match) return Status::Ok();
  if (current_etag == nullptr)
    return Error(ErrorCode::kPreconditionFailed, "If-Match: the object does not exist");
  if (*condition.if_match != "*" && *condition.if_match != *current_etag) {
    return Error(ErrorCode::kPreconditionFailed, "If-Match: the ETag differs");
  }
  return Status::Ok();
}

Status ValidateObject(const ObjectRecord& object) {
  if (!object.inline_data.empty() && !object.segments.empty()) {
    return Error(ErrorCode::kInternal, "object has both inline data and segments");
  }
  if (object.pieces.empty()) return Status::Ok();
  if (!object.segments.empty()) return Error(ErrorCode::kInternal, "object has both segments and pieces");
  uint64_t total = 0;
  uint64_t inline_total = 0;
  for (const Piece& piece : object.pieces) {
    total += piece.size;
    if (piece.sha256.empty()) {
      inline_total += piece.size;
    } else if (piece.sha256.size() != 32) {
      return Error(ErrorCode::kInternal, "a shared piece's digest must be 32 bytes");
    }
  }
  if (total != object.size || inline_total != object.inline_data.size()) {
    return Error(ErrorCode::kInternal, "object pieces do not add up to its size and inline bytes");
  }
  return Status::Ok();
}

int64_t EntityKindCode(EntityKind kind) { return kind == EntityKind::kView ? 1 : 0; }

const char* EntityKindName(EntityKind kind) { return kind == EntityKind::kView ? "view" : "table"; }

std::string EncodeNamespacePath(const NamespaceLevels& levels) {
  std::string path;
  for (size_t i = 0; i < levels.size(); ++i) {
    if (i > 0) path += kLevelSeparator;
    path += levels[i];
  }
  return path;
}

NamespaceLevels DecodeNamespacePath(const std::string& path) {
  NamespaceLevels levels;
  if (path.empty()) return levels;
  size_t start = 0;
  for (;;) {
    size_t end = path.find(kLevelSeparator, start);
    levels.push_back(path.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return levels;
    start = end + 1;
  }
}

Status ValidateNamespaceLevels(const NamespaceLevels& levels) {
  if (levels.empty()) return Error(ErrorCode::kInvalidArgument, "a namespace needs at least one level");
  for (const std::string& level : levels) {
    if (level.empty()) return Error(ErrorCode::kInvalidArgument, "a namespace level cannot be empty");
    if (level.find(kLevelSeparator) != std::string::npos) {
      return Error(ErrorCode::kInvalidArgument, "a namespace level cannot contain the byte 0x1F");
    }
  }
  return Status::Ok();
}

std::string EncodeNamespaceProperties(const std::map<std::string, std::string>& properties) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, value] : properties) object[name] = value;
  // Replace invalid UTF-8 rather than throw: properties come from clients.
  return object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<std::map<std::string, std::string>> DecodeNamespaceProperties(const std::string& text) {
  nlohmann::json object = nlohmann::json::parse(text, nullptr, false);
  if (!object.is_object())
    return Error(ErrorCode::kIoError, "stored namespace properties are not a JSON object");
  std::map<std::string, std::string> properties;
  for (const auto& [name, value] : object.items()) {
    if (!value.is_string()) return Error(ErrorCode::kIoError, "stored namespace property is not a string");
    properties.emplace(name, value.get<std::string>());
  }
  return properties;
}

// "a.b.name" for messages; levels may themselves hold dots, so this is for humans only.
std::string DisplayName(const NamespaceLevels& levels, const std::string& name) {
  std::string display;
  for (const std::string& level : levels) display += level + ".";
  return display + name;
}

Status ValidateEntity(const EntityRecord& entity) {
  SERAC_RETURN_IF_ERROR(ValidateNamespaceLevels(entity.levels));
  if (entity.name.empty()) return Error(ErrorCode::kInvalidArgument, "a table or view name cannot be empty");
  return Status::Ok();
}

// Two swaps of one entity in one commit would make "expected" ambiguous.
Status RejectDuplicateSwaps(const std::vector<MetadataSwap>& swaps) {
  std::set<std::pair<std::string, std::string>> seen;
  for (const MetadataSwap& swap : swaps) {
    std::string key = swap.id.warehouse + '\x1F' + EncodeNamespacePath(swap.id.levels);
    if (!seen.emplace(std::move(key), swap.id.name).second) {
      return Error(ErrorCode::kInvalidArgument,
                   "one commit changes " + DisplayName(swap.id.levels, swap.id.name) + " twice");
    }
  }
  return Status::Ok();
}

// Applies a properties change to `properties` and reports it; fails if a key is both set and removed.
Result<NamespacePropertiesReport> ApplyPropertiesChange(std::map<std::string, std::string>& properties,
                                                        const NamespacePropertiesChange& change) {
  NamespacePropertiesReport report;
  std::set<std::string> seen_removals;
  for (const std::string& key : change.removals) {
    if (change.updates.count(key) != 0) {
      return Error(ErrorCode::kInvalidArgument, "property is both updated and removed: " + key);
    }
    if (!seen_removals.insert(key).second) continue;
    (properties.erase(key) != 0 ? report.removed : report.missing).push_back(key);
  }
  for (const auto& [key, value] : change.updates) {
    properties[key] = value;
    report.updated.push_back(key);
  }
  return report;
}

Status ValidateMaintenanceSetting(const MaintenanceSetting& setting) {
  if (setting.type.empty()) return Error(ErrorCode::kInvalidArgument, "a maintenance type cannot be empty");
  if (setting.json.size() > limits::kMaintenanceSettingBytesMax) {
    return Error(ErrorCode::kLimitExceeded, "maintenance settings are larger than " +
                                                std::to_string(limits::kMaintenanceSettingBytesMax) +
                                                " bytes");
  }
  return Status::Ok();
}

Status ValidateMaintenanceJob(const MaintenanceJobRecord& job) {
  if (job.table_uuid.empty()) return Error(ErrorCode::kInvalidArgument, "a maintenance job needs a table");
  if (job.type.empty()) return Error(ErrorCode::kInvalidArgument, "a maintenance type cannot be empty");
  if (job.id < 0) return Error(ErrorCode::kInvalidArgument, "a maintenance job id cannot be negative");
  return Status::Ok();
}

}  // namespace serac::meta
