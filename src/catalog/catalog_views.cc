// View routes: list, create, load, exists, replace (a commit with retries, as for tables), drop,
// register. Rename lives with the table rename in catalog_tables.cc.
#include "common/clock.h"
#include "common/limits.h"
#include "common/random.h"
#include "catalog/catalog_internal.h"

namespace serac::catalog {
namespace {

std::string NewViewMetadataFileLocation(std::string location, const std::string& previous) {
  while (!location.empty() && location.back() == '/') location.pop_back();
  return location + "/metadata/" + iceberg::MetadataFileName(previous, RandomUuid());
}

HandlerResult SendViewResult(RequestContext& ctx, const std::string& metadata_location,
                             const iceberg::ViewMetadata& metadata) {
  return SendJson(ctx, Json{{"metadata-location", metadata_location},
                            {"metadata", iceberg::ViewMetadataToJson(metadata)},
                            {"config", StorageConfig(ctx)}});
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
                              const std::string& metadata_location) {
  meta::EntityRecord record;
  record.warehouse = ctx.path.warehouse;
  record.levels = ctx.path.levels;
  record.name = ctx.path.name;
  record.kind = meta::EntityKind::kView;
  record.uuid = metadata.view_uuid;
  record.location = metadata.location;
  record.metadata_location = metadata_location;
  record.created_ms = record.updated_ms = ToUnixMillis(Now());
  return record;
}

IcebergError AlreadyExists(const RequestContext& ctx) {
  return MakeError(409, "AlreadyExistsException", "Table or view already exists: " + EntityDisplayName(ctx));
}

}  // namespace

HandlerResult ListViews(RequestContext& ctx) { return ListEntities(ctx, meta::EntityKind::kView); }

HandlerResult CreateView(RequestContext& ctx) {
  Json body;
  if (auto error = ParseJsonObject(ctx, body)) return error;
  auto request = iceberg::ParseCreateViewRequest(body);
  if (!request.ok()) return BadRequest(request.status().message());
  ctx.path.name = request->name;
  if (auto problem = EntityNameProblem(request->name)) return BadRequest(*problem);
  if (auto error = RequireNamespace(ctx)) return error;
  std::string location = DefaultEntityLocation(ctx.path.warehouse, ctx.path.levels, request->name);
  if (request->location && !request->location->empty()) {
    auto inside = ClientLocationInWarehouse(*request->location, ctx.path.warehouse);
    if (!inside) return BadRequest("location must be below s3://" + ctx.path.warehouse + "/: " + *request->location);
    location = *inside;
  }
  auto metadata = iceberg::NewViewMetadata(*request, location, RandomUuid());
  if (!metadata.ok()) return ErrorFromStatus(metadata.status(), BadRequest(metadata.status().message()));
  const std::string file = NewViewMetadataFileLocation(location, "");
  Status written = WriteMetadataFile(ctx.backend, file, iceberg::ViewMetadataToJson(*metadata).dump());
  if (!written.ok()) return ErrorFromStatus(written, BadRequest(written.message()));
  Status created = ctx.catalog().CreateEntity(ViewRecord(ctx, *metadata, file));
  if (!created.ok()) {
    DeleteMetadataFileQuietly(ctx.backend, file);
    if (created.code() == ErrorCode::kAlreadyExists) return AlreadyExists(ctx);
    return ErrorFromStatus(created, NoSuchNamespace(NamespaceDisplayName(ctx.path.levels)));
  }
  ctx.backend.views.Put(file, std::make_shared<const iceberg::ViewMetadata>(*metadata));
  return SendViewResult(ctx, file, *metadata);
}

HandlerResult LoadView(RequestContext& ctx) {
  auto entity = ctx.catalog().GetEntity(ctx.Entity(meta::EntityKind::kView));
  if (!entity.ok()) return ErrorFromStatus(entity.status(), NoSuchView(EntityDisplayName(ctx)));
  auto metadata = LoadViewMetadata(ctx.backend, entity->metadata_location);
  if (!metadata.ok()) return UnreadableMetadata(metadata.status());
  return SendViewResult(ctx, entity->metadata_location, **metadata);
}

HandlerResult ViewExists(RequestContext& ctx) {
  auto entity = ctx.catalog().GetEntity(ctx.Entity(meta::EntityKind::kView));
  if (!entity.ok()) return ErrorFromStatus(entity.status(), NoSuchView(EntityDisplayName(ctx)));
  return SendNoContent(ctx);
}

HandlerResult ReplaceView(RequestContext& ctx) {
  Json body;
  if (auto error = ParseJsonObject(ctx, body)) return error;
  Json requirements = body.value("requirements", Json::array());
  Json updates = body.value("updates", Json::array());
  if (!requirements.is_array() || !updates.is_array()) return BadRequest("requirements and updates must be arrays");
  const meta::EntityId id = ctx.Entity(meta::EntityKind::kView);
  for (uint32_t attempt = 0; attempt <= limits::kCatalogCommitRetriesMax; ++attempt) {
    auto entity = ctx.catalog().GetEntity(id);
    if (!entity.ok()) return ErrorFromStatus(entity.status(), NoSuchView(EntityDisplayName(ctx)));
    auto current = LoadViewMetadata(ctx.backend, entity->metadata_location);
    if (!current.ok()) return UnreadableMetadata(current.status());
    auto applied = iceberg::ApplyViewCommit(**current, requirements, updates);
    if (!applied.ok()) {
      if (applied.status().code() == ErrorCode::kConflict) {
        return MakeError(409, "CommitFailedException", "Commit failed: " + applied.status().message());
      }
      return ErrorFromStatus(applied.status(), BadRequest(applied.status().message()));
    }
    if (!applied->changed) return SendViewResult(ctx, entity->metadata_location, **current);
    const std::string file = NewViewMetadataFileLocation(applied->metadata.location, entity->metadata_location);
    if (auto error = RequireInWarehouse(ctx, file)) return error;
    Status written = WriteMetadataFile(ctx.backend, file, iceberg::ViewMetadataToJson(applied->metadata).dump());
    if (!written.ok()) return ErrorFromStatus(written, BadRequest(written.message()));
    Status swapped = ctx.catalog().SwapMetadataLocations({{id, entity->metadata_location, file}});
    if (swapped.ok()) {
      ctx.backend.views.Put(file, std::make_shared<const iceberg::ViewMetadata>(applied->metadata));
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
  if (auto error = ParseJsonObject(ctx, body)) return error;
  auto name = iceberg::RequiredString(body, "name");
  auto location = iceberg::RequiredString(body, "metadata-location");
  if (!name.ok()) return BadRequest(name.status().message());
  if (!location.ok()) return BadRequest(location.status().message());
  ctx.path.name = *name;
  if (auto problem = EntityNameProblem(*name)) return BadRequest(*problem);
  if (auto error = RequireNamespace(ctx)) return error;
  if (auto error = RequireInWarehouse(ctx, *location)) return error;
  auto metadata = LoadViewMetadata(ctx.backend, *location);
  if (!metadata.ok()) {
    return ErrorFromStatus(metadata.status(), BadRequest("metadata-location does not exist: " + *location));
  }
  Status registered = ctx.catalog().RegisterEntity(ViewRecord(ctx, **metadata, *location), false);
  if (!registered.ok()) {
    if (registered.code() == ErrorCode::kAlreadyExists) return AlreadyExists(ctx);
    return ErrorFromStatus(registered, NoSuchNamespace(NamespaceDisplayName(ctx.path.levels)));
  }
  return SendViewResult(ctx, *location, **metadata);
}

}  // namespace serac::catalog
