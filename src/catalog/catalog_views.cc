// View routes: list, create, load, exists, replace (a commit with retries, as for tables), drop,
// register. Rename lives with the table rename in catalog_tables.cc.
#include "catalog/catalog_access_internal.h"
#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "catalog/catalog_metadata_io_internal.h"
#include "catalog/catalog_namespaces_internal.h"
#include "catalog/catalog_responses_internal.h"
#include "catalog/catalog_routes_internal.h"
#include "catalog/catalog_rules_internal.h"
#include "catalog/catalog_tables_internal.h"
#include "common/clock.h"
#include "common/json_reads.h"
#include "common/limits.h"
#include "common/random.h"

namespace serac::catalog {
namespace {

std::string NewViewMetadataFileLocation(std::string location, const std::string& previous) {
  while (!location.empty() && location.back() == '/') location.pop_back();
  return location + "/metadata/" + iceberg::MetadataFileName(previous, RandomUuid());
}

// The next metadata file of a view goes beside its current one, which is always in the warehouse
// (the view's own location may point anywhere: views have no files there).
std::string NextViewMetadataFileLocation(const std::string& current_file) {
  const size_t slash = current_file.rfind('/');
  return current_file.substr(0, slash + 1) + iceberg::MetadataFileName(current_file, RandomUuid());
}

HandlerResult SendViewResult(RequestContext& ctx, const std::string& metadata_location,
                             const iceberg::ViewMetadata& metadata) {
  return SendJsonWithRawMember(ctx,
                               Json{{"metadata-location", metadata_location}, {"config", StorageConfig(ctx)}},
                               "metadata", metadata.ToJsonText());
}

IcebergError UnreadableMetadata(const Status& status) {
  return MakeError(500, "InternalServerError", "cannot read view metadata: " + status.message());
}

HandlerResult RequireNamespace(RequestContext& ctx) {
  auto ns = ctx.catalog().GetNamespace(ctx.path.warehouse, ctx.path.levels);
  if (!ns.ok()) return ErrorFromStatus(ns.status(), NoSuchNamespace(NamespaceDisplayName(ctx.path.levels)));
  return kHandled;
}

meta::EntityRecord ViewRecord(const RequestContext& ctx, const iceberg::ViewMetadata& metadata,
                              const std::string& metadata_location, const std::string& storage_location) {
  meta::EntityRecord record;
  record.warehouse = ctx.path.warehouse;
  record.levels = ctx.path.levels;
  record.name = ctx.path.name;
  record.kind = meta::EntityKind::kView;
  record.uuid = metadata.view_uuid();
  record.location = storage_location;
  record.metadata_location = metadata_location;
  record.created_ms = record.updated_ms = ToUnixMillis(Now());
  return record;
}

}  // namespace

HandlerResult ListViews(RequestContext& ctx) { return ListEntities(ctx, meta::EntityKind::kView); }

HandlerResult CreateView(RequestContext& ctx) {
  Json body;
  if (auto error = ParseJsonObject(ctx, body)) return error;
  auto request = iceberg::ViewCreation::FromJson(body);
  if (!request.ok()) return BadRequest(request.status().message());
  const std::string& name = request->name();
  const std::optional<std::string>& requested_location = request->location();
  ctx.path.name = name;
  if (auto problem = EntityNameProblem(name)) return BadRequest(*problem);
  if (auto error = AuthorizeInWarehouse(ctx, ctx.action, ctx.path.levels, meta::EntityKind::kView, name)) {
    return error;
  }
  if (auto error = RequireNamespace(ctx)) return error;
  if (auto error = RequireNameFree(ctx.backend, ctx.Entity(meta::EntityKind::kView))) return error;
  // The view's location is kept as given (it names no files serac has to manage); its metadata
  // files live in the warehouse: below that location when it is there, else at a default place.
  std::string storage;
  if (auto error =
          ChooseTableLocation(ctx.path.warehouse, ctx.path.levels, name, requested_location, storage)) {
    return error;
  }
  const bool kept_as_given = requested_location && !requested_location->empty() &&
                             !ClientLocationInWarehouse(*requested_location, ctx.path.warehouse);
  auto metadata = request->NewMetadata(kept_as_given ? *requested_location : storage, RandomUuid());
  if (!metadata.ok()) return MetadataRuleError(metadata.status());
  const std::string file = NewViewMetadataFileLocation(storage, "");
  const std::string json = metadata->ToJsonText();
  Status written = WriteMetadataFile(ctx.backend, file, json);
  if (!written.ok()) return ErrorFromStatus(written, BadRequest(written.message()));
  Status created = ctx.catalog().CreateEntity(ViewRecord(ctx, *metadata, file, storage));
  if (!created.ok()) {
    DeleteMetadataFileQuietly(ctx.backend, file);
    if (created.code() == ErrorCode::kAlreadyExists)
      return NameTaken(ctx.backend, ctx.Entity(meta::EntityKind::kView));
    return ErrorFromStatus(created, NoSuchNamespace(NamespaceDisplayName(ctx.path.levels)));
  }
  ctx.backend.views.Put(file, std::make_shared<const iceberg::ViewMetadata>(*metadata),
                        ParsedMetadataBytes(json.size()));
  return SendViewResult(ctx, file, *metadata);
}

HandlerResult LoadView(RequestContext& ctx) {
  // The route's check found the view (ctx.entity) and authorised exactly that one.
  if (!ctx.entity) return NoSuchView(EntityDisplayName(ctx));
  const meta::EntityRecord* entity = &*ctx.entity;
  auto metadata = LoadViewMetadata(ctx.backend, entity->metadata_location);
  if (!metadata.ok()) return UnreadableMetadata(metadata.status());
  return SendViewResult(ctx, entity->metadata_location, **metadata);
}

HandlerResult ViewExists(RequestContext& ctx) {
  if (!ctx.entity) return NoSuchView(EntityDisplayName(ctx));
  return SendNoContent(ctx);
}

HandlerResult ReplaceView(RequestContext& ctx) {
  Json body;
  if (auto error = ParseJsonObject(ctx, body)) return error;
  // Absent or null is none, as the reference reads a commit (and serac reads a table commit).
  auto list_or_empty = [&](const char* key) {
    auto it = body.find(key);
    return it == body.end() || it->is_null() ? Json::array() : *it;
  };
  const Json requirements = list_or_empty("requirements");
  const Json updates = list_or_empty("updates");
  if (!requirements.is_array() || !updates.is_array())
    return BadRequest("requirements and updates must be arrays");
  const meta::EntityId id = ctx.Entity(meta::EntityKind::kView);
  for (uint32_t attempt = 0; attempt <= limits::kCatalogCommitRetriesMax; ++attempt) {
    auto entity = ctx.catalog().GetEntity(id);
    if (!entity.ok()) return ErrorFromStatus(entity.status(), NoSuchView(EntityDisplayName(ctx)));
    auto current = LoadViewMetadata(ctx.backend, entity->metadata_location);
    if (!current.ok()) return UnreadableMetadata(current.status());
    auto applied = iceberg::CommitView(**current, requirements, updates, ToUnixMillis(Now()));
    if (!applied.ok()) {
      // Unchanged: Java clients recognise "Requirement failed: ..." and add "Commit failed: ".
      if (applied.status().code() == ErrorCode::kConflict) {
        return MakeError(409, "CommitFailedException", applied.status().message());
      }
      return MetadataRuleError(applied.status());
    }
    if (!applied->changed) return SendViewResult(ctx, entity->metadata_location, **current);
    const std::string file = NextViewMetadataFileLocation(entity->metadata_location);
    std::string owned_key;
    if (auto error = OwnedKey(ctx.path.warehouse, "the view's location", entity->location, owned_key))
      return error;
    if (auto error = RequireOwnedMetadataFile(ctx.path.warehouse, owned_key, file)) return error;
    const std::string json = applied->metadata.ToJsonText();
    Status written = WriteMetadataFile(ctx.backend, file, json);
    if (!written.ok()) return ErrorFromStatus(written, BadRequest(written.message()));
    Status swapped = ctx.catalog().SwapMetadataLocations({{id, entity->metadata_location, file}});
    if (swapped.ok()) {
      ctx.backend.views.Put(file, std::make_shared<const iceberg::ViewMetadata>(applied->metadata),
                            ParsedMetadataBytes(json.size()));
      return SendViewResult(ctx, file, applied->metadata);
    }
    DeleteMetadataFileQuietly(ctx.backend, file);
    if (swapped.code() != ErrorCode::kConflict) {
      return ErrorFromStatus(swapped, NoSuchView(EntityDisplayName(ctx)));
    }
  }
  return MakeError(409, "CommitFailedException", "Commit failed: too many concurrent commits");
}

HandlerResult DropView(RequestContext& ctx) {
  auto dropped = ctx.catalog().DropEntity(ctx.Entity(meta::EntityKind::kView));
  if (!dropped.ok()) return ErrorFromStatus(dropped.status(), NoSuchView(EntityDisplayName(ctx)));
  return SendNoContent(ctx);
}

HandlerResult RegisterView(RequestContext& ctx) {
  Json body;
  std::string name;
  std::string location;
  if (auto error = ReadRegistration(ctx, meta::EntityKind::kView, body, name, location)) return error;
  if (auto error = RequireNamespace(ctx)) return error;
  if (auto error = RequireInWarehouse(ctx, location)) return error;
  auto metadata = LoadViewMetadata(ctx.backend, location);
  if (!metadata.ok()) {
    return ErrorFromStatus(metadata.status(), BadRequest("metadata-location does not exist: " + location));
  }
  // Its files stay where they are: the record's storage location is their directory.
  const std::string directory = location.substr(0, location.rfind('/'));
  Status registered = ctx.catalog().RegisterEntity(ViewRecord(ctx, **metadata, location, directory), false);
  if (!registered.ok()) {
    if (registered.code() == ErrorCode::kAlreadyExists)
      return NameTaken(ctx.backend, ctx.Entity(meta::EntityKind::kView));
    return ErrorFromStatus(registered, NoSuchNamespace(NamespaceDisplayName(ctx.path.levels)));
  }
  return SendViewResult(ctx, location, **metadata);
}

}  // namespace serac::catalog
