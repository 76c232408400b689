// The maintenance API's values: checked field by field with errors naming the field, and a table's
// effective settings resolved from its layers (table override, Iceberg property, warehouse default).
#include "catalog/maintenance_settings.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/json_reads.h"

namespace serac::catalog {
namespace {

using Json = nlohmann::json;

TEST(MaintenanceSettingsTest, ValuesAreCheckedAndErrorsNameTheField) {
  auto wrapped = CheckSettingJson(MaintenanceType::kSnapshotManagement,
                                  R"({"value": {"status": "enabled", "settings": {"icebergSnapshotManagement":
                                      {"minSnapshotsToKeep": 3, "maxSnapshotAgeHours": 48}}}})");
  ASSERT_TRUE(wrapped.ok()) << wrapped.status().ToString();
  EXPECT_EQ(Json::parse(*wrapped)["settings"]["icebergSnapshotManagement"]["minSnapshotsToKeep"], 3);
  for (const auto& [type, body, message] : std::vector<std::tuple<MaintenanceType, std::string, std::string>>{
           {MaintenanceType::kCompaction, R"({"status": "on"})", "icebergCompaction.status: must be"},
           {MaintenanceType::kCompaction, R"({"settings": {"icebergCompaction": {"strategy": "zorder"}}})",
            "icebergCompaction.settings.icebergCompaction.strategy: must be auto, binpack or sort (zorder"},
           {MaintenanceType::kCompaction, R"({"settings": {"icebergCompaction": {"targetFileSizeMB": 0}}})",
            "icebergCompaction.settings.icebergCompaction.targetFileSizeMB: must be a whole number from 1"},
           {MaintenanceType::kSnapshotManagement, R"({"settings": {"icebergCompaction": {}}})",
            "icebergSnapshotManagement.settings.icebergCompaction: unknown field"},
           {MaintenanceType::kUnreferencedFileRemoval,
            R"({"settings": {"icebergUnreferencedFileRemoval": {"unreferencedDays": 2, "days": 1}}})",
            "icebergUnreferencedFileRemoval.settings.icebergUnreferencedFileRemoval.days: unknown field"},
           {MaintenanceType::kSnapshotManagement, R"([1])",
            "icebergSnapshotManagement: must be a JSON object"},
           {MaintenanceType::kSnapshotManagement, R"({"status": "enabled", "mode": 1})",
            "icebergSnapshotManagement.mode: unknown field"},
       }) {
    auto refused = CheckSettingJson(type, body);
    ASSERT_FALSE(refused.ok()) << body;
    EXPECT_EQ(refused.status().message().rfind(message, 0), 0u) << refused.status().message();
  }
  EXPECT_EQ(ParseMaintenanceType("icebergCompaction"), MaintenanceType::kCompaction);
  EXPECT_EQ(ParseMaintenanceType("compaction"), std::nullopt);
}

TEST(MaintenanceSettingsTest, TheMostSpecificLayerWins) {
  MaintenanceSettings defaults = ResolveSettings({});
  EXPECT_EQ(defaults.min_snapshots_to_keep, 1);
  EXPECT_EQ(defaults.max_snapshot_age_ms, 120LL * 3600 * 1000);
  EXPECT_EQ(defaults.target_file_size_bytes, 512LL << 20);

  SettingLayers layers;
  layers.warehouse[MaintenanceType::kSnapshotManagement] =
      *CheckSettingJson(MaintenanceType::kSnapshotManagement,
                        R"({"status": "disabled", "settings": {"icebergSnapshotManagement":
                            {"minSnapshotsToKeep": 5, "maxSnapshotAgeHours": 10}}})");
  layers.table_properties["history.expire.min-snapshots-to-keep"] = "7";
  layers.table_properties["write.target-file-size-bytes"] = "1048576";
  MaintenanceSettings by_property = ResolveSettings(layers);
  EXPECT_FALSE(by_property.snapshot_management_enabled);
  EXPECT_EQ(by_property.min_snapshots_to_keep, 7);  // the table's property over the warehouse's
  EXPECT_EQ(by_property.max_snapshot_age_ms, 10LL * 3600 * 1000);
  EXPECT_EQ(by_property.target_file_size_bytes, 1 << 20);

  layers.table[MaintenanceType::kSnapshotManagement] = *CheckSettingJson(
      MaintenanceType::kSnapshotManagement,
      R"({"status": "enabled", "settings": {"icebergSnapshotManagement": {"minSnapshotsToKeep": 2}}})");
  MaintenanceSettings by_table = ResolveSettings(layers);
  EXPECT_TRUE(by_table.snapshot_management_enabled);
  EXPECT_EQ(by_table.min_snapshots_to_keep, 2);
  EXPECT_EQ(by_table.max_snapshot_age_ms, 10LL * 3600 * 1000);  // not overridden: the warehouse's
  EXPECT_EQ(Json::parse(EffectiveSettingJson(MaintenanceType::kSnapshotManagement, by_table)),
            Json::parse(R"({"status": "enabled", "settings": {"icebergSnapshotManagement":
                            {"minSnapshotsToKeep": 2, "maxSnapshotAgeHours": 10}}})"));
  EXPECT_EQ(Json::parse(EffectiveSettingJson(MaintenanceType::kCompaction,
                                             by_table))["settings"]["icebergCompaction"]["targetFileSizeMB"],
            1);
}

}  // namespace
}  // namespace serac::catalog
