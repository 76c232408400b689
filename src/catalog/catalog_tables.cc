// Table routes other than commits: create (and stage-create), load, exists, drop (and purge),
// register, metrics, and the rename of tables and views.
#include "catalog/catalog_access_internal.h"
#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_credentials_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "catalog/catalog_metadata_io_internal.h"
#include "catalog/catalog_namespaces_internal.h"
#include "catalog/catalog_responses_internal.h"
#include "catalog/catalog_routes_internal.h"
#include "catalog/catalog_rules_internal.h"
#include "catalog/catalog_tables_internal.h"
#include "catalog/catalog_warehouses_internal.h"
#include "catalog/in_process_tables.h"
#include "common/clock.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/json_reads.h"
#include "common/log.h"
#include "common/random.h"
#include "meta/catalog_locations.h"

namespace serac::catalog {
namespace {

HandlerResult ParseSelection(RequestContext& ctx, iceberg::SnapshotSelection& selection) {
  std::string_view mode = ctx.query.Get("snapshots", "all");
  if (AsciiEqualsIgnoreCase(mode, "all")) {
    selection = iceberg::SnapshotSelection::kAll;
  } else if (AsciiEqualsIgnoreCase(mode, "refs")) {
    selection = iceberg::SnapshotSelection::kRefs;
  } else {
    return BadRequest("snapshots must be all or refs");
  }
  return kHandled;
}

// A metadata file the catalog points at but cannot read is the server's problem, not the client's.
IcebergError UnreadableMetadata(const Status& status) {
  return MakeError(500, "InternalServerError", "cannot read table metadata: " + status.message());
}

HandlerResult CheckNameAndNamespace(RequestContext& ctx, const std::string& name) {
  if (auto problem = EntityNameProblem(name)) return BadRequest(*problem);
  auto ns = ctx.catalog().GetNamespace(ctx.path.warehouse, ctx.path.levels);
  if (!ns.ok()) return ErrorFromStatus(ns.status(), NoSuchNamespace(NamespaceDisplayName(ctx.path.levels)));
  return kHandled;
}

HandlerResult SendLoadedTable(RequestContext& ctx, const meta::EntityRecord& entity,
                              iceberg::SnapshotSelection selection, const std::string& etag) {
  auto metadata = LoadTableMetadata(ctx.backend, entity.metadata_location);
  if (!metadata.ok()) return UnreadableMetadata(metadata.status());
  // Writable credentials only for a caller that may commit what it writes.
  const bool vend_write =
      WantsVendedCredentials(ctx.request) &&
      IsEntityAllowed(ctx, actions::kUpdateTable, ctx.Entity(meta::EntityKind::kTable), &entity);
  return SendTableResult(ctx, entity.metadata_location, **metadata, vend_write, selection, &etag);
}

IcebergError NoSuchEntity(meta::EntityKind kind, std::string_view name) {
  return kind == meta::EntityKind::kTable ? NoSuchTable(name) : NoSuchView(name);
}

// The entity must be renamable where it is (its own ARN and names) and to where it goes (the same
// ARN with the destination's names), so nobody moves an entity out of or into a namespace they
// may not rename in.
HandlerResult AuthorizeRename(RequestContext& ctx, const meta::EntityId& from,
                              const meta::NamespaceLevels& to_levels, const std::string& to_name) {
  auto found = ctx.catalog().GetEntity(from);
  if (!found.ok() && found.status().code() != ErrorCode::kNotFound) {
    return ErrorFromStatus(found.status(), BadRequest(""));
  }
  const meta::EntityRecord* existing = found.ok() ? &*found : nullptr;
  if (auto error = AuthorizeEntity(ctx, ctx.action, from, existing)) return error;
  const meta::EntityId to{from.warehouse, to_levels, to_name, from.kind};
  return AuthorizeEntity(ctx, ctx.action, to, existing);
}

HandlerResult RenameEntity(RequestContext& ctx, meta::EntityKind kind) {
  Json body;
  if (auto error = ParseJsonObject(ctx, body)) return error;
  auto source = body.find("source");
  auto destination = body.find("destination");
  if (source == body.end() || destination == body.end())
    return BadRequest("rename needs source and destination");
  meta::EntityId from{ctx.path.warehouse, {}, "", kind};
  meta::NamespaceLevels to_levels;
  std::string to_name;
  if (auto error = ParseIdentifier(*source, from.levels, from.name)) return error;
  if (auto error = ParseIdentifier(*destination, to_levels, to_name)) return error;
  if (auto error = AuthorizeRename(ctx, from, to_levels, to_name)) return error;
  Status renamed = ctx.catalog().RenameEntity(from, to_levels, to_name);
  if (renamed.ok()) return SendNoContent(ctx);
  const std::string from_display = NamespaceDisplayName(from.levels) + "." + from.name;
  if (renamed.code() == ErrorCode::kAlreadyExists) {
    const meta::EntityId to{ctx.path.warehouse, to_levels, to_name, kind};
    return MakeError(409, "AlreadyExistsException",
                     "Cannot rename " + from_display + " to " + NamespaceDisplayName(to_levels) + "." +
                         to_name + ". " + KindName(HolderKind(ctx.backend, to).value_or(kind)) +
                         " already exists");
  }
  if (renamed.code() == ErrorCode::kNotFound && ctx.catalog().GetEntity(from).ok()) {
    return NoSuchNamespace(NamespaceDisplayName(to_levels));
  }
  return ErrorFromStatus(renamed, NoSuchEntity(kind, from_display));
}

}  // namespace

HandlerResult OpenTableFiles(RequestContext& ctx, std::unique_ptr<iceberg::FileIO>& io) {
  std::string owned_key;
  if (auto error = OwnedKey(ctx.path.warehouse, "the table's location", ctx.entity->location, owned_key)) {
    return error;
  }
  io = MakeTableFileIO(*ctx.backend.meta, *ctx.backend.blobs, ctx.path.warehouse, owned_key);
  return kHandled;
}

std::string EntityDisplayName(const RequestContext& ctx) {
  return NamespaceDisplayName(ctx.path.levels) + "." + ctx.path.name;
}

const char* KindName(meta::EntityKind kind) { return kind == meta::EntityKind::kTable ? "Table" : "View"; }

std::optional<meta::EntityKind> HolderKind(Backend& backend, const meta::EntityId& wanted) {
  for (meta::EntityKind kind :
       {wanted.kind,
        wanted.kind == meta::EntityKind::kTable ? meta::EntityKind::kView : meta::EntityKind::kTable}) {
    meta::EntityId id = wanted;
    id.kind = kind;
    if (backend.catalog().GetEntity(id).ok()) return kind;
  }
  return std::nullopt;
}

IcebergError NameTaken(Backend& backend, const meta::EntityId& wanted) {
  const std::string display = NamespaceDisplayName(wanted.levels) + "." + wanted.name;
  const meta::EntityKind holder = HolderKind(backend, wanted).value_or(wanted.kind);
  if (holder == wanted.kind) {
    return MakeError(409, "AlreadyExistsException",
                     std::string(KindName(holder)) + " already exists: " + display);
  }
  return MakeError(409, "AlreadyExistsException",
                   std::string(KindName(holder)) + " with same name already exists: " + display);
}

HandlerResult RequireNameFree(Backend& backend, const meta::EntityId& wanted) {
  for (meta::EntityKind kind : {meta::EntityKind::kTable, meta::EntityKind::kView}) {
    meta::EntityId id = wanted;
    id.kind = kind;
    auto existing = backend.catalog().GetEntity(id);
    if (existing.ok()) return NameTaken(backend, wanted);
    if (existing.status().code() != ErrorCode::kNotFound)
      return ErrorFromStatus(existing.status(), BadRequest(""));
  }
  return kHandled;
}

HandlerResult ChooseTableLocation(std::string_view warehouse, const meta::NamespaceLevels& levels,
                                  std::string_view name, const std::optional<std::string>& requested,
                                  std::string& location) {
  if (requested && !requested->empty()) {
    auto parsed = ParseS3Location(*requested);
    // The warehouse's root is no table's place: it is overridden like a location elsewhere.
    if (parsed && parsed->bucket == warehouse && parsed->key.find_first_not_of('/') != std::string::npos) {
      std::string key;
      if (auto error = OwnedKey(warehouse, "location", *requested, key)) return error;
      location = "s3://" + std::string(warehouse) + "/" + key;
      return kHandled;
    }
  }
  location = DefaultEntityLocation(warehouse, levels, name);
  return kHandled;
}

namespace {

std::string TableTextKey(const std::string& metadata_location, iceberg::SnapshotSelection selection) {
  return metadata_location + (selection == iceberg::SnapshotSelection::kAll ? "#all" : "#refs");
}

}  // namespace

std::shared_ptr<const TableText> CachedTableText(Backend& backend, const std::string& metadata_location,
                                                 const iceberg::TableMetadata& metadata,
                                                 iceberg::SnapshotSelection selection) {
  const std::string key = TableTextKey(metadata_location, selection);
  if (std::shared_ptr<const TableText> text = backend.table_texts.Get(key)) return text;
  auto text = std::make_shared<TableText>(1);
  text->front().text = metadata.ToJsonText(selection);
  backend.table_texts.Put(key, text, iceberg::MetadataPiecesSize(*text));
  return text;
}

std::vector<std::shared_ptr<const TableText>> CacheCommittedTableText(Backend& backend,
                                                                      const std::string& metadata_location,
                                                                      std::shared_ptr<const TableText> text) {
  // Counted whole although the chunks are shared with other versions: the bound stays a bound.
  const uint64_t bytes = iceberg::MetadataPiecesSize(*text);
  return backend.table_texts.Put(TableTextKey(metadata_location, iceberg::SnapshotSelection::kAll),
                                 std::move(text), bytes);
}

void ForgetTableVersion(Backend& backend, const std::string& metadata_location) {
  backend.tables.Erase(metadata_location);
  backend.table_texts.Erase(TableTextKey(metadata_location, iceberg::SnapshotSelection::kAll));
}

std::string TableEtag(const std::string& metadata_location, iceberg::SnapshotSelection selection) {
  const char* mode = selection == iceberg::SnapshotSelection::kAll ? "#all" : "#refs";
  return "\"" + Sha256Hex(metadata_location + mode).substr(0, 32) + "\"";
}

HandlerResult RequireInWarehouse(std::string_view warehouse, const std::string& location) {
  auto parsed = ParseS3Location(location);
  if (!parsed || parsed->bucket != warehouse || parsed->key.empty()) {
    return BadRequest("metadata location must be inside the warehouse bucket " + std::string(warehouse) +
                      ": " + location);
  }
  return kHandled;
}

HandlerResult RequireInWarehouse(const RequestContext& ctx, const std::string& location) {
  return RequireInWarehouse(ctx.path.warehouse, location);
}

HandlerResult RequireOwnedMetadataFile(std::string_view warehouse, const std::string& owned_key,
                                       const std::string& file) {
  std::optional<std::string> key = meta::LocationKeyIn(warehouse, file);
  if (key && *key != owned_key && meta::KeyAtOrBelow(*key, owned_key)) return kHandled;
  return BadRequest("metadata file " + file + " is outside its table's location s3://" +
                    std::string(warehouse) + "/" + owned_key + " (write.metadata.path must be below it)");
}

namespace {

// A LoadTableResult up to its "metadata" member. Without vended credentials that is the same few
// strings on every load, so it is written without a Json tree.
std::string TableResultHead(RequestContext& ctx, const std::optional<std::string>& metadata_location,
                            const iceberg::TableMetadata& metadata, bool vend_write) {
  // The mode the table's clients plan scans in, when the table or its warehouse chooses one.
  const std::string planning_mode = ScanPlanningMode(ctx, metadata);
  if (WantsVendedCredentials(ctx.request)) {
    Json body = {{"metadata-location", metadata_location ? Json(*metadata_location) : Json(nullptr)},
                 {"config", StorageConfig(ctx)}};
    if (!planning_mode.empty()) body["config"]["scan-planning-mode"] = planning_mode;
    AddVendedCredentials(ctx, ctx.Entity(meta::EntityKind::kTable), metadata.location(), vend_write, body);
    return RawMemberHead(body, "metadata");
  }
  std::string head = "{\"config\":";
  AppendStorageConfigText(ctx, head);
  if (!planning_mode.empty()) {
    head.pop_back();  // the config object's closing brace
    head += ",\"scan-planning-mode\":";
    AppendJsonString(head, planning_mode);
    head += '}';
  }
  head += ",\"metadata-location\":";
  if (metadata_location) {
    AppendJsonString(head, *metadata_location);
  } else {
    head += "null";
  }
  head += ",\"metadata\":";
  return head;
}

}  // namespace

HandlerResult SendTableResult(RequestContext& ctx, const std::optional<std::string>& metadata_location,
                              const iceberg::TableMetadata& metadata, bool vend_write,
                              iceberg::SnapshotSelection selection, const std::string* etag) {
  std::string head = TableResultHead(ctx, metadata_location, metadata, vend_write);
  if (!metadata_location) {
    return SendJsonAfterHead(ctx, std::move(head), metadata.ToJsonText(selection));
  }
  ctx.response.AddHeader("ETag", etag != nullptr ? *etag : TableEtag(*metadata_location, selection));
  return SendJsonAfterHead(ctx, head, *CachedTableText(ctx.backend, *metadata_location, metadata, selection));
}

HandlerResult CreateTable(RequestContext& ctx) {
  Json body;
  if (auto error = ParseJsonObject(ctx, body)) return error;
  auto request = iceberg::TableCreation::FromJson(body);
  if (!request.ok()) return BadRequest(request.status().message());
  const std::string& name = request->name();
  ctx.path.name = name;
  if (auto problem = EntityNameProblem(name)) return BadRequest(*problem);
  if (auto error = AuthorizeInWarehouse(ctx, ctx.action, ctx.path.levels, meta::EntityKind::kTable, name)) {
    return error;
  }
  if (auto error = CheckNameAndNamespace(ctx, name)) return error;
  if (auto error = RequireNameFree(ctx.backend, ctx.Entity(meta::EntityKind::kTable))) return error;
  std::string location;
  if (auto error =
          ChooseTableLocation(ctx.path.warehouse, ctx.path.levels, name, request->location(), location)) {
    return error;
  }
  auto metadata = request->NewMetadata(location, RandomUuid(), ToUnixMillis(Now()));
  if (!metadata.ok()) return ErrorFromStatus(metadata.status(), BadRequest(metadata.status().message()));
  std::string owned_key;
  if (auto error = OwnedKey(ctx.path.warehouse, "location", location, owned_key)) return error;
  const std::string display = NamespaceDisplayName(ctx.path.levels) + "." + name;
  if (auto error = RequireLocationsOwned(ctx.path.warehouse, owned_key, display, nullptr, *metadata))
    return error;
  // The creator writes the table's first files, so its credentials (if vended) may write.
  if (request->stage_create()) return SendTableResult(ctx, std::nullopt, *metadata, true);

  const std::string file = metadata->NewFileLocation("", RandomUuid());
  if (auto error = RequireOwnedMetadataFile(ctx.path.warehouse, owned_key, file)) return error;
  const std::string json = metadata->ToJsonText();
  auto file_record = MetadataFileRecord(ctx.backend, file, json);
  if (!file_record.ok())
    return ErrorFromStatus(file_record.status(), BadRequest(file_record.status().message()));
  meta::EntityRecord record;
  record.warehouse = ctx.path.warehouse;
  record.levels = ctx.path.levels;
  record.name = name;
  record.kind = meta::EntityKind::kTable;
  record.uuid = metadata->table_uuid();
  record.location = location;
  record.metadata_location = file;
  record.created_ms = record.updated_ms = ToUnixMillis(Now());
  // The file and the entry appear together, in one durable write.
  meta::MetadataCommit commit;
  commit.new_files.push_back(*file_record);
  commit.created.push_back(std::move(record));
  Status created = ctx.catalog().CommitMetadata(commit);
  if (!created.ok()) {
    DiscardMetadataFileRecord(ctx.backend, *file_record);
    if (created.code() == ErrorCode::kAlreadyExists)
      return NameTaken(ctx.backend, ctx.Entity(meta::EntityKind::kTable));
    return ErrorFromStatus(created, NoSuchNamespace(NamespaceDisplayName(ctx.path.levels)));
  }
  ctx.backend.tables.Put(file, std::make_shared<const iceberg::TableMetadata>(*metadata),
                         ParsedMetadataBytes(json.size()));
  return SendTableResult(ctx, file, *metadata, true);
}

HandlerResult LoadTable(RequestContext& ctx) {
  iceberg::SnapshotSelection selection = iceberg::SnapshotSelection::kAll;
  if (auto error = ParseSelection(ctx, selection)) return error;
  // The route's check found the table (ctx.entity) and authorised exactly that one.
  if (!ctx.entity) return NoSuchTable(EntityDisplayName(ctx));
  const meta::EntityRecord* entity = &*ctx.entity;
  const std::string etag = TableEtag(entity->metadata_location, selection);
  if (const std::string* if_none_match = ctx.request.FindHeader("if-none-match");
      if_none_match != nullptr && IfNoneMatchMatches(*if_none_match, etag)) {
    ctx.response.SetStatus(304);
    ctx.response.AddHeader("ETag", etag);
    (void)ctx.response.Send("");
    return kHandled;
  }
  return SendLoadedTable(ctx, *entity, selection, etag);
}

HandlerResult TableExists(RequestContext& ctx) {
  if (!ctx.entity) return NoSuchTable(EntityDisplayName(ctx));
  return SendNoContent(ctx);
}

HandlerResult DropTable(RequestContext& ctx) {
  auto purge = ParseBoolean(ctx.query.Get("purgeRequested", "false"));
  if (!purge) return BadRequest("purgeRequested must be true or false");
  auto dropped = ctx.catalog().DropEntity(ctx.Entity(meta::EntityKind::kTable));
  if (!dropped.ok()) return ErrorFromStatus(dropped.status(), NoSuchTable(EntityDisplayName(ctx)));
  if (*purge) {
    // The table is gone either way; files a failed purge leaves behind are orphans for maintenance.
    Status purged = PurgeLocation(ctx.backend, *dropped);
    if (!purged.ok())
      log::Warn("catalog: purge of " + dropped->location + " incomplete: " + purged.ToString());
  }
  return SendNoContent(ctx);
}

HandlerResult ReadRegistration(RequestContext& ctx, meta::EntityKind kind, Json& body, std::string& name,
                               std::string& metadata_location) {
  if (auto error = ParseJsonObject(ctx, body)) return error;
  auto parsed_name = RequiredString(body, "name");
  auto parsed_location = RequiredString(body, "metadata-location");
  if (!parsed_name.ok()) return BadRequest(parsed_name.status().message());
  if (!parsed_location.ok()) return BadRequest(parsed_location.status().message());
  name = std::move(parsed_name).value();
  metadata_location = std::move(parsed_location).value();
  ctx.path.name = name;
  if (auto problem = EntityNameProblem(name)) return BadRequest(*problem);
  return AuthorizeInWarehouse(ctx, ctx.action, ctx.path.levels, kind, name);
}

HandlerResult RegisterTable(RequestContext& ctx) {
  Json body;
  std::string name;
  std::string location;
  if (auto error = ReadRegistration(ctx, meta::EntityKind::kTable, body, name, location)) return error;
  bool overwrite = false;
  if (auto it = body.find("overwrite"); it != body.end() && !it->is_null()) {
    if (!it->is_boolean()) return BadRequest("overwrite must be a boolean");
    overwrite = it->get<bool>();
  }
  // Overwriting replaces whatever table holds the name: that is an update of it.
  const meta::EntityId id = ctx.Entity(meta::EntityKind::kTable);
  auto replaced = ctx.catalog().GetEntity(id);
  if (overwrite && replaced.ok()) {
    if (auto error = AuthorizeEntity(ctx, actions::kUpdateTable, id, &*replaced)) return error;
  }
  if (auto error = CheckNameAndNamespace(ctx, name)) return error;
  if (auto error = RequireInWarehouse(ctx, location)) return error;
  auto metadata = LoadTableMetadata(ctx.backend, location);
  if (!metadata.ok()) {
    return ErrorFromStatus(metadata.status(), BadRequest("metadata-location does not exist: " + location));
  }
  // A registered table owns its metadata's location, and everything the metadata names must be
  // there: the file itself, the manifest lists, statistics and write paths.
  std::string owned_key;
  if (auto error =
          OwnedKey(ctx.path.warehouse, "the metadata's location", (*metadata)->location(), owned_key)) {
    return error;
  }
  if (auto error = RequireOwnedMetadataFile(ctx.path.warehouse, owned_key, location)) return error;
  const std::string display = NamespaceDisplayName(ctx.path.levels) + "." + name;
  if (auto error = RequireLocationsOwned(ctx.path.warehouse, owned_key, display, nullptr, **metadata)) {
    return error;
  }
  if (auto error =
          RequireAddedFilesOwned(ctx.backend, ctx.path.warehouse, owned_key, display, nullptr, **metadata)) {
    return error;
  }
  meta::EntityRecord record;
  record.warehouse = ctx.path.warehouse;
  record.levels = ctx.path.levels;
  record.name = name;
  record.kind = meta::EntityKind::kTable;
  record.uuid = (*metadata)->table_uuid();
  record.location = (*metadata)->location();
  record.metadata_location = location;
  record.created_ms = record.updated_ms = ToUnixMillis(Now());
  Status registered = ctx.catalog().RegisterEntity(record, overwrite);
  if (!registered.ok()) {
    if (registered.code() == ErrorCode::kAlreadyExists)
      return NameTaken(ctx.backend, ctx.Entity(meta::EntityKind::kTable));
    return ErrorFromStatus(registered, NoSuchNamespace(NamespaceDisplayName(ctx.path.levels)));
  }
  const bool vend_write =
      WantsVendedCredentials(ctx.request) && IsEntityAllowed(ctx, actions::kUpdateTable, id, &record);
  return SendTableResult(ctx, location, **metadata, vend_write);
}

HandlerResult ReportMetrics(RequestContext& ctx) {
  Json body;
  if (auto error = ParseJsonObject(ctx, body)) return error;
  // What the specification's ReportMetricsRequest (a ScanReport or CommitReport) and the
  // reference's parser require of every report.
  for (const char* key : {"report-type", "table-name"}) {
    if (auto it = body.find(key); it == body.end() || !it->is_string()) {
      return BadRequest(std::string("Invalid metrics report: missing string field: ") + key);
    }
  }
  if (auto it = body.find("snapshot-id"); it == body.end() || !it->is_number_integer()) {
    return BadRequest("Invalid metrics report: missing integer field: snapshot-id");
  }
  if (auto it = body.find("metrics"); it == body.end() || !it->is_object()) {
    return BadRequest("Invalid metrics report: missing object field: metrics");
  }
  if (!ctx.entity) return NoSuchTable(EntityDisplayName(ctx));
  return SendNoContent(ctx);  // accepted and dropped: a sink is all clients need
}

HandlerResult RenameTable(RequestContext& ctx) { return RenameEntity(ctx, meta::EntityKind::kTable); }
HandlerResult RenameView(RequestContext& ctx) { return RenameEntity(ctx, meta::EntityKind::kView); }

}  // namespace serac::catalog
