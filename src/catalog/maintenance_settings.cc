#include "catalog/maintenance_settings.h"

#include <nlohmann/json.hpp>

#include "common/json_reads.h"
#include "common/limits.h"
#include "maintenance/table_properties.h"

namespace serac::catalog {

using maintenance::CompactionStrategy;
using maintenance::IntegerProperty;
namespace {

using Json = nlohmann::json;

constexpr int64_t kMiBytes = 1LL << 20;
constexpr int64_t kHourMs = 3600LL * 1000;

// One numeric field of a type's settings, with its allowed range.
struct NumberField {
  MaintenanceType type;
  const char* name;
  int64_t min;
  int64_t max;
};
constexpr NumberField kNumberFields[] = {
    {MaintenanceType::kCompaction, "targetFileSizeMB", 1, 4096},
    {MaintenanceType::kSnapshotManagement, "minSnapshotsToKeep", 1, 1'000'000},
    {MaintenanceType::kSnapshotManagement, "maxSnapshotAgeHours", 1, 1'000'000},
    {MaintenanceType::kUnreferencedFileRemoval, "unreferencedDays", 1, 36'500},
    {MaintenanceType::kUnreferencedFileRemoval, "nonCurrentDays", 1, 36'500},
};

Status Invalid(MaintenanceType type, const std::string& field, const std::string& message) {
  return Error(ErrorCode::kInvalidArgument,
               std::string(MaintenanceTypeName(type)) + (field.empty() ? "" : "." + field) + ": " + message);
}

// A checked value's inner settings object ({} when absent or unreadable: checked values are
// read back only from the store, which holds what CheckSettingJson returned).
Json InnerSettings(MaintenanceType type, const std::string& text, Json* status) {
  Json value = Json::parse(text, nullptr, false);
  if (!value.is_object()) return Json::object();
  if (status != nullptr && value.contains("status")) *status = value["status"];
  auto settings = value.find("settings");
  if (settings == value.end() || !settings->is_object()) return Json::object();
  auto inner = settings->find(std::string(MaintenanceTypeName(type)));
  return inner != settings->end() && inner->is_object() ? *inner : Json::object();
}

void ApplyLayer(MaintenanceType type, const std::string& text, MaintenanceSettings& out) {
  Json status;
  const Json inner = InnerSettings(type, text, &status);
  auto number = [&](const char* name) -> std::optional<int64_t> {
    auto it = inner.find(name);
    if (it == inner.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<int64_t>();
  };
  const bool has_status = status.is_string();
  const bool enabled = has_status && status.get<std::string>() == "enabled";
  switch (type) {
    case MaintenanceType::kCompaction:
      if (has_status) out.compaction_enabled = enabled;
      if (auto mb = number("targetFileSizeMB")) out.target_file_size_bytes = *mb * kMiBytes;
      if (auto it = inner.find("strategy"); it != inner.end() && it->is_string()) {
        const std::string strategy = it->get<std::string>();
        out.strategy = strategy == "sort"      ? CompactionStrategy::kSort
                       : strategy == "binpack" ? CompactionStrategy::kBinpack
                                               : CompactionStrategy::kAuto;
      }
      break;
    case MaintenanceType::kSnapshotManagement:
      if (has_status) out.snapshot_management_enabled = enabled;
      if (auto keep = number("minSnapshotsToKeep")) out.min_snapshots_to_keep = static_cast<int32_t>(*keep);
      if (auto hours = number("maxSnapshotAgeHours")) out.max_snapshot_age_ms = *hours * kHourMs;
      break;
    case MaintenanceType::kUnreferencedFileRemoval:
      if (has_status) out.unreferenced_file_removal_enabled = enabled;
      if (auto days = number("unreferencedDays")) out.unreferenced_days = *days;
      if (auto days = number("nonCurrentDays")) out.non_current_days = *days;
      break;
  }
}

}  // namespace

std::string_view MaintenanceTypeName(MaintenanceType type) {
  switch (type) {
    case MaintenanceType::kCompaction:
      return "icebergCompaction";
    case MaintenanceType::kSnapshotManagement:
      return "icebergSnapshotManagement";
    case MaintenanceType::kUnreferencedFileRemoval:
      return "icebergUnreferencedFileRemoval";
  }
  return "";
}

std::optional<MaintenanceType> ParseMaintenanceType(std::string_view name) {
  for (MaintenanceType type : kMaintenanceTypes) {
    if (MaintenanceTypeName(type) == name) return type;
  }
  return std::nullopt;
}

Result<std::string> CheckSettingJson(MaintenanceType type, std::string_view body) {
  if (body.size() > limits::kMaintenanceSettingBytesMax) {
    return Error(ErrorCode::kLimitExceeded,
                 "maintenance settings exceed limits::kMaintenanceSettingBytesMax");
  }
  Json value = Json::parse(body, nullptr, false);
  if (value.is_discarded()) return Invalid(type, "", "the body is not JSON");
  if (value.is_object() && value.size() == 1 && value.contains("value")) value = value["value"];
  if (!value.is_object()) return Invalid(type, "", "must be a JSON object with status and settings");
  Json kept = Json::object();
  for (const auto& [key, member] : value.items()) {
    if (key == "status") {
      if (!member.is_string() || (member != "enabled" && member != "disabled")) {
        return Invalid(type, "status", "must be \"enabled\" or \"disabled\"");
      }
      kept["status"] = member;
    } else if (key == "settings") {
      if (!member.is_object()) return Invalid(type, "settings", "must be an object");
      for (const auto& [inner_type, inner] : member.items()) {
        if (inner_type != MaintenanceTypeName(type)) {
          return Invalid(
              type, "settings." + inner_type,
              "unknown field (the settings of " + std::string(MaintenanceTypeName(type)) + " go here)");
        }
        if (!inner.is_object()) return Invalid(type, "settings." + inner_type, "must be an object");
        Json checked = Json::object();
        for (const auto& [field, setting] : inner.items()) {
          const std::string path = "settings." + inner_type + "." + field;
          if (type == MaintenanceType::kCompaction && field == "strategy") {
            if (!setting.is_string() || (setting != "auto" && setting != "binpack" && setting != "sort")) {
              return Invalid(type, path,
                             "must be auto, binpack or sort" +
                                 std::string(setting == "zorder" ? " (zorder is not offered)" : ""));
            }
            checked[field] = setting;
            continue;
          }
          const NumberField* spec = nullptr;
          for (const NumberField& candidate : kNumberFields) {
            if (candidate.type == type && field == candidate.name) spec = &candidate;
          }
          if (spec == nullptr) return Invalid(type, path, "unknown field");
          if (!setting.is_number_integer() || setting.get<int64_t>() < spec->min ||
              setting.get<int64_t>() > spec->max) {
            return Invalid(type, path,
                           "must be a whole number from " + std::to_string(spec->min) + " to " +
                               std::to_string(spec->max));
          }
          checked[field] = setting;
        }
        kept["settings"][inner_type] = checked;
      }
    } else {
      return Invalid(type, key, "unknown field (a value has status and settings)");
    }
  }
  return kept.dump();
}

MaintenanceSettings ResolveSettings(const SettingLayers& layers) {
  MaintenanceSettings settings;
  for (const auto& [type, text] : layers.warehouse) ApplyLayer(type, text, settings);
  const auto& properties = layers.table_properties;
  if (auto bytes = IntegerProperty(properties, "write.target-file-size-bytes"))
    settings.target_file_size_bytes = *bytes;
  if (auto age = IntegerProperty(properties, "history.expire.max-snapshot-age-ms"))
    settings.max_snapshot_age_ms = *age;
  if (auto keep = IntegerProperty(properties, "history.expire.min-snapshots-to-keep")) {
    settings.min_snapshots_to_keep = static_cast<int32_t>(std::min<int64_t>(*keep, 1'000'000));
  }
  for (const auto& [type, text] : layers.table) ApplyLayer(type, text, settings);
  return settings;
}

std::string EffectiveSettingJson(MaintenanceType type, const MaintenanceSettings& settings) {
  Json inner;
  bool enabled = false;
  switch (type) {
    case MaintenanceType::kCompaction:
      enabled = settings.compaction_enabled;
      inner = {{"targetFileSizeMB", (settings.target_file_size_bytes + kMiBytes - 1) / kMiBytes},
               {"strategy", settings.strategy == CompactionStrategy::kSort      ? "sort"
                            : settings.strategy == CompactionStrategy::kBinpack ? "binpack"
                                                                                : "auto"}};
      break;
    case MaintenanceType::kSnapshotManagement:
      enabled = settings.snapshot_management_enabled;
      inner = {{"minSnapshotsToKeep", settings.min_snapshots_to_keep},
               {"maxSnapshotAgeHours", (settings.max_snapshot_age_ms + kHourMs - 1) / kHourMs}};
      break;
    case MaintenanceType::kUnreferencedFileRemoval:
      enabled = settings.unreferenced_file_removal_enabled;
      inner = {{"unreferencedDays", settings.unreferenced_days},
               {"nonCurrentDays", settings.non_current_days}};
      break;
  }
  Json value = {{"status", enabled ? "enabled" : "disabled"},
                {"settings", {{std::string(MaintenanceTypeName(type)), inner}}}};
  return value.dump();
}

Result<std::map<MaintenanceType, std::string>> LoadSettingLayer(meta::CatalogStore& store,
                                                                const std::string& warehouse,
                                                                const std::string& table_uuid) {
  SERAC_ASSIGN_OR_RETURN(std::vector<meta::MaintenanceSetting> stored,
                         store.ListMaintenanceSettings(warehouse, table_uuid));
  std::map<MaintenanceType, std::string> layer;
  for (meta::MaintenanceSetting& setting : stored) {
    if (auto type = ParseMaintenanceType(setting.type)) layer[*type] = std::move(setting.json);
  }
  return layer;
}

Result<MaintenanceSettings> LoadTableSettings(meta::CatalogStore& store, const std::string& warehouse,
                                              const std::string& table_uuid,
                                              const std::map<std::string, std::string>& table_properties,
                                              std::map<MaintenanceType, std::string>* overrides) {
  SettingLayers layers;
  SERAC_ASSIGN_OR_RETURN(layers.warehouse, LoadSettingLayer(store, warehouse, ""));
  SERAC_ASSIGN_OR_RETURN(layers.table, LoadSettingLayer(store, warehouse, table_uuid));
  layers.table_properties = table_properties;
  if (overrides != nullptr) *overrides = layers.table;
  return ResolveSettings(layers);
}

namespace {

int64_t SummaryNumber(const iceberg::Snapshot& snapshot, const char* name) {
  auto it = snapshot.summary.find(name);
  if (it == snapshot.summary.end()) return 0;
  try {
    return std::stoll(it->second);
  } catch (...) {
    return 0;
  }
}

}  // namespace

bool CompactionDue(const iceberg::TableMetadata& table, const MaintenanceSettings& settings) {
  if (!settings.compaction_enabled) return false;
  const std::optional<iceberg::Snapshot> current = table.CurrentSnapshot();
  if (!current) return false;
  const int64_t data_files = SummaryNumber(*current, "total-data-files");
  const int64_t delete_files = SummaryNumber(*current, "total-delete-files");
  const int64_t bytes = SummaryNumber(*current, "total-files-size");
  if (data_files <= 0) return false;
  if (delete_files > 0 && static_cast<double>(delete_files) >=
                              kAutoCompactionDeleteFilesPerDataFile * static_cast<double>(data_files)) {
    return true;
  }
  return data_files >= kAutoCompactionSmallFilesMin &&
         bytes / data_files < settings.target_file_size_bytes / 4 * 3;
}

bool ExpiryDue(const iceberg::TableMetadata& table, const MaintenanceSettings& settings, int64_t now_ms) {
  if (!settings.snapshot_management_enabled) return false;
  if (table.snapshot_count() <= static_cast<size_t>(settings.min_snapshots_to_keep)) return false;
  const auto& log = table.snapshot_log();
  int64_t oldest = now_ms;
  for (const iceberg::SnapshotLogEntry& entry : log) oldest = std::min(oldest, entry.timestamp_ms);
  if (log.empty()) {
    for (const iceberg::Snapshot& snapshot : table.Snapshots())
      oldest = std::min(oldest, snapshot.timestamp_ms);
  }
  return oldest < now_ms - settings.max_snapshot_age_ms;
}

}  // namespace serac::catalog
