#include "meta/meta_migration.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "common/hash.h"
#include "common/limits.h"

namespace serac::meta {
namespace {

constexpr uint32_t kObjectPage = limits::kKeysPerListMax;
constexpr uint32_t kCatalogPage = limits::kCatalogPageSizeMax;
// A table keeps at most limits::kMaintenanceJobsKeptPerTable records per type; its whole history is
// read at once.
constexpr uint32_t kEveryJob = std::numeric_limits<uint32_t>::max();

// The error of a step, prefixed with what was being done, so that a failed run says where it stopped.
Status InStep(Status status, const std::string& step) {
  if (status.ok()) return status;
  return Error(status.code(), step + ": " + status.message());
}

template <typename T>
Result<T> InStep(Result<T> result, const std::string& step) {
  if (result.ok()) return result;
  return InStep(result.status(), step);
}

bool IsNotFound(const Status& status) { return status.code() == ErrorCode::kNotFound; }

std::string NamespaceName(const std::string& warehouse, const NamespaceLevels& levels) {
  std::string name = warehouse + "/";
  for (size_t i = 0; i < levels.size(); ++i) name += (i == 0 ? "" : ".") + levels[i];
  return name;
}

std::string EntityName(const EntityRecord& entity) {
  return NamespaceName(entity.warehouse, entity.levels) + "." + entity.name;
}

EntityId IdOf(const EntityRecord& entity) {
  return EntityId{entity.warehouse, entity.levels, entity.name, entity.kind};
}

// A map key in the listing order of levels: 0x1F never occurs inside a level.
std::string LevelsKey(const NamespaceLevels& levels) {
  std::string key;
  for (const std::string& level : levels) key += level + '\x1f';
  return key;
}

// Reads one bucket's objects in key order, a page at a time. A pointer it returns is valid until
// the cursor moves.
class ObjectCursor {
 public:
  ObjectCursor(MetaStore& store, const std::string& bucket, bool with_details) : store_(store) {
    query_.bucket = bucket;
    query_.limit = kObjectPage;
    query_.with_details = with_details;
  }

  // The object at the cursor; nullptr past the last one.
  Result<const ObjectRecord*> Current() {
    if (index_ == page_.size()) {
      if (exhausted_) return nullptr;
      SERAC_ASSIGN_OR_RETURN(page_, store_.ListObjects(query_));
      index_ = 0;
      exhausted_ = page_.size() < query_.limit;
      if (page_.empty()) return nullptr;
      query_.start_after = page_.back().key;
    }
    return &page_[index_];
  }

  void Next() { ++index_; }

  // Moves past every object whose key sorts before `key` (keys compare as bytes, as the store
  // orders them); the object with that key, or nullptr when there is none.
  Result<const ObjectRecord*> Find(const std::string& key) {
    for (;;) {
      SERAC_ASSIGN_OR_RETURN(const ObjectRecord* object, Current());
      if (object == nullptr || object->key > key) return nullptr;
      if (object->key == key) return object;
      Next();
    }
  }

 private:
  MetaStore& store_;
  ListObjectsQuery query_;
  std::vector<ObjectRecord> page_;
  size_t index_ = 0;
  bool exhausted_ = false;
};

Result<std::vector<UploadRecord>> AllUploads(MetaStore& store, const std::string& bucket) {
  std::vector<UploadRecord> uploads;
  ListUploadsQuery query;
  query.bucket = bucket;
  query.limit = kObjectPage;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(std::vector<UploadRecord> page, store.ListUploads(query));
    const bool last = page.size() < query.limit;
    if (!page.empty()) {
      query.key_marker = page.back().key;
      query.upload_id_marker = page.back().upload_id;
    }
    for (UploadRecord& upload : page) uploads.push_back(std::move(upload));
    if (last) return uploads;
  }
}

Result<std::vector<PartRecord>> AllParts(MetaStore& store, const std::string& upload_id) {
  std::vector<PartRecord> parts;
  uint32_t marker = 0;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(std::vector<PartRecord> page, store.ListParts(upload_id, marker, kObjectPage));
    const bool last = page.size() < kObjectPage;
    if (!page.empty()) marker = page.back().part_number;
    for (PartRecord& part : page) parts.push_back(std::move(part));
    if (last) return parts;
  }
}

Result<std::vector<WarehouseRecord>> AllWarehouses(CatalogStore& catalog) {
  std::vector<WarehouseRecord> warehouses;
  std::string after;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(std::vector<WarehouseRecord> page, catalog.ListWarehouses(after, kCatalogPage));
    const bool last = page.size() < kCatalogPage;
    if (!page.empty()) after = page.back().name;
    for (WarehouseRecord& warehouse : page) warehouses.push_back(std::move(warehouse));
    if (last) return warehouses;
  }
}

// Every namespace of a warehouse, each parent before its children.
Status CollectNamespaces(CatalogStore& catalog, const std::string& warehouse, const NamespaceLevels& parent,
                         std::vector<NamespaceRecord>& out) {
  std::string after;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(std::vector<NamespaceRecord> page,
                           catalog.ListNamespaces(warehouse, parent, after, kCatalogPage));
    const bool last = page.size() < kCatalogPage;
    if (!page.empty()) after = page.back().levels.back();
    for (NamespaceRecord& ns : page) {
      const NamespaceLevels levels = ns.levels;
      out.push_back(std::move(ns));
      SERAC_RETURN_IF_ERROR(CollectNamespaces(catalog, warehouse, levels, out));
    }
    if (last) return Status::Ok();
  }
}

Result<std::vector<NamespaceRecord>> AllNamespaces(CatalogStore& catalog, const std::string& warehouse) {
  std::vector<NamespaceRecord> namespaces;
  SERAC_RETURN_IF_ERROR(CollectNamespaces(catalog, warehouse, {}, namespaces));
  return namespaces;
}

Result<std::vector<EntityRecord>> AllEntities(CatalogStore& catalog, const std::string& warehouse,
                                              const NamespaceLevels& levels, EntityKind kind) {
  std::vector<EntityRecord> entities;
  std::string after;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(std::vector<EntityRecord> page,
                           catalog.ListEntities(warehouse, levels, kind, after, kCatalogPage));
    const bool last = page.size() < kCatalogPage;
    if (!page.empty()) after = page.back().name;
    for (EntityRecord& entity : page) entities.push_back(std::move(entity));
    if (last) return entities;
  }
}

// A table's job records, oldest first: the order they are saved in, so the target numbers them
// in the same order.
Result<std::vector<MaintenanceJobRecord>> JobsOldestFirst(CatalogStore& catalog, const std::string& warehouse,
                                                          const std::string& table_uuid) {
  SERAC_ASSIGN_OR_RETURN(std::vector<MaintenanceJobRecord> jobs,
                         catalog.ListMaintenanceJobs(warehouse, table_uuid, "", kEveryJob));
  std::reverse(jobs.begin(), jobs.end());
  return jobs;
}

// The text of an object's and a part's fields as the check compares them; a copy is skipped only
// when these are equal, so a run that ends without error leaves nothing for the check to find.
std::string ShownHeaders(const ObjectHeaders& headers) {
  std::string text;
  auto add = [&](std::string_view name, const std::string& value) {
    if (!value.empty()) text += " " + std::string(name) + "=" + value;
  };
  add("content-type", headers.content_type);
  add("content-encoding", headers.content_encoding);
  add("content-language", headers.content_language);
  add("content-disposition", headers.content_disposition);
  add("cache-control", headers.cache_control);
  add("expires", headers.expires);
  for (const auto& [name, value] : headers.user_metadata) add("x-amz-meta-" + name, value);
  for (const auto& [name, value] : headers.tags) add("tag:" + name, value);
  return text;
}

std::string ShownObject(const ObjectRecord& object) {
  std::string text = "size " + std::to_string(object.size) + ", etag " + object.etag + ", mtime_ms " +
                     std::to_string(object.mtime_ms) + ", parts " + std::to_string(object.part_count);
  if (object.checksum) {
    text += ", checksum " + object.checksum->algorithm + ":" + object.checksum->value + ":" +
            object.checksum->type;
  }
  text += ", blobs [";
  for (size_t i = 0; i < object.segments.size(); ++i) {
    text += (i == 0 ? "" : " ") + object.segments[i].blob_id + ":" + std::to_string(object.segments[i].size);
  }
  return text + "], headers [" + ShownHeaders(object.headers) + " ]";
}

std::string ShownPart(const PartRecord& part) {
  return std::to_string(part.part_number) + ":" + std::to_string(part.size) + ":" + part.etag + ":" +
         part.blob_id + ":" + std::to_string(part.mtime_ms) + ":" + part.checksum_value;
}

bool SameEntity(const EntityRecord& a, const EntityRecord& b) {
  return a.uuid == b.uuid && a.location == b.location && a.metadata_location == b.metadata_location &&
         a.created_ms == b.created_ms && a.updated_ms == b.updated_ms;
}

bool SameJob(const MaintenanceJobRecord& a, const MaintenanceJobRecord& b) {
  return a.type == b.type && a.started_ms == b.started_ms && a.ended_ms == b.ended_ms &&
         a.status == b.status && a.json == b.json;
}

// --- Migration ---------------------------------------------------------------------------------

class Migration {
 public:
  Migration(MetaStore& source, MetaStore& target, const MigrationOptions& options)
      : source_(source), target_(target), options_(options) {}

  Result<MigrationReport> Run() {
    target_.iam().SetBuiltinPolicyNames(options_.builtin_policy_names);
    SERAC_ASSIGN_OR_RETURN(std::vector<BucketRecord> buckets,
                           InStep(source_.ListBuckets(), "listing buckets"));
    for (const BucketRecord& bucket : buckets) SERAC_RETURN_IF_ERROR(CopyBucket(bucket));
    for (const BucketRecord& bucket : buckets) {
      const MigrationReport before = report_;
      SERAC_RETURN_IF_ERROR(CopyObjects(bucket.name));
      SERAC_RETURN_IF_ERROR(CopyUploads(bucket.name));
      Progress("bucket " + bucket.name + ": objects " + Delta(before.objects, report_.objects) +
               "; multipart uploads " + Delta(before.uploads, report_.uploads) + ", their parts " +
               Delta(before.parts, report_.parts));
    }
    SERAC_ASSIGN_OR_RETURN(std::vector<WarehouseRecord> warehouses,
                           InStep(AllWarehouses(source_.catalog()), "listing warehouses"));
    for (const WarehouseRecord& warehouse : warehouses) SERAC_RETURN_IF_ERROR(CopyWarehouse(warehouse));
    SERAC_RETURN_IF_ERROR(CopyIam());
    return report_;
  }

 private:
  static std::string Delta(const MigrationCount& before, const MigrationCount& after) {
    return std::to_string(after.copied - before.copied) + " copied, " +
           std::to_string(after.present - before.present) + " already there";
  }

  void Progress(const std::string& line) {
    if (options_.progress) options_.progress(line);
  }

  Status CopyBucket(const BucketRecord& bucket) {
    Result<BucketRecord> there = target_.GetBucket(bucket.name);
    if (there.ok()) {
      ++report_.buckets.present;
      return Status::Ok();
    }
    if (!IsNotFound(there.status())) return InStep(there.status(), "reading bucket " + bucket.name);
    SERAC_RETURN_IF_ERROR(InStep(target_.CreateBucket(bucket), "creating bucket " + bucket.name));
    ++report_.buckets.copied;
    return Status::Ok();
  }

  // The source's objects and the target's are listed side by side in key order, so each object
  // costs the target one listing row to be found there, not a read.
  Status CopyObjects(const std::string& bucket) {
    ObjectCursor from(source_, bucket, true);
    ObjectCursor to(target_, bucket, true);
    for (;;) {
      SERAC_ASSIGN_OR_RETURN(const ObjectRecord* object,
                             InStep(from.Current(), "listing the objects of bucket " + bucket));
      if (object == nullptr) return Status::Ok();
      const std::string where = "object " + bucket + "/" + object->key;
      SERAC_ASSIGN_OR_RETURN(const ObjectRecord* there, InStep(to.Find(object->key), "looking up " + where));
      SERAC_RETURN_IF_ERROR(CopyBlobs(object->segments, where));
      // An object with the same ETag and size holds the same bytes; its other fields are compared
      // too, so that headers or times that differ are mended by copying the row again.
      if (there != nullptr && ShownObject(*there) == ShownObject(*object)) {
        ++report_.objects.present;
      } else {
        SERAC_RETURN_IF_ERROR(CopyObject(*object, where));
      }
      from.Next();
    }
  }

  // The blobs first: no target row may name a blob the target's blob store lacks.
  Status CopyBlobs(const std::vector<Segment>& segments, const std::string& where) {
    if (!options_.copy_blob) return Status::Ok();
    for (const Segment& segment : segments) {
      SERAC_ASSIGN_OR_RETURN(bool copied, InStep(options_.copy_blob(segment.blob_id),
                                                 "copying blob " + segment.blob_id + " of " + where));
      ++(copied ? report_.blobs.copied : report_.blobs.present);
    }
    return Status::Ok();
  }

  // A listing leaves out the bytes kept in the row (inline objects, and those written in pieces);
  // GetObject has them, joined.
  Status CopyObject(const ObjectRecord& listed, const std::string& where) {
    std::optional<ObjectRecord> whole;
    if (listed.segments.empty()) {
      SERAC_ASSIGN_OR_RETURN(whole, InStep(source_.GetObject(listed.bucket, listed.key), "reading " + where));
    }
    const ObjectRecord& object = whole ? *whole : listed;
    SERAC_RETURN_IF_ERROR(InStep(target_.PutObject(object, WriteCondition{}), "copying " + where));
    ++report_.objects.copied;
    report_.object_bytes_copied += object.size;
    return Status::Ok();
  }

  Status CopyUploads(const std::string& bucket) {
    SERAC_ASSIGN_OR_RETURN(
        std::vector<UploadRecord> uploads,
        InStep(AllUploads(source_, bucket), "listing the multipart uploads of bucket " + bucket));
    for (const UploadRecord& upload : uploads) {
      const std::string where = "multipart upload " + upload.upload_id + " of " + bucket + "/" + upload.key;
      Result<UploadRecord> there = target_.GetUpload(upload.bucket, upload.key, upload.upload_id);
      if (there.ok()) {
        ++report_.uploads.present;
      } else if (IsNotFound(there.status())) {
        SERAC_RETURN_IF_ERROR(InStep(target_.CreateUpload(upload), "creating " + where));
        ++report_.uploads.copied;
      } else {
        return InStep(there.status(), "looking up " + where);
      }
      SERAC_RETURN_IF_ERROR(CopyParts(upload.upload_id, where));
    }
    return Status::Ok();
  }

  Status CopyParts(const std::string& upload_id, const std::string& where) {
    SERAC_ASSIGN_OR_RETURN(std::vector<PartRecord> parts,
                           InStep(AllParts(source_, upload_id), "listing the parts of " + where));
    SERAC_ASSIGN_OR_RETURN(std::vector<PartRecord> present,
                           InStep(AllParts(target_, upload_id), "listing the copied parts of " + where));
    std::map<uint32_t, const PartRecord*> by_number;
    for (const PartRecord& part : present) by_number[part.part_number] = &part;
    for (const PartRecord& part : parts) {
      SERAC_RETURN_IF_ERROR(CopyBlobs({Segment{part.blob_id, part.size}},
                                      "part " + std::to_string(part.part_number) + " of " + where));
      auto there = by_number.find(part.part_number);
      if (there != by_number.end() && ShownPart(*there->second) == ShownPart(part)) {
        ++report_.parts.present;
        continue;
      }
      SERAC_RETURN_IF_ERROR(InStep(target_.PutPart(upload_id, part),
                                   "copying part " + std::to_string(part.part_number) + " of " + where));
      ++report_.parts.copied;
    }
    return Status::Ok();
  }

  Status CopyWarehouse(const WarehouseRecord& warehouse) {
    const MigrationReport before = report_;
    Result<WarehouseRecord> there = target_.catalog().GetWarehouse(warehouse.name);
    if (there.ok()) {
      ++report_.warehouses.present;
    } else if (IsNotFound(there.status())) {
      // Its bucket and objects are in the target already: the warehouse is made over them.
      SERAC_RETURN_IF_ERROR(InStep(target_.catalog().CreateWarehouse(warehouse, /*bucket_may_exist=*/true),
                                   "creating warehouse " + warehouse.name));
      ++report_.warehouses.copied;
    } else {
      return InStep(there.status(), "looking up warehouse " + warehouse.name);
    }
    SERAC_ASSIGN_OR_RETURN(std::vector<NamespaceRecord> namespaces,
                           InStep(AllNamespaces(source_.catalog(), warehouse.name),
                                  "listing the namespaces of warehouse " + warehouse.name));
    for (const NamespaceRecord& ns : namespaces) SERAC_RETURN_IF_ERROR(CopyNamespace(ns));
    std::vector<std::string> table_uuids;
    for (const NamespaceRecord& ns : namespaces) {
      SERAC_RETURN_IF_ERROR(CopyEntities(ns, EntityKind::kTable, &table_uuids));
      SERAC_RETURN_IF_ERROR(CopyEntities(ns, EntityKind::kView, nullptr));
    }
    SERAC_RETURN_IF_ERROR(CopyMaintenanceSettings(warehouse.name, ""));
    for (const std::string& uuid : table_uuids) {
      SERAC_RETURN_IF_ERROR(CopyMaintenanceSettings(warehouse.name, uuid));
      SERAC_RETURN_IF_ERROR(CopyMaintenanceJobs(warehouse.name, uuid));
    }
    Progress("warehouse " + warehouse.name + ": namespaces " + Delta(before.namespaces, report_.namespaces) +
             "; tables " + Delta(before.tables, report_.tables) + "; views " +
             Delta(before.views, report_.views) + "; maintenance settings " +
             Delta(before.maintenance_settings, report_.maintenance_settings) + "; maintenance jobs " +
             Delta(before.maintenance_jobs, report_.maintenance_jobs));
    return Status::Ok();
  }

  Status CopyNamespace(const NamespaceRecord& ns) {
    const std::string where = "namespace " + NamespaceName(ns.warehouse, ns.levels);
    Result<NamespaceRecord> there = target_.catalog().GetNamespace(ns.warehouse, ns.levels);
    if (!there.ok()) {
      if (!IsNotFound(there.status())) return InStep(there.status(), "looking up " + where);
      SERAC_RETURN_IF_ERROR(InStep(target_.catalog().CreateNamespace(ns), "creating " + where));
      ++report_.namespaces.copied;
      return Status::Ok();
    }
    if (there->properties == ns.properties) {
      ++report_.namespaces.present;
      return Status::Ok();
    }
    NamespacePropertiesChange change;
    for (const auto& [name, value] : ns.properties) {
      auto current = there->properties.find(name);
      if (current == there->properties.end() || current->second != value) change.updates[name] = value;
    }
    for (const auto& entry : there->properties) {
      if (!ns.properties.contains(entry.first)) change.removals.push_back(entry.first);
    }
    SERAC_RETURN_IF_ERROR(
        InStep(target_.catalog().UpdateNamespaceProperties(ns.warehouse, ns.levels, change).status(),
               "updating the properties of " + where));
    ++report_.namespaces.copied;
    return Status::Ok();
  }

  Status CopyEntities(const NamespaceRecord& ns, EntityKind kind, std::vector<std::string>* table_uuids) {
    const char* noun = kind == EntityKind::kTable ? "table " : "view ";
    MigrationCount& count = kind == EntityKind::kTable ? report_.tables : report_.views;
    SERAC_ASSIGN_OR_RETURN(
        std::vector<EntityRecord> entities,
        InStep(AllEntities(source_.catalog(), ns.warehouse, ns.levels, kind),
               std::string("listing the ") + (kind == EntityKind::kTable ? "tables" : "views") +
                   " of namespace " + NamespaceName(ns.warehouse, ns.levels)));
    for (const EntityRecord& entity : entities) {
      if (table_uuids != nullptr) table_uuids->push_back(entity.uuid);
      const std::string where = noun + EntityName(entity);
      Result<EntityRecord> there = target_.catalog().GetEntity(IdOf(entity));
      if (there.ok() && SameEntity(*there, entity)) {
        ++count.present;
        continue;
      }
      if (!there.ok() && !IsNotFound(there.status())) return InStep(there.status(), "looking up " + where);
      // Registering keeps the uuid, the locations and both times; overwrite also repairs an entry a
      // run before this one left pointing elsewhere.
      SERAC_RETURN_IF_ERROR(
          InStep(target_.catalog().RegisterEntity(entity, /*overwrite=*/true), "registering " + where));
      ++count.copied;
    }
    return Status::Ok();
  }

  Status CopyMaintenanceSettings(const std::string& warehouse, const std::string& table_uuid) {
    const std::string owner =
        table_uuid.empty() ? "warehouse " + warehouse : "table " + table_uuid + " of " + warehouse;
    SERAC_ASSIGN_OR_RETURN(std::vector<MaintenanceSetting> settings,
                           InStep(source_.catalog().ListMaintenanceSettings(warehouse, table_uuid),
                                  "listing the maintenance settings of " + owner));
    SERAC_ASSIGN_OR_RETURN(std::vector<MaintenanceSetting> present,
                           InStep(target_.catalog().ListMaintenanceSettings(warehouse, table_uuid),
                                  "listing the copied maintenance settings of " + owner));
    for (const MaintenanceSetting& setting : settings) {
      auto there = std::find_if(present.begin(), present.end(),
                                [&](const MaintenanceSetting& other) { return other.type == setting.type; });
      if (there != present.end() && there->json == setting.json && there->updated_ms == setting.updated_ms) {
        ++report_.maintenance_settings.present;
        continue;
      }
      SERAC_RETURN_IF_ERROR(InStep(target_.catalog().PutMaintenanceSetting(setting),
                                   "copying the " + setting.type + " setting of " + owner));
      ++report_.maintenance_settings.copied;
    }
    return Status::Ok();
  }

  // Job records have no key but their id, which the target assigns anew: a record counts as there
  // when an equal one is, each matched once, so a record saved by a run that stopped before it
  // heard back is not saved twice.
  Status CopyMaintenanceJobs(const std::string& warehouse, const std::string& table_uuid) {
    const std::string owner = "table " + table_uuid + " of " + warehouse;
    SERAC_ASSIGN_OR_RETURN(std::vector<MaintenanceJobRecord> jobs,
                           InStep(JobsOldestFirst(source_.catalog(), warehouse, table_uuid),
                                  "listing the maintenance jobs of " + owner));
    SERAC_ASSIGN_OR_RETURN(std::vector<MaintenanceJobRecord> present,
                           InStep(JobsOldestFirst(target_.catalog(), warehouse, table_uuid),
                                  "listing the copied maintenance jobs of " + owner));
    std::vector<bool> matched(present.size(), false);
    for (const MaintenanceJobRecord& job : jobs) {
      bool found = false;
      for (size_t i = 0; i < present.size() && !found; ++i) {
        if (!matched[i] && SameJob(present[i], job)) matched[i] = found = true;
      }
      if (found) {
        ++report_.maintenance_jobs.present;
        continue;
      }
      MaintenanceJobRecord copy = job;
      copy.id = 0;
      SERAC_RETURN_IF_ERROR(InStep(target_.catalog().SaveMaintenanceJob(copy).status(),
                                   "copying maintenance job " + std::to_string(job.id) + " of " + owner));
      ++report_.maintenance_jobs.copied;
    }
    return Status::Ok();
  }

  // Policies first (a user is created with its attachments), users before their keys.
  Status CopyIam() {
    SERAC_ASSIGN_OR_RETURN(IamSnapshot from, InStep(source_.iam().LoadSnapshot(), "reading the IAM state"));
    SERAC_ASSIGN_OR_RETURN(IamSnapshot there,
                           InStep(target_.iam().LoadSnapshot(), "reading the copied IAM state"));
    IamStore& iam = target_.iam();
    std::map<std::string, const PolicyRecord*> policies;
    for (const PolicyRecord& policy : there.policies) policies[policy.name] = &policy;
    for (const PolicyRecord& policy : from.policies) {
      auto it = policies.find(policy.name);
      if (it != policies.end() && it->second->document == policy.document &&
          it->second->created_ms == policy.created_ms && it->second->updated_ms == policy.updated_ms) {
        ++report_.policies.present;
        continue;
      }
      SERAC_RETURN_IF_ERROR(InStep(iam.PutPolicy(policy), "copying policy " + policy.name));
      ++report_.policies.copied;
    }
    std::map<std::string, const IamUserRecord*> users;
    for (const IamUserRecord& user : there.users) users[user.name] = &user;
    for (const IamUserRecord& user : from.users) SERAC_RETURN_IF_ERROR(CopyUser(user, users));
    std::map<std::string, const AccessKeyRecord*> keys;
    for (const AccessKeyRecord& key : there.keys) keys[key.access_key] = &key;
    for (const AccessKeyRecord& key : from.keys) SERAC_RETURN_IF_ERROR(CopyAccessKey(key, keys));
    Progress("IAM: policies " + Delta({}, report_.policies) + "; users " + Delta({}, report_.users) +
             "; access keys " + Delta({}, report_.access_keys));
    return Status::Ok();
  }

  Status CopyUser(const IamUserRecord& user, const std::map<std::string, const IamUserRecord*>& present) {
    const std::string where = "user " + user.name;
    auto it = present.find(user.name);
    if (it == present.end()) {
      SERAC_RETURN_IF_ERROR(InStep(target_.iam().CreateUser(user), "creating " + where));
      ++report_.users.copied;
      return Status::Ok();
    }
    const IamUserRecord& there = *it->second;
    bool changed = false;
    if (there.enabled != user.enabled) {
      SERAC_RETURN_IF_ERROR(
          InStep(target_.iam().SetUserEnabled(user.name, user.enabled), "enabling " + where));
      changed = true;
    }
    for (const std::string& policy : user.policies) {
      if (std::find(there.policies.begin(), there.policies.end(), policy) != there.policies.end()) continue;
      SERAC_RETURN_IF_ERROR(InStep(target_.iam().AttachPolicy(user.name, policy),
                                   "attaching policy " + policy + " to " + where));
      changed = true;
    }
    ++(changed ? report_.users.copied : report_.users.present);
    return Status::Ok();
  }

  Status CopyAccessKey(const AccessKeyRecord& key,
                       const std::map<std::string, const AccessKeyRecord*>& present) {
    const std::string where = "access key " + key.access_key + " of user " + key.user;
    auto it = present.find(key.access_key);
    if (it == present.end()) {
      SERAC_RETURN_IF_ERROR(InStep(target_.iam().CreateAccessKey(key), "creating " + where));
      ++report_.access_keys.copied;
      return Status::Ok();
    }
    if (it->second->enabled == key.enabled) {
      ++report_.access_keys.present;
      return Status::Ok();
    }
    SERAC_RETURN_IF_ERROR(
        InStep(target_.iam().SetAccessKeyEnabled(key.access_key, key.enabled), "enabling " + where));
    ++report_.access_keys.copied;
    return Status::Ok();
  }

  MetaStore& source_;
  MetaStore& target_;
  const MigrationOptions& options_;
  MigrationReport report_;
};

// --- Comparison --------------------------------------------------------------------------------

// One record as the check shows it: its name in messages and the text of what is compared.
struct Shown {
  std::string name;
  std::string text;
};
// By a key that sorts as the store lists the records.
using ShownRecords = std::map<std::string, Shown>;

std::string ShownProperties(const std::map<std::string, std::string>& properties) {
  std::string text = "{";
  for (const auto& [name, value] : properties) text += (text.size() == 1 ? "" : ", ") + name + "=" + value;
  return text + "}";
}

// Secrets, sealed or not, and long documents are shown by a digest.
std::string Digest(std::string_view bytes) { return "sha256:" + Sha256Hex(bytes).substr(0, 16); }

class Comparison {
 public:
  Comparison(MetaStore& source, MetaStore& target, size_t kept)
      : source_(source), target_(target), kept_(kept) {}

  Result<StoreComparison> Run() {
    SERAC_ASSIGN_OR_RETURN(std::vector<BucketRecord> from, InStep(source_.ListBuckets(), "listing buckets"));
    SERAC_ASSIGN_OR_RETURN(std::vector<BucketRecord> to,
                           InStep(target_.ListBuckets(), "listing the target's buckets"));
    out_.buckets = from.size();
    auto shown_buckets = [](const std::vector<BucketRecord>& buckets) {
      ShownRecords shown;
      for (const BucketRecord& bucket : buckets)
        shown[bucket.name] = {bucket.name, "created_ms " + std::to_string(bucket.created_ms)};
      return shown;
    };
    Compare("bucket", shown_buckets(from), shown_buckets(to));
    std::set<std::string> to_names;
    for (const BucketRecord& bucket : to) to_names.insert(bucket.name);
    // A bucket only one side has is a difference already; its objects are not listed one by one.
    for (const BucketRecord& bucket : from) {
      if (!to_names.contains(bucket.name)) continue;
      SERAC_RETURN_IF_ERROR(CompareObjects(bucket.name));
      SERAC_RETURN_IF_ERROR(CompareUploads(bucket.name));
    }
    SERAC_RETURN_IF_ERROR(CompareCatalog());
    SERAC_RETURN_IF_ERROR(CompareIam());
    return std::move(out_);
  }

 private:
  void Add(std::string difference) {
    ++out_.difference_count;
    if (out_.differences.size() < kept_) out_.differences.push_back(std::move(difference));
  }

  void Differ(std::string_view kind, const Shown* from, const Shown* to) {
    if (to == nullptr) {
      Add(std::string(kind) + " " + from->name + ": missing in the target");
    } else if (from == nullptr) {
      Add(std::string(kind) + " " + to->name + ": only in the target");
    } else if (from->text != to->text) {
      Add(std::string(kind) + " " + from->name + " differs: source " + from->text + "; target " + to->text);
    }
  }

  void Compare(std::string_view kind, const ShownRecords& from, const ShownRecords& to) {
    auto a = from.begin();
    auto b = to.begin();
    while (a != from.end() || b != to.end()) {
      if (b == to.end() || (a != from.end() && a->first < b->first)) {
        Differ(kind, &(a++)->second, nullptr);
      } else if (a == from.end() || b->first < a->first) {
        Differ(kind, nullptr, &(b++)->second);
      } else {
        Differ(kind, &(a++)->second, &(b++)->second);
      }
    }
  }

  // Both listings side by side, a page at a time: a bucket of millions of objects is never held whole.
  Status CompareObjects(const std::string& bucket) {
    ObjectCursor from(source_, bucket, true);
    ObjectCursor to(target_, bucket, true);
    const std::string listing = "listing the objects of bucket " + bucket;
    for (;;) {
      SERAC_ASSIGN_OR_RETURN(const ObjectRecord* a, InStep(from.Current(), listing));
      SERAC_ASSIGN_OR_RETURN(const ObjectRecord* b, InStep(to.Current(), "in the target, " + listing));
      if (a == nullptr && b == nullptr) return Status::Ok();
      if (b == nullptr || (a != nullptr && a->key < b->key)) {
        ++out_.objects;
        Shown shown{bucket + "/" + a->key, ""};
        Differ("object", &shown, nullptr);
        from.Next();
      } else if (a == nullptr || b->key < a->key) {
        Shown shown{bucket + "/" + b->key, ""};
        Differ("object", nullptr, &shown);
        to.Next();
      } else {
        ++out_.objects;
        Shown left{bucket + "/" + a->key, ShownObject(*a)};
        Shown right{left.name, ShownObject(*b)};
        Differ("object", &left, &right);
        from.Next();
        to.Next();
      }
    }
  }

  Result<ShownRecords> ShownUploads(MetaStore& store, const std::string& bucket, bool count) {
    SERAC_ASSIGN_OR_RETURN(
        std::vector<UploadRecord> uploads,
        InStep(AllUploads(store, bucket), "listing the multipart uploads of bucket " + bucket));
    ShownRecords shown;
    for (const UploadRecord& upload : uploads) {
      SERAC_ASSIGN_OR_RETURN(
          std::vector<PartRecord> parts,
          InStep(AllParts(store, upload.upload_id), "listing the parts of upload " + upload.upload_id));
      if (count) {
        ++out_.uploads;
        out_.parts += parts.size();
      }
      std::string text = "key " + upload.key + ", initiated_ms " + std::to_string(upload.initiated_ms) +
                         ", checksum " + upload.checksum_algorithm + ":" + upload.checksum_type +
                         ", headers [" + ShownHeaders(upload.headers) + " ], parts [";
      for (const PartRecord& part : parts) text += " " + ShownPart(part);
      shown[upload.key + '\x1f' + upload.upload_id] = {
          bucket + "/" + upload.key + " (" + upload.upload_id + ")", text + " ]"};
    }
    return shown;
  }

  Status CompareUploads(const std::string& bucket) {
    SERAC_ASSIGN_OR_RETURN(ShownRecords from, ShownUploads(source_, bucket, true));
    SERAC_ASSIGN_OR_RETURN(ShownRecords to, ShownUploads(target_, bucket, false));
    Compare("multipart upload", from, to);
    return Status::Ok();
  }

  // One side's catalog, shown record by record.
  struct ShownCatalog {
    ShownRecords warehouses;
    ShownRecords namespaces;
    ShownRecords tables;
    ShownRecords views;
    ShownRecords settings;
    ShownRecords jobs;
  };

  Result<ShownCatalog> ShowCatalog(MetaStore& store, bool count) {
    ShownCatalog shown;
    CatalogStore& catalog = store.catalog();
    SERAC_ASSIGN_OR_RETURN(std::vector<WarehouseRecord> warehouses,
                           InStep(AllWarehouses(catalog), "listing warehouses"));
    for (const WarehouseRecord& warehouse : warehouses) {
      shown.warehouses[warehouse.name] = {warehouse.name,
                                          "created_ms " + std::to_string(warehouse.created_ms)};
      SERAC_RETURN_IF_ERROR(ShowSettings(catalog, warehouse.name, "", shown.settings));
      SERAC_ASSIGN_OR_RETURN(std::vector<NamespaceRecord> namespaces,
                             InStep(AllNamespaces(catalog, warehouse.name),
                                    "listing the namespaces of warehouse " + warehouse.name));
      for (const NamespaceRecord& ns : namespaces) {
        const std::string key = warehouse.name + '\x1f' + LevelsKey(ns.levels);
        shown.namespaces[key] = {
            NamespaceName(ns.warehouse, ns.levels),
            "created_ms " + std::to_string(ns.created_ms) + ", properties " + ShownProperties(ns.properties)};
        for (EntityKind kind : {EntityKind::kTable, EntityKind::kView}) {
          SERAC_ASSIGN_OR_RETURN(
              std::vector<EntityRecord> entities,
              InStep(AllEntities(catalog, ns.warehouse, ns.levels, kind),
                     "listing the entities of namespace " + NamespaceName(ns.warehouse, ns.levels)));
          for (const EntityRecord& entity : entities) {
            const std::string text = "uuid " + entity.uuid + ", location " + entity.location + ", metadata " +
                                     entity.metadata_location + ", created_ms " +
                                     std::to_string(entity.created_ms) + ", updated_ms " +
                                     std::to_string(entity.updated_ms);
            (kind == EntityKind::kTable ? shown.tables : shown.views)[key + entity.name] = {
                EntityName(entity), text};
            if (kind != EntityKind::kTable) continue;
            SERAC_RETURN_IF_ERROR(ShowSettings(catalog, warehouse.name, entity.uuid, shown.settings));
            SERAC_RETURN_IF_ERROR(ShowJobs(catalog, warehouse.name, entity.uuid, shown.jobs));
          }
        }
      }
    }
    if (count) {
      out_.warehouses = shown.warehouses.size();
      out_.namespaces = shown.namespaces.size();
      out_.tables = shown.tables.size();
      out_.views = shown.views.size();
      out_.maintenance_settings = shown.settings.size();
      out_.maintenance_jobs = shown.jobs.size();
    }
    return shown;
  }

  static Status ShowSettings(CatalogStore& catalog, const std::string& warehouse,
                             const std::string& table_uuid, ShownRecords& out) {
    const std::string owner =
        table_uuid.empty() ? "warehouse " + warehouse : "table " + table_uuid + " of " + warehouse;
    SERAC_ASSIGN_OR_RETURN(std::vector<MaintenanceSetting> settings,
                           InStep(catalog.ListMaintenanceSettings(warehouse, table_uuid),
                                  "listing the maintenance settings of " + owner));
    for (const MaintenanceSetting& setting : settings) {
      out[warehouse + '\x1f' + table_uuid + '\x1f' + setting.type] = {
          setting.type + " of " + owner, setting.json + ", updated_ms " + std::to_string(setting.updated_ms)};
    }
    return Status::Ok();
  }

  // Jobs are matched by their place in the table's history, oldest first: ids differ by design.
  static Status ShowJobs(CatalogStore& catalog, const std::string& warehouse, const std::string& table_uuid,
                         ShownRecords& out) {
    const std::string owner = "table " + table_uuid + " of " + warehouse;
    SERAC_ASSIGN_OR_RETURN(
        std::vector<MaintenanceJobRecord> jobs,
        InStep(JobsOldestFirst(catalog, warehouse, table_uuid), "listing the maintenance jobs of " + owner));
    for (size_t i = 0; i < jobs.size(); ++i) {
      const MaintenanceJobRecord& job = jobs[i];
      // Zero-padded, so that the map orders the jobs as their numbers.
      std::string place = std::to_string(i);
      place.insert(0, 10 - std::min<size_t>(10, place.size()), '0');
      out[warehouse + '\x1f' + table_uuid + '\x1f' + place] = {
          "number " + std::to_string(i + 1) + " of " + owner,
          job.type + ", " + job.status + ", started_ms " + std::to_string(job.started_ms) + ", ended_ms " +
              std::to_string(job.ended_ms) + ", " + job.json};
    }
    return Status::Ok();
  }

  Status CompareCatalog() {
    SERAC_ASSIGN_OR_RETURN(ShownCatalog from, ShowCatalog(source_, true));
    SERAC_ASSIGN_OR_RETURN(ShownCatalog to, InStep(ShowCatalog(target_, false), "in the target"));
    Compare("warehouse", from.warehouses, to.warehouses);
    Compare("namespace", from.namespaces, to.namespaces);
    Compare("table", from.tables, to.tables);
    Compare("view", from.views, to.views);
    Compare("maintenance setting", from.settings, to.settings);
    Compare("maintenance job", from.jobs, to.jobs);
    return Status::Ok();
  }

  static ShownRecords ShownPolicies(const IamSnapshot& snapshot) {
    ShownRecords shown;
    for (const PolicyRecord& policy : snapshot.policies) {
      shown[policy.name] = {policy.name, "document " + Digest(policy.document) + ", created_ms " +
                                             std::to_string(policy.created_ms) + ", updated_ms " +
                                             std::to_string(policy.updated_ms)};
    }
    return shown;
  }

  static ShownRecords ShownUsers(const IamSnapshot& snapshot) {
    ShownRecords shown;
    for (const IamUserRecord& user : snapshot.users) {
      std::string text = std::string(user.enabled ? "enabled" : "disabled") + ", created_ms " +
                         std::to_string(user.created_ms) + ", policies [";
      for (const std::string& policy : user.policies) text += " " + policy;
      shown[user.name] = {user.name, text + " ]"};
    }
    return shown;
  }

  static ShownRecords ShownKeys(const IamSnapshot& snapshot) {
    ShownRecords shown;
    for (const AccessKeyRecord& key : snapshot.keys) {
      shown[key.access_key] = {key.access_key,
                               "user " + key.user + ", " + (key.enabled ? "enabled" : "disabled") +
                                   ", created_ms " + std::to_string(key.created_ms) + ", description " +
                                   key.description + ", sealed secret " + Digest(key.sealed_secret)};
    }
    return shown;
  }

  Status CompareIam() {
    SERAC_ASSIGN_OR_RETURN(IamSnapshot from, InStep(source_.iam().LoadSnapshot(), "reading the IAM state"));
    SERAC_ASSIGN_OR_RETURN(IamSnapshot to,
                           InStep(target_.iam().LoadSnapshot(), "reading the target's IAM state"));
    out_.policies = from.policies.size();
    out_.users = from.users.size();
    out_.access_keys = from.keys.size();
    // The generation is left out: it counts the writes each store saw, not what they hold.
    Compare("policy", ShownPolicies(from), ShownPolicies(to));
    Compare("user", ShownUsers(from), ShownUsers(to));
    Compare("access key", ShownKeys(from), ShownKeys(to));
    return Status::Ok();
  }

  MetaStore& source_;
  MetaStore& target_;
  const size_t kept_;
  StoreComparison out_;
};

}  // namespace

Result<MigrationReport> MigrateMetaStore(MetaStore& source, MetaStore& target,
                                         const MigrationOptions& options) {
  return Migration(source, target, options).Run();
}

Result<StoreComparison> CompareMetaStores(MetaStore& source, MetaStore& target, size_t differences_kept) {
  return Comparison(source, target, differences_kept).Run();
}

}  // namespace serac::meta
