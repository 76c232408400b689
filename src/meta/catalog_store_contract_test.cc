// One contract for every CatalogStore back end, reached through MetaStore::catalog(): each test
// runs on SQLite and on SQLite behind the fault-injecting wrapper (where "reopen" is a simulated
// crash).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/limits.h"
#include "meta/catalog_locations.h"
#include "meta/catalog_store.h"
#include "meta/contract_test_backends_internal.h"
#include "meta/fault_injection_meta_store.h"
#include "meta/meta_store.h"
#include "meta/meta_store_test_util.h"

namespace serac::meta {
namespace {

using testing::MakeObject;

constexpr const char* kWarehouse = "lake";

class CatalogStoreContractTest : public testing::ContractTestBase {
 protected:
  void SetUp() override {
    Open();
    SERAC_ASSERT_OK(catalog().CreateWarehouse({kWarehouse, 1000}, false));
  }

  CatalogStore& catalog() { return store_->catalog(); }

  Status CreateNamespace(const NamespaceLevels& levels, std::map<std::string, std::string> properties = {}) {
    return catalog().CreateNamespace({kWarehouse, levels, std::move(properties), 2000});
  }

  static EntityRecord Entity(const NamespaceLevels& levels, const std::string& name, EntityKind kind,
                             const std::string& metadata_location = "s3://lake/m/00000.metadata.json") {
    EntityRecord entity;
    entity.warehouse = kWarehouse;
    entity.levels = levels;
    entity.name = name;
    entity.kind = kind;
    entity.uuid = "uuid-" + name;
    entity.location = "s3://lake/" + name;
    entity.metadata_location = metadata_location;
    entity.created_ms = 3000;
    entity.updated_ms = 3000;
    return entity;
  }

  static EntityId Id(const NamespaceLevels& levels, const std::string& name,
                     EntityKind kind = EntityKind::kTable) {
    return EntityId{kWarehouse, levels, name, kind};
  }

  std::string MetadataOf(const EntityId& id) {
    auto entity = catalog().GetEntity(id);
    EXPECT_TRUE(entity.ok()) << entity.status().ToString();
    return entity.ok() ? entity->metadata_location : std::string();
  }

  std::vector<std::string> ChildNames(const NamespaceLevels& parent, const std::string& start_after = "",
                                      uint32_t limit = 1000) {
    auto listed = catalog().ListNamespaces(kWarehouse, parent, start_after, limit);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    std::vector<std::string> names;
    if (!listed.ok()) return names;
    for (const NamespaceRecord& ns : *listed) names.push_back(ns.levels.back());
    return names;
  }

  std::vector<std::string> EntityNames(const NamespaceLevels& levels, EntityKind kind,
                                       const std::string& start_after = "", uint32_t limit = 1000) {
    auto listed = catalog().ListEntities(kWarehouse, levels, kind, start_after, limit);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    std::vector<std::string> names;
    if (!listed.ok()) return names;
    for (const EntityRecord& entity : *listed) names.push_back(entity.name);
    return names;
  }

  static MaintenanceSetting Setting(const std::string& table_uuid, const std::string& type,
                                    const std::string& json, int64_t updated_ms = 4000) {
    return MaintenanceSetting{kWarehouse, table_uuid, type, json, updated_ms};
  }

  // A warehouse's (table_uuid "") or a table's settings as "type=json@updated_ms", in listed order.
  std::vector<std::string> Settings(const std::string& table_uuid,
                                    const std::string& warehouse = kWarehouse) {
    auto listed = catalog().ListMaintenanceSettings(warehouse, table_uuid);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    std::vector<std::string> settings;
    if (!listed.ok()) return settings;
    for (const MaintenanceSetting& setting : *listed) {
      EXPECT_EQ(setting.warehouse, warehouse);
      EXPECT_EQ(setting.table_uuid, table_uuid);
      settings.push_back(setting.type + "=" + setting.json + "@" + std::to_string(setting.updated_ms));
    }
    return settings;
  }

  static MaintenanceJobRecord Job(const std::string& table_uuid, const std::string& type,
                                  int64_t started_ms) {
    MaintenanceJobRecord job;
    job.warehouse = kWarehouse;
    job.table_uuid = table_uuid;
    job.type = type;
    job.started_ms = started_ms;
    job.status = "running";
    job.json = "{\"table\":\"db.t\"}";
    return job;
  }

  int64_t SaveJob(const MaintenanceJobRecord& job) {
    auto id = catalog().SaveMaintenanceJob(job);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : -1;
  }

  std::vector<MaintenanceJobRecord> Jobs(const std::string& table_uuid, const std::string& type = "",
                                         uint32_t limit = 1000) {
    auto listed = catalog().ListMaintenanceJobs(kWarehouse, table_uuid, type, limit);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    return listed.ok() ? *listed : std::vector<MaintenanceJobRecord>{};
  }

  // The started_ms of each listed job: the tests give every job its own.
  std::vector<int64_t> JobStarts(const std::string& table_uuid, const std::string& type = "",
                                 uint32_t limit = 1000) {
    std::vector<int64_t> starts;
    for (const MaintenanceJobRecord& job : Jobs(table_uuid, type, limit)) starts.push_back(job.started_ms);
    return starts;
  }

  std::vector<std::string> Garbage() {
    auto garbage = store_->PeekGarbage(10000);
    EXPECT_TRUE(garbage.ok()) << garbage.status().ToString();
    return garbage.ok() ? *garbage : std::vector<std::string>{};
  }
};

using Names = std::vector<std::string>;

// ---- Warehouses ----

TEST_P(CatalogStoreContractTest, WarehouseCreatesItsBucket) {
  auto warehouse = catalog().GetWarehouse(kWarehouse);
  ASSERT_TRUE(warehouse.ok()) << warehouse.status().ToString();
  EXPECT_EQ(warehouse->name, kWarehouse);
  EXPECT_EQ(warehouse->created_ms, 1000);
  SERAC_EXPECT_OK(store_->GetBucket(kWarehouse).status());
  EXPECT_EQ(catalog().GetWarehouse("missing").status().code(), ErrorCode::kNotFound);
}

TEST_P(CatalogStoreContractTest, DuplicateWarehouseOrExistingBucketIsRefused) {
  EXPECT_EQ(catalog().CreateWarehouse({kWarehouse, 5}, false).code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(catalog().CreateWarehouse({kWarehouse, 5}, true).code(), ErrorCode::kAlreadyExists);
  SERAC_ASSERT_OK(store_->CreateBucket({"plain", 10}));
  EXPECT_EQ(catalog().CreateWarehouse({"plain", 20}, false).code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(catalog().GetWarehouse("plain").status().code(), ErrorCode::kNotFound);
  auto warehouse = catalog().GetWarehouse(kWarehouse);
  ASSERT_TRUE(warehouse.ok());
  EXPECT_EQ(warehouse->created_ms, 1000);
}

TEST_P(CatalogStoreContractTest, ExistingNonEmptyBucketUpgradesToWarehouse) {
  SERAC_ASSERT_OK(store_->CreateBucket({"plain", 10}));
  SERAC_ASSERT_OK(store_->PutObject(MakeObject("plain", "data/file", "e"), {}));
  SERAC_ASSERT_OK(catalog().CreateWarehouse({"plain", 20}, true));
  auto bucket = store_->GetBucket("plain");
  ASSERT_TRUE(bucket.ok());
  EXPECT_EQ(bucket->created_ms, 10);  // the bucket is kept as it was
  SERAC_EXPECT_OK(store_->GetObject("plain", "data/file").status());
  SERAC_EXPECT_OK(catalog().GetWarehouse("plain").status());
}

TEST_P(CatalogStoreContractTest, ListWarehousesPages) {
  for (const char* name : {"c-wh", "a-wh", "b-wh"})
    SERAC_ASSERT_OK(catalog().CreateWarehouse({name, 1}, false));
  SERAC_ASSERT_OK(store_->CreateBucket({"aa-plain-bucket", 1}));  // buckets are not warehouses
  auto first = catalog().ListWarehouses("", 2);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ((*first)[0].name, "a-wh");
  EXPECT_EQ((*first)[1].name, "b-wh");
  auto rest = catalog().ListWarehouses("b-wh", 10);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 2u);
  EXPECT_EQ((*rest)[0].name, "c-wh");
  EXPECT_EQ((*rest)[1].name, kWarehouse);
}

TEST_P(CatalogStoreContractTest, DeleteWarehouseRefusedWhileNamespacesRemain) {
  EXPECT_EQ(catalog().DeleteWarehouse("missing", false, false).code(), ErrorCode::kNotFound);
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  EXPECT_EQ(catalog().DeleteWarehouse(kWarehouse, false, false).code(), ErrorCode::kNotEmpty);
  SERAC_EXPECT_OK(catalog().GetNamespace(kWarehouse, {"db"}).status());
  SERAC_ASSERT_OK(catalog().DropNamespace(kWarehouse, {"db"}));
  SERAC_ASSERT_OK(catalog().DeleteWarehouse(kWarehouse, false, false));
  EXPECT_EQ(catalog().GetWarehouse(kWarehouse).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(store_->GetBucket(kWarehouse).status().code(), ErrorCode::kNotFound);
}

TEST_P(CatalogStoreContractTest, CountEntitiesCountsTablesAndViewsInEveryNamespace) {
  EXPECT_EQ(catalog().CountEntities("missing").status().code(), ErrorCode::kNotFound);
  auto empty = catalog().CountEntities(kWarehouse);
  SERAC_ASSERT_OK(empty.status());
  EXPECT_EQ(empty->tables, 0u);
  EXPECT_EQ(empty->views, 0u);
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(CreateNamespace({"db", "inner"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t1", EntityKind::kTable)));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t2", EntityKind::kTable)));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db", "inner"}, "t3", EntityKind::kTable)));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db", "inner"}, "v", EntityKind::kView)));
  auto counts = catalog().CountEntities(kWarehouse);
  SERAC_ASSERT_OK(counts.status());
  EXPECT_EQ(counts->tables, 3u);
  EXPECT_EQ(counts->views, 1u);
  SERAC_ASSERT_OK(catalog().DropEntity({kWarehouse, {"db"}, "t1", EntityKind::kTable}).status());
  counts = catalog().CountEntities(kWarehouse);
  SERAC_ASSERT_OK(counts.status());
  EXPECT_EQ(counts->tables, 2u);
}

TEST_P(CatalogStoreContractTest, ForcedDeleteRemovesCatalogAndBucketWithBlobsToGc) {
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(CreateNamespace({"db", "inner"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t", EntityKind::kTable)));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db", "inner"}, "v", EntityKind::kView)));
  SERAC_ASSERT_OK(
      store_->PutObject(MakeObject(kWarehouse, "t/data/1.parquet", "e", {{"blob-1", 4}, {"blob-2", 5}}), {}));
  auto inline_object = MakeObject(kWarehouse, "t/metadata/00000.metadata.json", "e");
  inline_object.inline_data = "{}";
  inline_object.size = 2;
  SERAC_ASSERT_OK(store_->PutObject(inline_object, {}));
  SERAC_ASSERT_OK(store_->CreateUpload({"upload-1", kWarehouse, "t/big", 1, {}, "", ""}));
  SERAC_ASSERT_OK(store_->PutPart("upload-1", {1, 10, "p", 1, "blob-part", ""}));

  SERAC_ASSERT_OK(catalog().DeleteWarehouse(kWarehouse, true, false));
  EXPECT_EQ(catalog().GetWarehouse(kWarehouse).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(store_->GetBucket(kWarehouse).status().code(), ErrorCode::kNotFound);
  std::vector<std::string> garbage = Garbage();
  std::sort(garbage.begin(), garbage.end());
  EXPECT_EQ(garbage, (Names{"blob-1", "blob-2", "blob-part"}));

  // The name is free again, with nothing of the old catalog left behind.
  SERAC_ASSERT_OK(catalog().CreateWarehouse({kWarehouse, 5000}, false));
  EXPECT_EQ(catalog().GetNamespace(kWarehouse, {"db"}).status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(ChildNames({}).empty());
  auto objects = store_->ListObjects({kWarehouse, "", "", 100, true});
  ASSERT_TRUE(objects.ok());
  EXPECT_TRUE(objects->empty());
  EXPECT_EQ(store_->GetUpload(kWarehouse, "t/big", "upload-1").status().code(), ErrorCode::kNotFound);
}

TEST_P(CatalogStoreContractTest, DeleteWarehousePreservingBucketKeepsObjects) {
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t", EntityKind::kTable)));
  SERAC_ASSERT_OK(store_->PutObject(MakeObject(kWarehouse, "t/data/1.parquet", "e", {{"blob-1", 4}}), {}));
  SERAC_ASSERT_OK(catalog().DeleteWarehouse(kWarehouse, true, true));
  EXPECT_EQ(catalog().GetWarehouse(kWarehouse).status().code(), ErrorCode::kNotFound);
  SERAC_EXPECT_OK(store_->GetObject(kWarehouse, "t/data/1.parquet").status());
  EXPECT_TRUE(Garbage().empty());
  // No longer a warehouse: the S3 API may remove it once empty.
  EXPECT_EQ(store_->DeleteBucket(kWarehouse).code(), ErrorCode::kNotEmpty);
  SERAC_ASSERT_OK(store_->DeleteObject(kWarehouse, "t/data/1.parquet", {}));
  SERAC_EXPECT_OK(store_->DeleteBucket(kWarehouse));
}

TEST_P(CatalogStoreContractTest, DeleteBucketRefusesAWarehouse) {
  Status refused = store_->DeleteBucket(kWarehouse);
  EXPECT_EQ(refused.code(), ErrorCode::kConflict);
  EXPECT_EQ(refused.message(), "The bucket is an Iceberg warehouse; remove it with the warehouse API");
  SERAC_EXPECT_OK(store_->GetBucket(kWarehouse).status());
  SERAC_EXPECT_OK(catalog().GetWarehouse(kWarehouse).status());
}

// ---- Namespaces ----

TEST_P(CatalogStoreContractTest, NamespaceCreateAndGet) {
  SERAC_ASSERT_OK(CreateNamespace({"db"}, {{"owner", "ana"}, {"comment", "café ☕"}}));
  EXPECT_EQ(CreateNamespace({"db"}).code(), ErrorCode::kAlreadyExists);
  auto ns = catalog().GetNamespace(kWarehouse, {"db"});
  ASSERT_TRUE(ns.ok()) << ns.status().ToString();
  EXPECT_EQ(ns->warehouse, kWarehouse);
  EXPECT_EQ(ns->levels, (NamespaceLevels{"db"}));
  EXPECT_EQ(ns->properties, (std::map<std::string, std::string>{{"owner", "ana"}, {"comment", "café ☕"}}));
  EXPECT_EQ(ns->created_ms, 2000);
  EXPECT_EQ(catalog().GetNamespace(kWarehouse, {"nope"}).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(catalog().CreateNamespace({"no-such-warehouse", {"db"}, {}, 1}).code(), ErrorCode::kNotFound);
}

TEST_P(CatalogStoreContractTest, NestedNamespaceNeedsItsParent) {
  EXPECT_EQ(CreateNamespace({"a", "b"}).code(), ErrorCode::kNotFound);
  SERAC_ASSERT_OK(CreateNamespace({"a"}));
  SERAC_ASSERT_OK(CreateNamespace({"a", "b"}));
  SERAC_ASSERT_OK(CreateNamespace({"a", "b", "c"}));
  auto deep = catalog().GetNamespace(kWarehouse, {"a", "b", "c"});
  ASSERT_TRUE(deep.ok());
  EXPECT_EQ(deep->levels, (NamespaceLevels{"a", "b", "c"}));
  EXPECT_EQ(catalog().GetNamespace(kWarehouse, {"a", "c"}).status().code(), ErrorCode::kNotFound);
}

TEST_P(CatalogStoreContractTest, InvalidLevelsAreRejected) {
  EXPECT_EQ(CreateNamespace({}).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(CreateNamespace({""}).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(CreateNamespace({"a\x1F"
                             "b"})
                .code(),
            ErrorCode::kInvalidArgument);
}

TEST_P(CatalogStoreContractTest, LevelsMayHoldDotsSlashesSpacesAndUnicode) {
  const NamespaceLevels odd{"a.b", "c/d e", "日本語"};
  SERAC_ASSERT_OK(CreateNamespace({"a.b"}));
  SERAC_ASSERT_OK(CreateNamespace({"a.b", "c/d e"}));
  SERAC_ASSERT_OK(CreateNamespace(odd));
  SERAC_ASSERT_OK(CreateNamespace({"a"}));  // distinct from "a.b"
  EXPECT_EQ(ChildNames({}), (Names{"a", "a.b"}));
  EXPECT_EQ(ChildNames({"a.b"}), (Names{"c/d e"}));
  EXPECT_EQ(ChildNames({"a.b", "c/d e"}), (Names{"日本語"}));
  EXPECT_TRUE(ChildNames({"a"}).empty());
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity(odd, "my table.v1", EntityKind::kTable)));
  auto entity = catalog().GetEntity(Id(odd, "my table.v1"));
  ASSERT_TRUE(entity.ok()) << entity.status().ToString();
  EXPECT_EQ(entity->levels, odd);
}

TEST_P(CatalogStoreContractTest, ListNamespacesShowsDirectChildrenInPages) {
  for (const char* name : {"b", "a", "c", "d"}) SERAC_ASSERT_OK(CreateNamespace({name}));
  SERAC_ASSERT_OK(CreateNamespace({"a", "x"}));
  SERAC_ASSERT_OK(CreateNamespace({"a", "y"}));
  SERAC_ASSERT_OK(CreateNamespace({"a", "x", "deep"}));
  EXPECT_EQ(ChildNames({}, "", 3), (Names{"a", "b", "c"}));
  EXPECT_EQ(ChildNames({}, "c", 3), (Names{"d"}));
  EXPECT_EQ(ChildNames({"a"}), (Names{"x", "y"}));
  EXPECT_EQ(ChildNames({"a"}, "x"), (Names{"y"}));
  EXPECT_EQ(ChildNames({"a", "x"}), (Names{"deep"}));
  auto listed = catalog().ListNamespaces(kWarehouse, {"a"}, "", 10);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].levels, (NamespaceLevels{"a", "x"}));
  EXPECT_EQ(catalog().ListNamespaces(kWarehouse, {"missing"}, "", 10).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(catalog().ListNamespaces("missing", {}, "", 10).status().code(), ErrorCode::kNotFound);
}

TEST_P(CatalogStoreContractTest, UpdatePropertiesReportsUpdatedRemovedMissing) {
  SERAC_ASSERT_OK(CreateNamespace({"db"}, {{"keep", "1"}, {"drop", "2"}, {"change", "3"}}));
  NamespacePropertiesChange change;
  change.updates = {{"change", "30"}, {"new", "4"}};
  change.removals = {"drop", "absent"};
  auto report = catalog().UpdateNamespaceProperties(kWarehouse, {"db"}, change);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->updated, (Names{"change", "new"}));
  EXPECT_EQ(report->removed, (Names{"drop"}));
  EXPECT_EQ(report->missing, (Names{"absent"}));
  auto ns = catalog().GetNamespace(kWarehouse, {"db"});
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ(ns->properties,
            (std::map<std::string, std::string>{{"keep", "1"}, {"change", "30"}, {"new", "4"}}));

  NamespacePropertiesChange clash;
  clash.updates = {{"keep", "x"}};
  clash.removals = {"keep"};
  EXPECT_EQ(catalog().UpdateNamespaceProperties(kWarehouse, {"db"}, clash).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(catalog().UpdateNamespaceProperties(kWarehouse, {"nope"}, change).status().code(),
            ErrorCode::kNotFound);
  ns = catalog().GetNamespace(kWarehouse, {"db"});
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ(ns->properties.at("keep"), "1");
}

TEST_P(CatalogStoreContractTest, DropNamespaceRefusedWhileItHoldsAnything) {
  EXPECT_EQ(catalog().DropNamespace(kWarehouse, {"nope"}).code(), ErrorCode::kNotFound);
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(CreateNamespace({"db", "child"}));
  EXPECT_EQ(catalog().DropNamespace(kWarehouse, {"db"}).code(), ErrorCode::kNotEmpty);
  SERAC_ASSERT_OK(catalog().DropNamespace(kWarehouse, {"db", "child"}));

  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t", EntityKind::kTable)));
  EXPECT_EQ(catalog().DropNamespace(kWarehouse, {"db"}).code(), ErrorCode::kNotEmpty);
  SERAC_ASSERT_OK(catalog().DropEntity(Id({"db"}, "t")).status());

  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "v", EntityKind::kView)));
  EXPECT_EQ(catalog().DropNamespace(kWarehouse, {"db"}).code(), ErrorCode::kNotEmpty);
  SERAC_ASSERT_OK(catalog().DropEntity(Id({"db"}, "v", EntityKind::kView)).status());

  SERAC_ASSERT_OK(catalog().DropNamespace(kWarehouse, {"db"}));
  EXPECT_EQ(catalog().GetNamespace(kWarehouse, {"db"}).status().code(), ErrorCode::kNotFound);
}

// ---- Tables and views ----

TEST_P(CatalogStoreContractTest, TableAndViewShareOneNameSpace) {
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  EXPECT_EQ(catalog().CreateEntity(Entity({"nope"}, "t", EntityKind::kTable)).code(), ErrorCode::kNotFound);
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t", EntityKind::kTable)));
  EXPECT_EQ(catalog().CreateEntity(Entity({"db"}, "t", EntityKind::kTable)).code(),
            ErrorCode::kAlreadyExists);
  EXPECT_EQ(catalog().CreateEntity(Entity({"db"}, "t", EntityKind::kView)).code(), ErrorCode::kAlreadyExists);
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "v", EntityKind::kView)));
  EXPECT_EQ(catalog().CreateEntity(Entity({"db"}, "v", EntityKind::kTable)).code(),
            ErrorCode::kAlreadyExists);
  // A name is looked up with its kind: the view is not a table.
  EXPECT_EQ(catalog().GetEntity(Id({"db"}, "v", EntityKind::kTable)).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(catalog().GetEntity(Id({"db"}, "t", EntityKind::kView)).status().code(), ErrorCode::kNotFound);
}

TEST_P(CatalogStoreContractTest, GetEntityReturnsEveryField) {
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  EntityRecord created = Entity({"db"}, "events", EntityKind::kTable, "s3://lake/events/metadata/1.json");
  SERAC_ASSERT_OK(catalog().CreateEntity(created));
  auto got = catalog().GetEntity(Id({"db"}, "events"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->warehouse, kWarehouse);
  EXPECT_EQ(got->levels, (NamespaceLevels{"db"}));
  EXPECT_EQ(got->name, "events");
  EXPECT_EQ(got->kind, EntityKind::kTable);
  EXPECT_EQ(got->uuid, "uuid-events");
  EXPECT_EQ(got->location, "s3://lake/events");
  EXPECT_EQ(got->metadata_location, "s3://lake/events/metadata/1.json");
  EXPECT_EQ(got->created_ms, 3000);
  EXPECT_EQ(got->updated_ms, 3000);
  EXPECT_EQ(catalog().GetEntity(Id({"db"}, "nope")).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(catalog().GetEntity(Id({"nope"}, "events")).status().code(), ErrorCode::kNotFound);
}

TEST_P(CatalogStoreContractTest, ListEntitiesByKindInPages) {
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(CreateNamespace({"other"}));
  for (const char* name : {"t3", "t1", "t2"}) {
    SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, name, EntityKind::kTable)));
  }
  for (const char* name : {"v2", "v1"})
    SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, name, EntityKind::kView)));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"other"}, "t0", EntityKind::kTable)));
  EXPECT_EQ(EntityNames({"db"}, EntityKind::kTable, "", 2), (Names{"t1", "t2"}));
  EXPECT_EQ(EntityNames({"db"}, EntityKind::kTable, "t2", 2), (Names{"t3"}));
  EXPECT_EQ(EntityNames({"db"}, EntityKind::kView), (Names{"v1", "v2"}));
  EXPECT_EQ(EntityNames({"other"}, EntityKind::kTable), (Names{"t0"}));
  EXPECT_TRUE(EntityNames({"other"}, EntityKind::kView).empty());
  EXPECT_EQ(catalog().ListEntities(kWarehouse, {"nope"}, EntityKind::kTable, "", 10).status().code(),
            ErrorCode::kNotFound);
}

TEST_P(CatalogStoreContractTest, DropEntityReturnsIt) {
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t", EntityKind::kTable)));
  EXPECT_EQ(catalog().DropEntity(Id({"db"}, "t", EntityKind::kView)).status().code(), ErrorCode::kNotFound);
  auto dropped = catalog().DropEntity(Id({"db"}, "t"));
  ASSERT_TRUE(dropped.ok()) << dropped.status().ToString();
  EXPECT_EQ(dropped->location, "s3://lake/t");
  EXPECT_EQ(dropped->uuid, "uuid-t");
  EXPECT_EQ(catalog().GetEntity(Id({"db"}, "t")).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(catalog().DropEntity(Id({"db"}, "t")).status().code(), ErrorCode::kNotFound);
}

TEST_P(CatalogStoreContractTest, RenameAcrossNamespaces) {
  SERAC_ASSERT_OK(CreateNamespace({"src"}));
  SERAC_ASSERT_OK(CreateNamespace({"dst"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"src"}, "t", EntityKind::kTable)));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"dst"}, "taken", EntityKind::kView)));

  EXPECT_EQ(catalog().RenameEntity(Id({"src"}, "t"), {"dst"}, "taken").code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(catalog().RenameEntity(Id({"src"}, "t"), {"missing"}, "t2").code(), ErrorCode::kNotFound);
  EXPECT_EQ(catalog().RenameEntity(Id({"src"}, "nope"), {"dst"}, "t2").code(), ErrorCode::kNotFound);
  SERAC_EXPECT_OK(catalog().GetEntity(Id({"src"}, "t")).status());  // failed renames changed nothing

  SERAC_ASSERT_OK(catalog().RenameEntity(Id({"src"}, "t"), {"dst"}, "renamed"));
  EXPECT_EQ(catalog().GetEntity(Id({"src"}, "t")).status().code(), ErrorCode::kNotFound);
  auto moved = catalog().GetEntity(Id({"dst"}, "renamed"));
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(moved->uuid, "uuid-t");
  EXPECT_EQ(moved->location, "s3://lake/t");
  EXPECT_EQ(moved->metadata_location, "s3://lake/m/00000.metadata.json");
  EXPECT_EQ(EntityNames({"dst"}, EntityKind::kTable), (Names{"renamed"}));
  EXPECT_TRUE(EntityNames({"src"}, EntityKind::kTable).empty());
}

TEST_P(CatalogStoreContractTest, RegisterCreatesOrOverwrites) {
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(
      catalog().RegisterEntity(Entity({"db"}, "t", EntityKind::kTable, "s3://lake/a.json"), false));
  EXPECT_EQ(MetadataOf(Id({"db"}, "t")), "s3://lake/a.json");
  EXPECT_EQ(
      catalog().RegisterEntity(Entity({"db"}, "t", EntityKind::kTable, "s3://lake/b.json"), false).code(),
      ErrorCode::kAlreadyExists);
  EXPECT_EQ(MetadataOf(Id({"db"}, "t")), "s3://lake/a.json");
  SERAC_ASSERT_OK(
      catalog().RegisterEntity(Entity({"db"}, "t", EntityKind::kTable, "s3://lake/b.json"), true));
  EXPECT_EQ(MetadataOf(Id({"db"}, "t")), "s3://lake/b.json");
  // Overwrite never turns a table into a view.
  EXPECT_EQ(catalog().RegisterEntity(Entity({"db"}, "t", EntityKind::kView, "s3://lake/c.json"), true).code(),
            ErrorCode::kAlreadyExists);
  EXPECT_EQ(catalog().RegisterEntity(Entity({"nope"}, "t", EntityKind::kTable), true).code(),
            ErrorCode::kNotFound);
}

// ---- Compare-and-swap of metadata locations ----

// What a table or view owns, no other may (meta/catalog_locations.h): the store refuses the
// create, register or move that would overlap, naming the other, in the same transaction.
TEST_P(CatalogStoreContractTest, NoTwoEntitiesOwnOverlappingLocations) {
  SERAC_ASSERT_OK(CreateNamespace({"a"}));
  SERAC_ASSERT_OK(CreateNamespace({"b"}));
  EntityRecord victim = Entity({"a"}, "victim", EntityKind::kTable);
  victim.location = "s3://lake/a/victim-1";
  SERAC_ASSERT_OK(catalog().CreateEntity(victim));
  for (const char* location : {"s3://lake/a/victim-1", "s3a://lake/a/victim-1/", "s3://lake/a/victim-1/data",
                               "s3://lake/a", "s3://lake/b"}) {
    SCOPED_TRACE(location);
    EntityRecord attacker = Entity({"b"}, "attacker", EntityKind::kTable);
    attacker.location = location;
    Status created = catalog().CreateEntity(attacker);
    EXPECT_EQ(created.code(), ErrorCode::kValidationFailed);
    EXPECT_NE(created.message().find("overlaps"), std::string::npos) << created.message();
    EXPECT_EQ(catalog().RegisterEntity(attacker, false).code(), ErrorCode::kValidationFailed);
    attacker.kind = EntityKind::kView;  // views own their place too
    EXPECT_EQ(catalog().CreateEntity(attacker).code(), ErrorCode::kValidationFailed);
  }
  // Beside it (a name that only starts the same) is another place.
  EntityRecord neighbour = Entity({"a"}, "neighbour", EntityKind::kTable);
  neighbour.location = "s3://lake/a/victim-10";
  SERAC_EXPECT_OK(catalog().CreateEntity(neighbour));
  // Places that are not keys of the warehouse bucket own nothing and are refused.
  for (const char* location :
       {"s3://other/x", "s3://lake", "s3://lake/", "s3://lake/b/../a", "s3://lake/b//c", "file:/tmp/x"}) {
    EntityRecord odd = Entity({"b"}, "odd", EntityKind::kTable);
    odd.location = location;
    EXPECT_EQ(catalog().CreateEntity(odd).code(), ErrorCode::kValidationFailed) << location;
  }
  // A move onto the victim is refused in the commit's transaction, which then changes nothing.
  EntityRecord mover =
      Entity({"b"}, "mover", EntityKind::kTable, "s3://lake/b/mover/metadata/0.metadata.json");
  mover.location = "s3://lake/b/mover";
  SERAC_ASSERT_OK(catalog().CreateEntity(mover));
  MetadataCommit move;
  move.swaps.push_back({Id({"b"}, "mover"), mover.metadata_location,
                        "s3://lake/b/mover/metadata/1.metadata.json", "s3://lake/a/victim-1/x"});
  EXPECT_EQ(catalog().CommitMetadata(move).code(), ErrorCode::kValidationFailed);
  EXPECT_EQ(MetadataOf(Id({"b"}, "mover")), mover.metadata_location);
  move.swaps[0].new_location = "s3://lake/b/moved";
  SERAC_ASSERT_OK(catalog().CommitMetadata(move));
  EXPECT_EQ(catalog().GetEntity(Id({"b"}, "mover"))->location, "s3://lake/b/moved");
  mover.location = "s3://lake/b/mover";  // its old place is free again
  mover.name = "second";
  mover.uuid = "uuid-second";
  SERAC_EXPECT_OK(catalog().CreateEntity(mover));
  // Registering over an entity of the same name gives up what the old one owned.
  EntityRecord again = victim;
  again.metadata_location = "s3://lake/a/victim-1/metadata/9.metadata.json";
  SERAC_EXPECT_OK(catalog().RegisterEntity(again, true));
}

TEST_P(CatalogStoreContractTest, ANamespaceMayNotLieInsideAnEntity) {
  SERAC_ASSERT_OK(CreateNamespace({"a"}));
  EntityRecord squatter = Entity({"a"}, "squatter", EntityKind::kTable);
  squatter.location = "s3://lake/c";
  SERAC_ASSERT_OK(catalog().CreateEntity(squatter));
  Status refused = CreateNamespace({"c"});
  EXPECT_EQ(refused.code(), ErrorCode::kValidationFailed);
  EXPECT_NE(refused.message().find("a.squatter"), std::string::npos) << refused.message();
  // A level holding '/' is placed with '_' and is checked as placed.
  squatter.name = "squatter2";
  squatter.uuid = "uuid-squatter2";
  squatter.location = "s3://lake/d_e";
  SERAC_ASSERT_OK(catalog().CreateEntity(squatter));
  EXPECT_EQ(CreateNamespace({"d/e"}).code(), ErrorCode::kValidationFailed);
  SERAC_EXPECT_OK(CreateNamespace({"d"}));
}

TEST_P(CatalogStoreContractTest, AnEntitysUuidIsItsOwnInItsWarehouse) {
  SERAC_ASSERT_OK(CreateNamespace({"a"}));
  SERAC_ASSERT_OK(CreateNamespace({"b"}));
  EntityRecord victim = Entity({"a"}, "victim", EntityKind::kTable);
  SERAC_ASSERT_OK(catalog().CreateEntity(victim));
  EntityRecord copy = Entity({"b"}, "copy", EntityKind::kTable);
  copy.uuid = victim.uuid;
  Status refused = catalog().RegisterEntity(copy, false);
  EXPECT_EQ(refused.code(), ErrorCode::kValidationFailed);
  EXPECT_NE(refused.message().find("a.victim"), std::string::npos) << refused.message();
  EXPECT_EQ(catalog().CreateEntity(copy).code(), ErrorCode::kValidationFailed);
  // Another warehouse is another namespace of uuids (its settings are keyed by warehouse too).
  SERAC_ASSERT_OK(catalog().CreateWarehouse({"other", 1000}, false));
  SERAC_ASSERT_OK(catalog().CreateNamespace({"other", {"b"}, {}, 2000}));
  copy.warehouse = "other";
  copy.location = "s3://other/b/copy";
  SERAC_EXPECT_OK(catalog().CreateEntity(copy));
}

// S3 writes and deletes carry keep_catalog_metadata: they may not change which bytes a table's
// current metadata file holds, nor remove it; the catalog's own writes never replace a file.
TEST_P(CatalogStoreContractTest, S3CannotReplaceOrDeleteACurrentMetadataFile) {
  SERAC_ASSERT_OK(CreateNamespace({"a"}));
  EntityRecord table = Entity({"a"}, "t", EntityKind::kTable, "s3a://lake/t/metadata/1.metadata.json");
  SERAC_ASSERT_OK(catalog().CreateEntity(table));
  SERAC_ASSERT_OK(store_->PutObject(MakeObject("lake", "t/metadata/1.metadata.json", "v1"), {}));
  SERAC_ASSERT_OK(store_->PutObject(MakeObject("lake", "t/metadata/0.metadata.json", "v0"), {}));
  WriteCondition s3_write;
  s3_write.keep_catalog_metadata = true;
  Status replaced = store_->PutObject(MakeObject("lake", "t/metadata/1.metadata.json", "forged"), s3_write);
  EXPECT_EQ(replaced.code(), ErrorCode::kAccessDenied);
  EXPECT_NE(replaced.message().find("a.t"), std::string::npos) << replaced.message();
  EXPECT_EQ(store_->DeleteObject("lake", "t/metadata/1.metadata.json", s3_write).code(),
            ErrorCode::kAccessDenied);
  EXPECT_EQ(store_->GetObject("lake", "t/metadata/1.metadata.json")->etag, "v1");
  // A file that is no longer current, and any other object, are S3's to change.
  SERAC_EXPECT_OK(store_->DeleteObject("lake", "t/metadata/0.metadata.json", s3_write));
  SERAC_EXPECT_OK(store_->PutObject(MakeObject("lake", "t/data/x.parquet", "d"), s3_write));
}

TEST_P(CatalogStoreContractTest, SwapSucceedsFromTheExpectedLocation) {
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t", EntityKind::kTable, "s3://lake/0.json")));
  SERAC_ASSERT_OK(
      catalog().SwapMetadataLocations({{Id({"db"}, "t"), "s3://lake/0.json", "s3://lake/1.json"}}));
  auto swapped = catalog().GetEntity(Id({"db"}, "t"));
  ASSERT_TRUE(swapped.ok());
  EXPECT_EQ(swapped->metadata_location, "s3://lake/1.json");
  EXPECT_GT(swapped->updated_ms, 3000);  // now, not the creation time
  EXPECT_EQ(swapped->created_ms, 3000);
}

TEST_P(CatalogStoreContractTest, StaleSwapConflictsAndChangesNothing) {
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t", EntityKind::kTable, "s3://lake/1.json")));
  Status stale = catalog().SwapMetadataLocations({{Id({"db"}, "t"), "s3://lake/0.json", "s3://lake/2.json"}});
  EXPECT_EQ(stale.code(), ErrorCode::kConflict);
  EXPECT_NE(stale.message().find("db.t"), std::string::npos) << stale.message();
  EXPECT_EQ(MetadataOf(Id({"db"}, "t")), "s3://lake/1.json");
  EXPECT_EQ(catalog().SwapMetadataLocations({{Id({"db"}, "nope"), "a", "b"}}).code(), ErrorCode::kNotFound);
  // The kind is part of the identity: a view swap never touches a table.
  EXPECT_EQ(catalog()
                .SwapMetadataLocations(
                    {{Id({"db"}, "t", EntityKind::kView), "s3://lake/1.json", "s3://lake/2.json"}})
                .code(),
            ErrorCode::kNotFound);
  EXPECT_EQ(MetadataOf(Id({"db"}, "t")), "s3://lake/1.json");
}

TEST_P(CatalogStoreContractTest, MultiSwapIsAllOrNothing) {
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "a", EntityKind::kTable, "a0")));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "b", EntityKind::kTable, "b0")));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "c", EntityKind::kTable, "c0")));

  Status stale = catalog().SwapMetadataLocations(
      {{Id({"db"}, "a"), "a0", "a1"}, {Id({"db"}, "b"), "b-stale", "b1"}, {Id({"db"}, "c"), "c0", "c1"}});
  EXPECT_EQ(stale.code(), ErrorCode::kConflict);
  EXPECT_NE(stale.message().find("db.b"), std::string::npos) << stale.message();
  EXPECT_EQ(MetadataOf(Id({"db"}, "a")), "a0");
  EXPECT_EQ(MetadataOf(Id({"db"}, "c")), "c0");

  Status missing =
      catalog().SwapMetadataLocations({{Id({"db"}, "a"), "a0", "a1"}, {Id({"db"}, "zz"), "z", "z1"}});
  EXPECT_EQ(missing.code(), ErrorCode::kNotFound);
  EXPECT_EQ(MetadataOf(Id({"db"}, "a")), "a0");

  SERAC_ASSERT_OK(catalog().SwapMetadataLocations(
      {{Id({"db"}, "a"), "a0", "a1"}, {Id({"db"}, "b"), "b0", "b1"}, {Id({"db"}, "c"), "c0", "c1"}}));
  EXPECT_EQ(MetadataOf(Id({"db"}, "a")), "a1");
  EXPECT_EQ(MetadataOf(Id({"db"}, "b")), "b1");
  EXPECT_EQ(MetadataOf(Id({"db"}, "c")), "c1");
}

TEST_P(CatalogStoreContractTest, CommitMetadataIsOneAllOrNothingStep) {
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t", EntityKind::kTable, "s3://lake/db/t/0.json")));
  SERAC_ASSERT_OK(store_->PutObject(MakeObject(kWarehouse, "db/t/old.json", "e0"), {}));

  MetadataCommit commit;
  commit.new_files.push_back(MakeObject(kWarehouse, "db/t/1.json", "e1"));
  commit.new_files.push_back(MakeObject(kWarehouse, "db/s/0.json", "e2"));
  commit.created.push_back(Entity({"db"}, "s", EntityKind::kTable, "s3://lake/db/s/0.json"));
  commit.swaps.push_back({Id({"db"}, "t"), "s3://lake/db/t/0.json", "s3://lake/db/t/1.json"});
  commit.removed_files = {{kWarehouse, "db/t/old.json"}, {kWarehouse, "db/t/never-existed.json"}};

  // A stale swap: nothing of the whole commit happens.
  MetadataCommit stale = commit;
  stale.swaps[0].expected_metadata_location = "s3://lake/db/t/stale.json";
  EXPECT_EQ(catalog().CommitMetadata(stale).code(), ErrorCode::kConflict);
  EXPECT_EQ(store_->GetObject(kWarehouse, "db/t/1.json").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(catalog().GetEntity(Id({"db"}, "s")).status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(store_->GetObject(kWarehouse, "db/t/old.json").ok());

  // A new file whose key exists: refused, nothing changes.
  MetadataCommit clash = commit;
  clash.new_files.push_back(MakeObject(kWarehouse, "db/t/old.json", "e9"));
  EXPECT_EQ(catalog().CommitMetadata(clash).code(), ErrorCode::kPreconditionFailed);
  EXPECT_EQ(MetadataOf(Id({"db"}, "t")), "s3://lake/db/t/0.json");

  SERAC_ASSERT_OK(catalog().CommitMetadata(commit));
  EXPECT_EQ(MetadataOf(Id({"db"}, "t")), "s3://lake/db/t/1.json");
  EXPECT_EQ(MetadataOf(Id({"db"}, "s")), "s3://lake/db/s/0.json");
  EXPECT_TRUE(store_->GetObject(kWarehouse, "db/t/1.json").ok());
  EXPECT_EQ(store_->GetObject(kWarehouse, "db/t/old.json").status().code(), ErrorCode::kNotFound);
  Reopen();
  EXPECT_EQ(MetadataOf(Id({"db"}, "t")), "s3://lake/db/t/1.json");
  EXPECT_TRUE(store_->GetObject(kWarehouse, "db/s/0.json").ok());
}

TEST_P(CatalogStoreContractTest, OnVisibleRunsOnceForACommitThatHappensAndNeverForOneRefused) {
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t", EntityKind::kTable, "s3://lake/db/t/0.json")));
  int calls = 0;
  std::string seen_by_the_callback;
  MetadataCommit commit;
  commit.new_files.push_back(MakeObject(kWarehouse, "db/t/1.json", "e1"));
  commit.swaps.push_back({Id({"db"}, "t"), "s3://lake/db/t/0.json", "s3://lake/db/t/1.json"});
  commit.on_visible = [&] {
    ++calls;
    // What the next commit of the table reads once it is let in.
    seen_by_the_callback = MetadataOf(Id({"db"}, "t"));
  };
  MetadataCommit stale = commit;
  stale.swaps[0].expected_metadata_location = "s3://lake/db/t/stale.json";
  EXPECT_EQ(catalog().CommitMetadata(stale).code(), ErrorCode::kConflict);
  EXPECT_EQ(calls, 0);

  SERAC_ASSERT_OK(catalog().CommitMetadata(commit));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen_by_the_callback, "s3://lake/db/t/1.json");
}

// Every field of the row, to compare what a store serves (perhaps from its cache) with the database.
std::string RowText(const Result<EntityRecord>& row) {
  if (!row.ok()) return row.status().ToString();
  std::string levels;
  for (const std::string& level : row->levels) levels += level + "/";
  return row->warehouse + "|" + levels + "|" + row->name + "|" + std::to_string(static_cast<int>(row->kind)) +
         "|" + row->uuid + "|" + row->location + "|" + row->metadata_location + "|" +
         std::to_string(row->created_ms) + "|" + std::to_string(row->updated_ms);
}

TEST_P(CatalogStoreContractTest, AfterACommitEveryRowReadsAsTheDatabaseHasIt) {
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "a", EntityKind::kTable, "a0")));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "b", EntityKind::kTable, "b0")));
  ASSERT_TRUE(catalog().GetEntity(Id({"db"}, "a")).ok());  // read once, so a store may cache them
  ASSERT_TRUE(catalog().GetEntity(Id({"db"}, "b")).ok());
  EXPECT_EQ(catalog().GetEntity(Id({"db"}, "s")).status().code(), ErrorCode::kNotFound);
  MetadataCommit commit;
  commit.swaps.push_back({Id({"db"}, "a"), "a0", "a1"});
  commit.created.push_back(Entity({"db"}, "s", EntityKind::kTable, "s0"));
  SERAC_ASSERT_OK(catalog().CommitMetadata(commit));
  std::vector<std::string> served;
  for (const char* name : {"a", "b", "s"}) served.push_back(RowText(catalog().GetEntity(Id({"db"}, name))));
  EXPECT_NE(served[0].find("|a1|"), std::string::npos) << served[0];
  Reopen();  // nothing cached: every row from the database
  for (size_t i = 0; i < served.size(); ++i) {
    EXPECT_EQ(served[i], RowText(catalog().GetEntity(Id({"db"}, std::string(1, "abs"[i]))))) << i;
  }
}

TEST_P(CatalogStoreContractTest, ARowReadBeforeACommitIsNeverServedAfterIt) {
  // Readers keep reading the table while commits move it on; right after each commit returns, a
  // read must give the new location, never a row some reader read before the commit.
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t", EntityKind::kTable, "m0")));
  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      while (!stop.load()) (void)catalog().GetEntity(Id({"db"}, "t"));
    });
  }
  for (int i = 1; i <= 100; ++i) {
    MetadataCommit commit;
    commit.swaps.push_back({Id({"db"}, "t"), "m" + std::to_string(i - 1), "m" + std::to_string(i)});
    SERAC_ASSERT_OK(catalog().CommitMetadata(commit));
    ASSERT_EQ(MetadataOf(Id({"db"}, "t")), "m" + std::to_string(i));
  }
  stop = true;
  for (auto& reader : readers) reader.join();
}

TEST_P(CatalogStoreContractTest, RacingSwapsFromOneLocationHaveExactlyOneWinner) {
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "hot", EntityKind::kTable, "base")));
  constexpr int kThreads = 8;
  std::barrier start(kThreads);
  std::atomic<int> wins{0};
  std::atomic<int> conflicts{0};
  std::atomic<int> winner{-1};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      Status status =
          catalog().SwapMetadataLocations({{Id({"db"}, "hot"), "base", "next-" + std::to_string(t)}});
      if (status.ok()) {
        ++wins;
        winner = t;
      } else if (status.code() == ErrorCode::kConflict) {
        ++conflicts;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wins.load(), 1);
  EXPECT_EQ(conflicts.load(), kThreads - 1);
  EXPECT_EQ(MetadataOf(Id({"db"}, "hot")), "next-" + std::to_string(winner.load()));
}

TEST_P(CatalogStoreContractTest, CommitsToManyTablesAtOnceAllLand) {
  // Commits to different tables touch different rows: none may fail for another's sake, whatever
  // the store does to keep each one whole (new metadata file, swap, trimmed file, in one step).
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  constexpr int kTables = 8;
  constexpr int kCommitsPerTable = 25;
  for (int t = 0; t < kTables; ++t) {
    SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t" + std::to_string(t), EntityKind::kTable,
                                                  "s3://lake/t" + std::to_string(t) + "/m/0")));
  }
  std::barrier start(kTables);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kTables; ++t) {
    threads.emplace_back([&, t] {
      const std::string name = "t" + std::to_string(t);
      start.arrive_and_wait();
      for (int i = 1; i <= kCommitsPerTable; ++i) {
        MetadataCommit commit;
        ObjectRecord file = MakeObject(kWarehouse, name + "/m/" + std::to_string(i), "e" + std::to_string(i));
        file.inline_data = "{\"version\":" + std::to_string(i) + "}";
        file.size = file.inline_data.size();
        commit.new_files.push_back(std::move(file));
        commit.swaps.push_back({Id({"db"}, name), "s3://lake/" + name + "/m/" + std::to_string(i - 1),
                                "s3://lake/" + name + "/m/" + std::to_string(i)});
        if (i >= 2) commit.removed_files.emplace_back(kWarehouse, name + "/m/" + std::to_string(i - 2));
        Status status = catalog().CommitMetadata(commit);
        if (!status.ok()) {
          ++failures;
          ADD_FAILURE() << name << " commit " << i << ": " << status.ToString();
          return;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  for (int t = 0; t < kTables; ++t) {
    const std::string name = "t" + std::to_string(t);
    EXPECT_EQ(MetadataOf(Id({"db"}, name)), "s3://lake/" + name + "/m/" + std::to_string(kCommitsPerTable));
    auto listed = store_->ListObjects({kWarehouse, name + "/m/", "", 100, false});
    ASSERT_TRUE(listed.ok()) << listed.status().ToString();
    EXPECT_EQ(listed->size(), 2u) << name;  // the newest two files: the rest were trimmed
  }
}

// ---- Table maintenance ----

constexpr const char* kCompaction = "icebergCompaction";
constexpr const char* kSnapshots = "icebergSnapshotManagement";
constexpr const char* kOrphans = "icebergUnreferencedFileRemoval";
using Starts = std::vector<int64_t>;

TEST_P(CatalogStoreContractTest, MaintenanceSettingsPutReplaceListInTypeOrderAndDelete) {
  EXPECT_TRUE(Settings("").empty());
  SERAC_ASSERT_OK(catalog().PutMaintenanceSetting(Setting("", kSnapshots, R"({"status":"enabled"})", 10)));
  SERAC_ASSERT_OK(catalog().PutMaintenanceSetting(Setting("", kOrphans, R"({"status":"disabled"})", 11)));
  SERAC_ASSERT_OK(catalog().PutMaintenanceSetting(Setting("", kCompaction, R"({"a":1})", 12)));
  SERAC_ASSERT_OK(catalog().PutMaintenanceSetting(Setting("", kCompaction, R"({"a":2})", 13)));  // replaces
  EXPECT_EQ(Settings(""),
            (Names{R"(icebergCompaction={"a":2}@13)", R"(icebergSnapshotManagement={"status":"enabled"}@10)",
                   R"(icebergUnreferencedFileRemoval={"status":"disabled"}@11)"}));

  SERAC_ASSERT_OK(catalog().DeleteMaintenanceSetting(kWarehouse, "", kCompaction));
  EXPECT_EQ(catalog().DeleteMaintenanceSetting(kWarehouse, "", kCompaction).code(), ErrorCode::kNotFound);
  EXPECT_EQ(catalog().DeleteMaintenanceSetting(kWarehouse, "", "noSuchType").code(), ErrorCode::kNotFound);
  EXPECT_EQ(Settings(""), (Names{R"(icebergSnapshotManagement={"status":"enabled"}@10)",
                                 R"(icebergUnreferencedFileRemoval={"status":"disabled"}@11)"}));
}

TEST_P(CatalogStoreContractTest, MaintenanceSettingsOfAWarehouseAndOfItsTablesAreKeptApart) {
  SERAC_ASSERT_OK(catalog().CreateWarehouse({"other", 1}, false));
  SERAC_ASSERT_OK(catalog().PutMaintenanceSetting(Setting("", kCompaction, "{\"w\":1}")));
  SERAC_ASSERT_OK(catalog().PutMaintenanceSetting(Setting("uuid-t", kCompaction, "{\"t\":1}")));
  SERAC_ASSERT_OK(catalog().PutMaintenanceSetting(Setting("uuid-u", kSnapshots, "{\"u\":1}")));
  SERAC_ASSERT_OK(catalog().PutMaintenanceSetting({"other", "", kCompaction, "{\"o\":1}", 5}));
  EXPECT_EQ(Settings(""), (Names{"icebergCompaction={\"w\":1}@4000"}));
  EXPECT_EQ(Settings("uuid-t"), (Names{"icebergCompaction={\"t\":1}@4000"}));
  EXPECT_EQ(Settings("uuid-u"), (Names{"icebergSnapshotManagement={\"u\":1}@4000"}));
  EXPECT_EQ(Settings("", "other"), (Names{"icebergCompaction={\"o\":1}@5"}));
  EXPECT_TRUE(Settings("uuid-none").empty());

  // Removing the table's override leaves the warehouse's default, and the other way round.
  SERAC_ASSERT_OK(catalog().DeleteMaintenanceSetting(kWarehouse, "uuid-t", kCompaction));
  EXPECT_EQ(Settings(""), (Names{"icebergCompaction={\"w\":1}@4000"}));
  EXPECT_EQ(catalog().DeleteMaintenanceSetting(kWarehouse, "uuid-u", kCompaction).code(),
            ErrorCode::kNotFound);
  SERAC_ASSERT_OK(catalog().DeleteMaintenanceSetting(kWarehouse, "", kCompaction));
  EXPECT_EQ(Settings("uuid-u"), (Names{"icebergSnapshotManagement={\"u\":1}@4000"}));
  EXPECT_EQ(Settings("", "other"), (Names{"icebergCompaction={\"o\":1}@5"}));
}

TEST_P(CatalogStoreContractTest, MaintenanceSettingNeedsItsWarehouseAndAType) {
  MaintenanceSetting orphan = Setting("", kCompaction, "{}");
  orphan.warehouse = "missing";
  EXPECT_EQ(catalog().PutMaintenanceSetting(orphan).code(), ErrorCode::kNotFound);
  orphan.table_uuid = "uuid-t";
  EXPECT_EQ(catalog().PutMaintenanceSetting(orphan).code(), ErrorCode::kNotFound);
  EXPECT_TRUE(Settings("", "missing").empty());
  EXPECT_EQ(catalog().PutMaintenanceSetting(Setting("", "", "{}")).code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Settings("").empty());
}

TEST_P(CatalogStoreContractTest, MaintenanceSettingIsBoundedInSize) {
  const std::string largest = "\"" + std::string(limits::kMaintenanceSettingBytesMax - 2, 'x') + "\"";
  SERAC_ASSERT_OK(catalog().PutMaintenanceSetting(Setting("", kCompaction, largest)));
  EXPECT_EQ(catalog().PutMaintenanceSetting(Setting("", kCompaction, largest + " ")).code(),
            ErrorCode::kLimitExceeded);
  auto listed = catalog().ListMaintenanceSettings(kWarehouse, "");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].json, largest);
}

TEST_P(CatalogStoreContractTest, MaintenanceJobsAreSavedUpdatedAndListedNewestFirst) {
  const int64_t first = SaveJob(Job("uuid-t", kCompaction, 100));
  const int64_t second = SaveJob(Job("uuid-t", kSnapshots, 200));
  const int64_t third = SaveJob(Job("uuid-t", kCompaction, 300));
  SaveJob(Job("uuid-u", kCompaction, 400));
  EXPECT_GT(first, 0);
  EXPECT_LT(first, second);
  EXPECT_LT(second, third);

  EXPECT_EQ(JobStarts("uuid-t"), (Starts{300, 200, 100}));
  EXPECT_EQ(JobStarts("uuid-t", kCompaction), (Starts{300, 100}));
  EXPECT_EQ(JobStarts("uuid-t", kSnapshots), (Starts{200}));
  EXPECT_TRUE(JobStarts("uuid-t", kOrphans).empty());
  EXPECT_EQ(JobStarts("uuid-t", "", 2), (Starts{300, 200}));
  EXPECT_EQ(JobStarts("uuid-t", kCompaction, 1), (Starts{300}));
  EXPECT_TRUE(JobStarts("uuid-t", "", 0).empty());
  EXPECT_EQ(JobStarts("uuid-u"), (Starts{400}));
  EXPECT_TRUE(JobStarts("uuid-none").empty());

  MaintenanceJobRecord ended = Job("uuid-t", kCompaction, 100);
  ended.id = first;
  ended.ended_ms = 150;
  ended.status = "failed";
  ended.json = R"({"table":"db.t","error":"disk full"})";
  auto saved = catalog().SaveMaintenanceJob(ended);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  EXPECT_EQ(*saved, first);
  std::vector<MaintenanceJobRecord> jobs = Jobs("uuid-t", kCompaction);
  ASSERT_EQ(jobs.size(), 2u);  // replaced, not added
  EXPECT_EQ(jobs[1].id, first);
  EXPECT_EQ(jobs[1].warehouse, kWarehouse);
  EXPECT_EQ(jobs[1].table_uuid, "uuid-t");
  EXPECT_EQ(jobs[1].type, kCompaction);
  EXPECT_EQ(jobs[1].started_ms, 100);
  EXPECT_EQ(jobs[1].ended_ms, 150);
  EXPECT_EQ(jobs[1].status, "failed");
  EXPECT_EQ(jobs[1].json, ended.json);
  EXPECT_EQ(jobs[0].id, third);
  EXPECT_EQ(jobs[0].ended_ms, 0);
  EXPECT_EQ(jobs[0].status, "running");
}

TEST_P(CatalogStoreContractTest, SavingAMissingMaintenanceJobIsNotFound) {
  const int64_t id = SaveJob(Job("uuid-t", kCompaction, 100));
  MaintenanceJobRecord missing = Job("uuid-t", kCompaction, 200);
  missing.id = id + 1000;
  EXPECT_EQ(catalog().SaveMaintenanceJob(missing).status().code(), ErrorCode::kNotFound);
  // An id names one table's job of one type: it never replaces another's record.
  MaintenanceJobRecord elsewhere = Job("uuid-u", kCompaction, 200);
  elsewhere.id = id;
  EXPECT_EQ(catalog().SaveMaintenanceJob(elsewhere).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(JobStarts("uuid-t"), (Starts{100}));
  EXPECT_TRUE(JobStarts("uuid-u").empty());
  EXPECT_EQ(catalog().SaveMaintenanceJob(Job("", kCompaction, 1)).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(catalog().SaveMaintenanceJob(Job("uuid-t", "", 1)).status().code(), ErrorCode::kInvalidArgument);
}

TEST_P(CatalogStoreContractTest, MaintenanceJobsKeepTheNewestPerTableAndType) {
  const int64_t kept = limits::kMaintenanceJobsKeptPerTable;
  for (int64_t i = 0; i < kept + 5; ++i) SaveJob(Job("uuid-t", kCompaction, 1000 + i));
  for (int64_t i = 0; i < 3; ++i) SaveJob(Job("uuid-t", kSnapshots, 5000 + i));
  for (int64_t i = 0; i < 2; ++i) SaveJob(Job("uuid-u", kCompaction, 6000 + i));

  Starts expected;
  for (int64_t i = kept + 4; i >= 5; --i) expected.push_back(1000 + i);  // the oldest five are gone
  EXPECT_EQ(JobStarts("uuid-t", kCompaction), expected);
  EXPECT_EQ(JobStarts("uuid-t", kSnapshots), (Starts{5002, 5001, 5000}));
  EXPECT_EQ(JobStarts("uuid-u", kCompaction), (Starts{6001, 6000}));
  EXPECT_EQ(Jobs("uuid-t").size(), static_cast<size_t>(kept + 3));

  // Updating a record adds none, so drops none.
  std::vector<MaintenanceJobRecord> newest = Jobs("uuid-t", kCompaction, 1);
  ASSERT_EQ(newest.size(), 1u);
  newest[0].status = "succeeded";
  SERAC_ASSERT_OK(catalog().SaveMaintenanceJob(newest[0]).status());
  EXPECT_EQ(JobStarts("uuid-t", kCompaction), expected);
}

TEST_P(CatalogStoreContractTest, DroppingATableRemovesItsMaintenanceStateAndRenamingKeepsIt) {
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t", EntityKind::kTable)));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "u", EntityKind::kTable)));
  SERAC_ASSERT_OK(catalog().PutMaintenanceSetting(Setting("", kCompaction, "{}")));
  for (const char* uuid : {"uuid-t", "uuid-u"}) {
    SERAC_ASSERT_OK(catalog().PutMaintenanceSetting(Setting(uuid, kCompaction, "{}")));
    SERAC_ASSERT_OK(catalog().PutMaintenanceSetting(Setting(uuid, kSnapshots, "{}")));
    SaveJob(Job(uuid, kCompaction, 1));
    SaveJob(Job(uuid, kSnapshots, 2));
  }

  SERAC_ASSERT_OK(catalog().DropEntity(Id({"db"}, "t")).status());
  EXPECT_TRUE(Settings("uuid-t").empty());
  EXPECT_TRUE(Jobs("uuid-t").empty());
  EXPECT_EQ(Settings("uuid-u").size(), 2u);
  EXPECT_EQ(JobStarts("uuid-u"), (Starts{2, 1}));
  EXPECT_EQ(Settings("").size(), 1u);

  SERAC_ASSERT_OK(catalog().RenameEntity(Id({"db"}, "u"), {"db"}, "renamed"));
  EXPECT_EQ(Settings("uuid-u").size(), 2u);
  EXPECT_EQ(JobStarts("uuid-u"), (Starts{2, 1}));
}

TEST_P(CatalogStoreContractTest, DeletingAWarehouseRemovesItsMaintenanceState) {
  SERAC_ASSERT_OK(catalog().CreateWarehouse({"other", 1}, false));
  SERAC_ASSERT_OK(catalog().PutMaintenanceSetting({"other", "", kCompaction, "{}", 1}));
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t", EntityKind::kTable)));
  SERAC_ASSERT_OK(catalog().PutMaintenanceSetting(Setting("", kCompaction, "{}")));
  SERAC_ASSERT_OK(catalog().PutMaintenanceSetting(Setting("uuid-t", kSnapshots, "{}")));
  SaveJob(Job("uuid-t", kSnapshots, 1));

  SERAC_ASSERT_OK(catalog().DeleteWarehouse(kWarehouse, true, false));
  EXPECT_TRUE(Settings("").empty());
  EXPECT_TRUE(Settings("uuid-t").empty());
  EXPECT_TRUE(Jobs("uuid-t").empty());
  EXPECT_EQ(Settings("", "other").size(), 1u);

  // A warehouse of the same name starts with nothing; one holding only settings goes without force.
  SERAC_ASSERT_OK(catalog().CreateWarehouse({kWarehouse, 5000}, false));
  EXPECT_TRUE(Settings("").empty());
  SERAC_ASSERT_OK(catalog().DeleteWarehouse("other", false, false));
  EXPECT_TRUE(Settings("", "other").empty());
}

// ---- Durability ----

TEST_P(CatalogStoreContractTest, ReopenKeepsEverything) {
  SERAC_ASSERT_OK(CreateNamespace({"db"}, {{"k", "v"}}));
  SERAC_ASSERT_OK(CreateNamespace({"db", "ünïcode"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t", EntityKind::kTable, "m0")));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db", "ünïcode"}, "v", EntityKind::kView, "v0")));
  SERAC_ASSERT_OK(catalog().SwapMetadataLocations({{Id({"db"}, "t"), "m0", "m1"}}));
  Reopen();
  SERAC_EXPECT_OK(catalog().GetWarehouse(kWarehouse).status());
  auto ns = catalog().GetNamespace(kWarehouse, {"db"});
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ(ns->properties.at("k"), "v");
  EXPECT_EQ(ChildNames({"db"}), (Names{"ünïcode"}));
  EXPECT_EQ(MetadataOf(Id({"db"}, "t")), "m1");
  EXPECT_EQ(MetadataOf(Id({"db", "ünïcode"}, "v", EntityKind::kView)), "v0");
  EXPECT_EQ(store_->DeleteBucket(kWarehouse).code(), ErrorCode::kConflict);
}

TEST_P(CatalogStoreContractTest, ReopenKeepsMaintenanceState) {
  SERAC_ASSERT_OK(catalog().PutMaintenanceSetting(Setting("", kCompaction, "{\"w\":1}", 7)));
  SERAC_ASSERT_OK(catalog().PutMaintenanceSetting(Setting("uuid-t", kSnapshots, "{\"t\":1}", 8)));
  const int64_t first = SaveJob(Job("uuid-t", kCompaction, 100));
  const int64_t second = SaveJob(Job("uuid-t", kSnapshots, 200));
  Reopen();
  EXPECT_EQ(Settings(""), (Names{"icebergCompaction={\"w\":1}@7"}));
  EXPECT_EQ(Settings("uuid-t"), (Names{"icebergSnapshotManagement={\"t\":1}@8"}));
  EXPECT_EQ(JobStarts("uuid-t"), (Starts{200, 100}));
  // Ids keep ascending across a restart, and are never handed out twice.
  const int64_t third = SaveJob(Job("uuid-t", kCompaction, 300));
  EXPECT_GT(third, second);
  EXPECT_GT(second, first);
}

// Cases that need the fault-injecting wrapper; they run on that back end only.
class CatalogStoreFaultTest : public CatalogStoreContractTest {
 protected:
  FaultInjectionMetaStore* fault_injector() { return &dynamic_cast<FaultInjectionMetaStore&>(*store_); }
};

TEST_P(CatalogStoreFaultTest, FailedCatalogWriteLeavesNoTrace) {
  FaultInjectionMetaStore* faulty = fault_injector();
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t", EntityKind::kTable, "m0")));

  faulty->FailNthMutation(1, FaultTiming::kBeforeDelegating);
  EXPECT_EQ(catalog().SwapMetadataLocations({{Id({"db"}, "t"), "m0", "m1"}}).code(), ErrorCode::kIoError);
  EXPECT_EQ(MetadataOf(Id({"db"}, "t")), "m0");

  // The acknowledgement is lost but the swap happened: a retry from the old location conflicts.
  faulty->FailNthMutation(1, FaultTiming::kAfterDelegating);
  EXPECT_EQ(catalog().SwapMetadataLocations({{Id({"db"}, "t"), "m0", "m1"}}).code(), ErrorCode::kIoError);
  SERAC_ASSERT_OK(faulty->SimulateCrash());
  EXPECT_EQ(MetadataOf(Id({"db"}, "t")), "m1");
  EXPECT_EQ(catalog().SwapMetadataLocations({{Id({"db"}, "t"), "m0", "m1"}}).code(), ErrorCode::kConflict);
}

// A commit whose acknowledgement is lost has still called on_visible: the caller knows the
// outcome is unknown rather than a failure. One that fails before the store never calls it.
TEST_P(CatalogStoreFaultTest, OnVisibleTellsALostAcknowledgementFromAFailure) {
  FaultInjectionMetaStore* faulty = fault_injector();
  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t", EntityKind::kTable, "m0")));
  int calls = 0;
  MetadataCommit commit;
  commit.swaps.push_back({Id({"db"}, "t"), "m0", "m1"});
  commit.on_visible = [&] { ++calls; };
  faulty->FailNthMutation(1, FaultTiming::kBeforeDelegating);
  EXPECT_EQ(catalog().CommitMetadata(commit).code(), ErrorCode::kIoError);
  EXPECT_EQ(calls, 0);
  faulty->FailNthMutation(1, FaultTiming::kAfterDelegating);
  EXPECT_EQ(catalog().CommitMetadata(commit).code(), ErrorCode::kIoError);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(MetadataOf(Id({"db"}, "t")), "m1");
}

// A maintenance write that fails happens not at all; one whose acknowledgement is lost happened
// whole: a new job record together with the trimming of the oldest, a table's drop together with
// its settings and jobs.
TEST_P(CatalogStoreFaultTest, MaintenanceWritesHappenWholeOrNotAtAll) {
  FaultInjectionMetaStore* faulty = fault_injector();
  const int64_t kept = limits::kMaintenanceJobsKeptPerTable;
  for (int64_t i = 0; i < kept; ++i) SaveJob(Job("uuid-t", kCompaction, 1000 + i));

  faulty->FailNthMutation(1, FaultTiming::kBeforeDelegating);
  EXPECT_EQ(catalog().SaveMaintenanceJob(Job("uuid-t", kCompaction, 9000)).status().code(),
            ErrorCode::kIoError);
  Starts starts = JobStarts("uuid-t");
  ASSERT_EQ(starts.size(), static_cast<size_t>(kept));
  EXPECT_EQ(starts.front(), 1000 + kept - 1);
  EXPECT_EQ(starts.back(), 1000);

  faulty->FailNthMutation(1, FaultTiming::kAfterDelegating);
  EXPECT_EQ(catalog().SaveMaintenanceJob(Job("uuid-t", kCompaction, 9001)).status().code(),
            ErrorCode::kIoError);
  SERAC_ASSERT_OK(faulty->SimulateCrash());
  starts = JobStarts("uuid-t");
  ASSERT_EQ(starts.size(), static_cast<size_t>(kept));
  EXPECT_EQ(starts.front(), 9001);
  EXPECT_EQ(starts.back(), 1001);

  faulty->FailNthMutation(1, FaultTiming::kBeforeDelegating);
  EXPECT_EQ(catalog().PutMaintenanceSetting(Setting("uuid-t", kCompaction, "{}")).code(),
            ErrorCode::kIoError);
  EXPECT_TRUE(Settings("uuid-t").empty());
  faulty->FailNthMutation(1, FaultTiming::kAfterDelegating);
  EXPECT_EQ(catalog().PutMaintenanceSetting(Setting("uuid-t", kCompaction, "{}")).code(),
            ErrorCode::kIoError);
  SERAC_ASSERT_OK(faulty->SimulateCrash());
  EXPECT_EQ(Settings("uuid-t"), (Names{"icebergCompaction={}@4000"}));

  SERAC_ASSERT_OK(CreateNamespace({"db"}));
  SERAC_ASSERT_OK(catalog().CreateEntity(Entity({"db"}, "t", EntityKind::kTable)));
  faulty->FailNthMutation(1, FaultTiming::kBeforeDelegating);
  EXPECT_EQ(catalog().DropEntity(Id({"db"}, "t")).status().code(), ErrorCode::kIoError);
  EXPECT_EQ(Settings("uuid-t").size(), 1u);
  EXPECT_EQ(Jobs("uuid-t").size(), static_cast<size_t>(kept));
  faulty->FailNthMutation(1, FaultTiming::kAfterDelegating);
  EXPECT_EQ(catalog().DropEntity(Id({"db"}, "t")).status().code(), ErrorCode::kIoError);
  SERAC_ASSERT_OK(faulty->SimulateCrash());
  EXPECT_EQ(catalog().GetEntity(Id({"db"}, "t")).status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(Settings("uuid-t").empty());
  EXPECT_TRUE(Jobs("uuid-t").empty());
}

SERAC_INSTANTIATE_CONTRACT_SUITE(CatalogStoreContractTest);
SERAC_INSTANTIATE_FAULT_SUITE(CatalogStoreFaultTest);

}  // namespace
}  // namespace serac::meta
