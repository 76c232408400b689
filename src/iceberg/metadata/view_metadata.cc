// View metadata (format v1): JSON, create and commit rules.
#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "iceberg/metadata/metadata_internal.h"
#include "iceberg/metadata/metadata_limits_internal.h"

namespace serac::iceberg {
namespace {

Status BadRequest(const std::string& message) { return Error(ErrorCode::kInvalidArgument, message); }

std::string Lowered(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool IsSqlRepresentation(const Json& representation) {
  return Lowered(StringOr(representation, "type", "")) == "sql";
}

// The reference's ViewVersionParser and representation parsers: what they refuse, Java engines
// could not load once serac stored it.
Status ValidateViewVersion(const Json& version) {
  if (!version.is_object()) return BadRequest("view version must be an object");
  SERAC_RETURN_IF_ERROR(RequiredInt32(version, "version-id").status());
  SERAC_RETURN_IF_ERROR(RequiredInt32(version, "schema-id").status());
  SERAC_RETURN_IF_ERROR(RequiredInt(version, "timestamp-ms").status());
  SERAC_RETURN_IF_ERROR(CheckStringMap(version, "summary"));
  SERAC_ASSIGN_OR_RETURN(const Json* representations,
                         RequiredMember(version, "representations", Json::value_t::array));
  for (const Json& representation : *representations) {
    if (!representation.is_object()) return BadRequest("view representations must be objects");
    SERAC_RETURN_IF_ERROR(RequiredString(representation, "type").status());
    if (IsSqlRepresentation(representation)) {
      SERAC_RETURN_IF_ERROR(RequiredString(representation, "sql").status());
      SERAC_RETURN_IF_ERROR(RequiredString(representation, "dialect").status());
    }
  }
  SERAC_RETURN_IF_ERROR(CheckOptionalString(version, "default-catalog"));
  SERAC_RETURN_IF_ERROR(CheckStringList(version, "default-namespace"));
  for (const Json& level : version.at("default-namespace")) {
    if (level.get<std::string>().find('\0') != std::string::npos) {
      return BadRequest("Cannot create a namespace with the null-byte character");
    }
  }
  return Status::Ok();
}

// What the specification's ViewVersion schema requires of a version a client sends, beyond what the
// reference's parser takes from a file: default-catalog a string when present (never null), and
// each representation a SQLViewRepresentation (type "sql", sql and dialect strings), the only
// kind the specification defines and every engine reads.
Status ValidateRequestedViewVersion(const Json& version) {
  SERAC_RETURN_IF_ERROR(CheckStringOrAbsent(version, "default-catalog"));
  for (const Json& representation : version.at("representations")) {
    if (!IsSqlRepresentation(representation)) {
      return BadRequest("view representation type must be \"sql\", not " + representation.at("type").dump());
    }
  }
  return Status::Ok();
}

// The same query under another id or time is the same version, as the reference decides.
// Two versions are the same when they differ only in id and time: this text of theirs is equal.
std::string ViewVersionContentKey(const Json& version) {
  Json content = version;
  for (const char* key : {"version-id", "timestamp-ms"}) content.erase(key);
  return content.dump();
}

// A version may hold at most one SQL text per dialect; other representations have none.
Status CheckDialectsUnique(const Json& version) {
  std::set<std::string> dialects;
  for (const Json& representation : version.at("representations")) {
    if (!IsSqlRepresentation(representation)) continue;
    const std::string dialect = Lowered(StringOr(representation, "dialect", ""));
    if (!dialects.insert(dialect).second) {
      // The reference's wording: conformance tests compare it.
      return BadRequest("Invalid view version: Cannot add multiple queries for dialect " + dialect);
    }
  }
  return Status::Ok();
}

class ViewBuilder {
 public:
  ViewBuilder(ViewModel base, int64_t now_ms) : metadata_(std::move(base)), now_ms_(now_ms) {}

  Status Apply(const Json& update);
  Result<int32_t> AddSchema(const Json& schema);
  Result<int32_t> AddVersion(const Json& requested);
  Status SetCurrentVersion(int32_t version_id);
  ViewCommitOutcome Finish();

 private:
  Status ApplyShared(const std::string& action, const Json& update);
  void TrimVersions();

  ViewModel metadata_;
  const int64_t now_ms_;  // the server's clock: when the commit moves to a version it did not add
  bool changed_ = false;
  std::set<int32_t> added_version_ids_;
  std::optional<int32_t> last_added_schema_id_;
  std::optional<int32_t> last_added_version_id_;
  std::optional<VersionLogEntry> history_entry_;
  // Stored schemas and versions by content (the reference's loops over all of them).
  ContentIds schema_ids_{"schema-id", SchemaContentKey, 0, /*last_wins=*/false};
  ContentIds version_ids_{"version-id", ViewVersionContentKey, 1, /*last_wins=*/false};
};

Result<int32_t> ViewBuilder::AddSchema(const Json& schema) {
  SERAC_RETURN_IF_ERROR(ValidateSchema(schema));
  if (std::optional<int32_t> existing = schema_ids_.Find(metadata_.schemas, schema)) {
    last_added_schema_id_ = *existing;
    return *last_added_schema_id_;
  }
  Json stored = schema;
  stored["schema-id"] = schema_ids_.NextId(metadata_.schemas);
  metadata_.schemas.push_back(stored);
  schema_ids_.Added(metadata_.schemas, metadata_.schemas.back());
  last_added_schema_id_ = stored["schema-id"].get<int32_t>();
  changed_ = true;
  return *last_added_schema_id_;
}

Result<int32_t> ViewBuilder::AddVersion(const Json& requested) {
  SERAC_RETURN_IF_ERROR(ValidateViewVersion(requested));
  SERAC_RETURN_IF_ERROR(ValidateRequestedViewVersion(requested));
  Json version = requested;
  if (version["schema-id"].get<int64_t>() == kLastAdded) {
    if (!last_added_schema_id_) return BadRequest("cannot use last added schema: none was added");
    version["schema-id"] = *last_added_schema_id_;
  }
  const int32_t schema_id = version["schema-id"].get<int32_t>();
  if (std::none_of(metadata_.schemas.begin(), metadata_.schemas.end(),
                   [&](const Json& s) { return s.at("schema-id").get<int32_t>() == schema_id; })) {
    return BadRequest("cannot add version with unknown schema " + std::to_string(schema_id));
  }
  SERAC_RETURN_IF_ERROR(CheckDialectsUnique(version));
  if (std::optional<int32_t> existing = version_ids_.Find(metadata_.versions, version)) {
    last_added_version_id_ = *existing;
    return *last_added_version_id_;
  }
  const int32_t version_id =
      std::max(version["version-id"].get<int32_t>(), version_ids_.NextId(metadata_.versions));
  version["version-id"] = version_id;
  metadata_.versions.push_back(version);
  version_ids_.Added(metadata_.versions, metadata_.versions.back());
  added_version_ids_.insert(version_id);
  last_added_version_id_ = version_id;
  changed_ = true;
  return version_id;
}

Status ViewBuilder::SetCurrentVersion(int32_t version_id) {
  if (version_id == kLastAdded) {
    if (!last_added_version_id_) return BadRequest("cannot set last added version: none was added");
    version_id = *last_added_version_id_;
  }
  const Json* version = metadata_.FindVersion(version_id);
  if (version == nullptr)
    return BadRequest("cannot set current version to unknown version " + std::to_string(version_id));
  if (version_id == metadata_.current_version_id) return Status::Ok();
  metadata_.current_version_id = version_id;
  // A version this commit added is logged at its own time; a move back to an older one at the
  // time of the change (the reference's rule).
  const bool added_here = added_version_ids_.count(version_id) != 0;
  history_entry_ =
      VersionLogEntry{added_here ? version->at("timestamp-ms").get<int64_t>() : now_ms_, version_id};
  changed_ = true;
  return Status::Ok();
}

Status ViewBuilder::ApplyShared(const std::string& action, const Json& update) {
  if (action == "assign-uuid") {
    SERAC_ASSIGN_OR_RETURN(std::string uuid, RequiredString(update, "uuid"));
    if (uuid == metadata_.view_uuid) return Status::Ok();
    if (!metadata_.view_uuid.empty()) return BadRequest("cannot reassign view uuid");
    metadata_.view_uuid = uuid;
  } else if (action == "upgrade-format-version") {
    SERAC_ASSIGN_OR_RETURN(int64_t version, RequiredInt(update, "format-version"));
    if (version > kViewFormatVersionMax)
      return BadRequest("unsupported view format version " + std::to_string(version));
    if (version < metadata_.format_version) return BadRequest("cannot downgrade view format version");
    if (version == metadata_.format_version) return Status::Ok();
    metadata_.format_version = static_cast<int>(version);
  } else if (action == "set-location") {
    SERAC_ASSIGN_OR_RETURN(std::string location, RequiredString(update, "location"));
    if (location.empty()) return BadRequest("location must not be empty");
    if (location == metadata_.location) return Status::Ok();
    metadata_.location = location;
  } else if (action == "set-properties") {
    SERAC_ASSIGN_OR_RETURN(auto properties, PropertyUpdates(update));
    bool any = false;
    for (const auto& [key, value] : properties) {
      auto [it, inserted] = metadata_.properties.try_emplace(key, value);
      any = any || inserted || it->second != value;
      it->second = value;
    }
    if (!any) return Status::Ok();
  } else if (action == "remove-properties") {
    SERAC_ASSIGN_OR_RETURN(std::vector<std::string> removals, PropertyRemovals(update));
    bool any = false;
    for (const std::string& key : removals) any = metadata_.properties.erase(key) != 0 || any;
    if (!any) return Status::Ok();
  } else {
    return Error(ErrorCode::kNotImplemented, "unknown view update action: " + action);
  }
  changed_ = true;
  return Status::Ok();
}

Status ViewBuilder::Apply(const Json& update) {
  if (!update.is_object()) return BadRequest("update must be an object");
  SERAC_ASSIGN_OR_RETURN(std::string action, RequiredString(update, "action"));
  if (action == "add-schema") {
    SERAC_ASSIGN_OR_RETURN(const Json* schema, RequiredMember(update, "schema", Json::value_t::object));
    return AddSchema(*schema).status();
  }
  if (action == "add-view-version") {
    SERAC_ASSIGN_OR_RETURN(const Json* version,
                           RequiredMember(update, "view-version", Json::value_t::object));
    return AddVersion(*version).status();
  }
  if (action == "set-current-view-version") {
    SERAC_ASSIGN_OR_RETURN(int32_t version_id, RequiredInt32(update, "view-version-id"));
    return SetCurrentVersion(version_id);
  }
  return ApplyShared(action, update);
}

// Keeps the newest `version.history.num-entries` versions (and always the current one); the
// version log loses entries for dropped versions and the history before them.
void ViewBuilder::TrimVersions() {
  int64_t keep = kViewHistorySizeDefault;
  if (auto it = metadata_.properties.find(kViewHistorySizeProperty); it != metadata_.properties.end()) {
    try {
      keep = std::stoll(it->second);
    } catch (const std::exception&) {
      keep = kViewHistorySizeDefault;  // an unreadable property falls back to the default
    }
  }
  keep = std::max<int64_t>(keep, 1);
  if (static_cast<int64_t>(metadata_.versions.size()) <= keep) return;
  std::vector<Json> retained(metadata_.versions.end() - static_cast<std::ptrdiff_t>(keep),
                             metadata_.versions.end());
  std::set<int32_t> retained_ids;
  for (const Json& version : retained) retained_ids.insert(version.at("version-id").get<int32_t>());
  if (retained_ids.count(metadata_.current_version_id) == 0) {
    retained.insert(retained.begin(), *metadata_.FindVersion(metadata_.current_version_id));
    retained_ids.insert(metadata_.current_version_id);
  }
  metadata_.versions = std::move(retained);
  version_ids_.Forget();
  std::vector<VersionLogEntry> log;
  for (const VersionLogEntry& entry : metadata_.version_log) {
    if (retained_ids.count(entry.version_id) != 0) {
      log.push_back(entry);
    } else {
      log.clear();
    }
  }
  metadata_.version_log = std::move(log);
}

ViewCommitOutcome ViewBuilder::Finish() {
  if (history_entry_) metadata_.version_log.push_back(*history_entry_);
  if (changed_) TrimVersions();
  return ViewCommitOutcome{std::move(metadata_), changed_};
}

Status CheckViewRequirements(const ViewModel& current, const Json& requirements) {
  if (requirements.is_null()) return Status::Ok();
  if (!requirements.is_array()) return BadRequest("requirements must be an array");
  for (const Json& requirement : requirements) {
    SERAC_ASSIGN_OR_RETURN(std::string type, RequiredString(requirement, "type"));
    if (type != "assert-view-uuid") return BadRequest("requirement " + type + " does not apply to views");
    SERAC_ASSIGN_OR_RETURN(std::string uuid, RequiredString(requirement, "uuid"));
    const bool same =
        uuid.size() == current.view_uuid.size() &&
        std::equal(uuid.begin(), uuid.end(), current.view_uuid.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        });
    if (!same) {
      return Error(ErrorCode::kConflict, "Requirement failed: view UUID does not match: expected " +
                                             current.view_uuid + " != " + uuid);
    }
  }
  return Status::Ok();
}

Result<std::vector<Json>> ObjectList(const Json& json, const char* key) {
  SERAC_ASSIGN_OR_RETURN(const Json* list, RequiredMember(json, key, Json::value_t::array));
  std::vector<Json> out;
  for (const Json& item : *list) {
    if (!item.is_object()) return BadRequest(std::string(key) + " must hold objects");
    out.push_back(item);
  }
  return out;
}

}  // namespace

const Json* ViewModel::FindVersion(int32_t version_id) const {
  for (const Json& version : versions) {
    if (version.at("version-id").get<int32_t>() == version_id) return &version;
  }
  return nullptr;
}

Result<ViewModel> ParseViewMetadata(const Json& json) {
  if (!json.is_object()) return BadRequest("view metadata must be an object");
  ViewModel metadata;
  SERAC_ASSIGN_OR_RETURN(metadata.view_uuid, RequiredString(json, "view-uuid"));
  SERAC_ASSIGN_OR_RETURN(int64_t version, RequiredInt(json, "format-version"));
  if (version < 1 || version > kViewFormatVersionMax) return BadRequest("unsupported view format version");
  metadata.format_version = static_cast<int>(version);
  SERAC_ASSIGN_OR_RETURN(metadata.location, RequiredString(json, "location"));
  SERAC_ASSIGN_OR_RETURN(metadata.schemas, ObjectList(json, "schemas"));
  for (const Json& schema : metadata.schemas) {
    SERAC_RETURN_IF_ERROR(ValidateSchema(schema));
    SERAC_RETURN_IF_ERROR(RequiredInt32(schema, "schema-id").status());
  }
  SERAC_ASSIGN_OR_RETURN(metadata.current_version_id, RequiredInt32(json, "current-version-id"));
  SERAC_ASSIGN_OR_RETURN(metadata.versions, ObjectList(json, "versions"));
  for (const Json& view_version : metadata.versions) SERAC_RETURN_IF_ERROR(ValidateViewVersion(view_version));
  if (metadata.FindVersion(metadata.current_version_id) == nullptr) {
    return BadRequest("current-version-id names no version");
  }
  SERAC_ASSIGN_OR_RETURN(std::vector<Json> log, ObjectList(json, "version-log"));
  for (const Json& entry : log) {
    SERAC_ASSIGN_OR_RETURN(int64_t timestamp_ms, RequiredInt(entry, "timestamp-ms"));
    SERAC_ASSIGN_OR_RETURN(int32_t version_id, RequiredInt32(entry, "version-id"));
    metadata.version_log.push_back({timestamp_ms, version_id});
  }
  if (auto it = json.find("properties"); it != json.end() && !it->is_null()) {
    SERAC_ASSIGN_OR_RETURN(metadata.properties, StringMap(*it));
  }
  static const std::set<std::string> kModelled = {"view-uuid",   "format-version",     "location",
                                                  "schemas",     "current-version-id", "versions",
                                                  "version-log", "properties"};
  for (auto it = json.begin(); it != json.end(); ++it) {
    if (kModelled.count(it.key()) == 0) metadata.extra_fields[it.key()] = *it;
  }
  return metadata;
}

Json ViewMetadataToJson(const ViewModel& metadata) {
  Json out = metadata.extra_fields.is_object() ? metadata.extra_fields : Json::object();
  out["view-uuid"] = metadata.view_uuid;
  out["format-version"] = metadata.format_version;
  out["location"] = metadata.location;
  out["schemas"] = Json(metadata.schemas);
  out["current-version-id"] = metadata.current_version_id;
  out["versions"] = Json(metadata.versions);
  Json log = Json::array();
  for (const auto& entry : metadata.version_log) {
    log.push_back({{"timestamp-ms", entry.timestamp_ms}, {"version-id", entry.version_id}});
  }
  out["version-log"] = log;
  out["properties"] = metadata.properties;
  return out;
}

Result<CreateViewRequest> ParseCreateViewRequest(const Json& body) {
  if (!body.is_object()) return BadRequest("create view request must be an object");
  CreateViewRequest request;
  SERAC_ASSIGN_OR_RETURN(request.name, RequiredString(body, "name"));
  if (request.name.empty()) return BadRequest("view name must not be empty");
  if (auto it = body.find("location"); it != body.end() && !it->is_null()) {
    if (!it->is_string()) return BadRequest("location must be a string");
    request.location = it->get<std::string>();
  }
  SERAC_ASSIGN_OR_RETURN(const Json* schema, RequiredMember(body, "schema", Json::value_t::object));
  request.schema = *schema;
  SERAC_ASSIGN_OR_RETURN(const Json* version, RequiredMember(body, "view-version", Json::value_t::object));
  request.view_version = *version;
  if (auto it = body.find("properties"); it != body.end() && !it->is_null()) {
    SERAC_ASSIGN_OR_RETURN(request.properties, StringMap(*it));
  }
  return request;
}

Result<ViewModel> NewViewMetadata(const CreateViewRequest& request, std::string_view location,
                                  std::string_view view_uuid) {
  try {
    ViewModel base;
    base.view_uuid = std::string(view_uuid);
    base.location = std::string(location);
    base.properties = request.properties;
    ViewBuilder builder(std::move(base),
                        /*now_ms=*/0);  // the first version is added here: logged at its own time
    SERAC_ASSIGN_OR_RETURN(int32_t schema_id, builder.AddSchema(request.schema));
    Json version = request.view_version;
    version["schema-id"] = schema_id;  // the version describes the schema sent beside it
    SERAC_ASSIGN_OR_RETURN(int32_t version_id, builder.AddVersion(version));
    SERAC_RETURN_IF_ERROR(builder.SetCurrentVersion(version_id));
    return std::move(builder.Finish().metadata);
  } catch (const Json::exception& e) {
    return BadRequest(std::string("malformed view: ") + e.what());
  }
}

Result<ViewCommitOutcome> ApplyViewCommit(const ViewModel& current, const Json& requirements,
                                          const Json& updates, int64_t now_ms) {
  try {
    if (!updates.is_array()) return BadRequest("updates must be an array");
    SERAC_RETURN_IF_ERROR(CheckCommitSize(requirements.is_array() ? requirements.size() : 0, updates.size()));
    SERAC_RETURN_IF_ERROR(CheckViewRequirements(current, requirements));
    ViewBuilder builder(current, now_ms);
    for (const Json& update : updates) SERAC_RETURN_IF_ERROR(builder.Apply(update));
    return builder.Finish();
  } catch (const Json::exception& e) {
    return BadRequest(std::string("malformed view commit: ") + e.what());
  }
}

}  // namespace serac::iceberg
