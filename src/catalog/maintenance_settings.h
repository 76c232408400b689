// Table maintenance settings as AIStor Tables and S3 Tables take them: three types, each a JSON
// value {"status": "enabled"|"disabled", "settings": {"<type>": {...}}} set for a warehouse (the
// default of its tables) or for one table (an override), and the effective settings of a table
// resolved from those layers and the table's own Iceberg properties.
//
// Which wins, most specific first: a table's maintenance setting, then the table's Iceberg
// property (history.expire.max-snapshot-age-ms, history.expire.min-snapshots-to-keep,
// write.target-file-size-bytes), then the warehouse's maintenance setting, then the defaults
// (S3 Tables' own: compaction to 512 MB files, one snapshot kept and snapshots kept 120 hours,
// unreferenced files removed after 3 days and non-current ones after 10).
// Thread-safety: plain values and functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "iceberg/metadata/table_metadata.h"
#include "maintenance/rewrite_data_files.h"
#include "meta/catalog_store.h"

namespace serac::catalog {

enum class MaintenanceType : uint8_t { kCompaction, kSnapshotManagement, kUnreferencedFileRemoval };
inline constexpr MaintenanceType kMaintenanceTypes[] = {MaintenanceType::kCompaction,
                                                        MaintenanceType::kSnapshotManagement,
                                                        MaintenanceType::kUnreferencedFileRemoval};

// "icebergCompaction", "icebergSnapshotManagement", "icebergUnreferencedFileRemoval".
std::string_view MaintenanceTypeName(MaintenanceType type);
std::optional<MaintenanceType> ParseMaintenanceType(std::string_view name);

struct MaintenanceSettings {
  bool compaction_enabled = true;
  int64_t target_file_size_bytes = 512LL << 20;
  maintenance::CompactionStrategy strategy = maintenance::CompactionStrategy::kAuto;
  bool snapshot_management_enabled = true;
  int32_t min_snapshots_to_keep = 1;
  int64_t max_snapshot_age_ms = 120LL * 3600 * 1000;
  bool unreferenced_file_removal_enabled = true;
  int64_t unreferenced_days = 3;
  int64_t non_current_days = 10;
};

// One type's value as a client sends it (bare, or wrapped in {"value": ...} as S3 Tables' API
// sends it), checked: a wrong or unknown field is kInvalidArgument naming it. Returns the value
// as it is kept (bare, only the fields given).
Result<std::string> CheckSettingJson(MaintenanceType type, std::string_view body);

// The layers of a table's settings, most general first.
struct SettingLayers {
  std::map<MaintenanceType, std::string> warehouse;  // checked values (CheckSettingJson)
  std::map<std::string, std::string> table_properties;
  std::map<MaintenanceType, std::string> table;
};
MaintenanceSettings ResolveSettings(const SettingLayers& layers);

// One layer of settings from the catalog store: a warehouse's defaults (`table_uuid` empty) or a
// table's overrides, by type.
Result<std::map<MaintenanceType, std::string>> LoadSettingLayer(meta::CatalogStore& store,
                                                                const std::string& warehouse,
                                                                const std::string& table_uuid);

// A table's settings layers from the catalog store (its overrides, its warehouse's defaults) and
// its Iceberg properties, resolved. `overrides`, when given, receives the table's own layer.
Result<MaintenanceSettings> LoadTableSettings(meta::CatalogStore& store, const std::string& warehouse,
                                              const std::string& table_uuid,
                                              const std::map<std::string, std::string>& table_properties,
                                              std::map<MaintenanceType, std::string>* overrides = nullptr);

// When the server starts a job by itself, judged from the table's metadata alone (its current
// snapshot's summary and its snapshot list), so that a check after a commit reads no file: the
// job itself decides what to rewrite or remove.
// Compaction: enabled, and either at least kAutoCompactionSmallFilesMin data files averaging under
// three quarters of the target size, or delete files numbering at least
// kAutoCompactionDeleteFilesPerDataFile of the data files.
inline constexpr int64_t kAutoCompactionSmallFilesMin = 16;
inline constexpr double kAutoCompactionDeleteFilesPerDataFile = 0.1;
bool CompactionDue(const iceberg::TableMetadata& table, const MaintenanceSettings& settings);
// Expiry: enabled, more snapshots than the minimum kept, and the oldest older than the age limit.
bool ExpiryDue(const iceberg::TableMetadata& table, const MaintenanceSettings& settings, int64_t now_ms);

// The API's value of one type of effective settings: {"status": ..., "settings": {"<type>": {...}}}.
std::string EffectiveSettingJson(MaintenanceType type, const MaintenanceSettings& settings);

}  // namespace serac::catalog
