// Table commits: load the current metadata, apply requirements and updates (iceberg module),
// write the next metadata file, then compare-and-swap the table's pointer. A lost race is retried
// here with the requirements re-checked against the winner's metadata; files written by attempts
// that did not land are deleted. Multi-table transactions swap every pointer in one call.
#include <chrono>
#include <iterator>
#include <set>
#include <thread>

#include "catalog/catalog_access_internal.h"
#include "catalog/catalog_commit_internal.h"
#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "catalog/catalog_metadata_io_internal.h"
#include "catalog/catalog_namespaces_internal.h"
#include "catalog/catalog_responses_internal.h"
#include "catalog/catalog_routes_internal.h"
#include "catalog/catalog_rules_internal.h"
#include "catalog/catalog_tables_internal.h"
#include "catalog/job_runner.h"
#include "common/clock.h"
#include "common/json_reads.h"
#include "common/limits.h"
#include "common/random.h"
#include "meta/catalog_locations.h"

namespace serac::catalog {
namespace {

struct TableChange {
  meta::EntityId id;
  std::optional<iceberg::TableChanges> changes;  // set once the request is read
};

// One table's next state, prepared but not yet stored: the new metadata file, its text and its
// index record go into one CatalogStore::CommitMetadata together with the swap.
struct PreparedCommit {
  std::optional<meta::EntityRecord> entity;  // nullopt: the commit creates the table (assert-create)
  std::shared_ptr<const iceberg::TableMetadata> current;
  std::optional<iceberg::TableMetadata> next;  // set once the change is applied
  bool changed = false;
  std::string new_location;  // when changed
  std::string moved_to;      // when changed and the table's location moves (set-location): the new one
  // When changed: the file's JSON, also the response's "metadata" and what loads of it send.
  std::shared_ptr<const TableText> next_json;
  meta::ObjectRecord new_file;  // when changed: the file's index record (its blob, if any, is written)
};

std::string DisplayName(const meta::EntityId& id) { return NamespaceDisplayName(id.levels) + "." + id.name; }

// Lets the maintenance runner look at a table a commit changed (tables a commit creates have
// nothing to maintain yet).
void NoteCommitForMaintenance(Backend& backend, const meta::EntityId& id, const PreparedCommit& commit) {
  if (backend.jobs == nullptr || !commit.entity) return;
  JobRunner::Target target;
  target.warehouse = id.warehouse;
  target.table_uuid = commit.entity->uuid;
  target.table.namespace_levels = id.levels;
  target.table.name = id.name;
  backend.jobs->NoteCommit(target);
}

// Moves the member out of the parsed request: the body is not read again.
HandlerResult TakeArray(Json& body, const char* key, Json& out) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return kHandled;
  if (!it->is_array()) return BadRequest(std::string(key) + " must be an array");
  out = std::move(*it);
  return kHandled;
}

HandlerResult ReadChange(Json& body, TableChange& change) {
  Json requirements = Json::array();
  Json updates = Json::array();
  if (auto error = TakeArray(body, "requirements", requirements)) return error;
  if (auto error = TakeArray(body, "updates", updates)) return error;
  // The one place a commit is read from JSON: typed from here on.
  auto changes = iceberg::TableChanges::FromJson(std::move(requirements), std::move(updates));
  if (!changes.ok()) return MetadataRuleError(changes.status());
  change.changes = std::move(changes).value();
  return kHandled;
}

// Waits a little before retrying a lost race so that competing writers spread out.
void BackOff(uint32_t attempt) {
  const uint32_t ceiling_ms = 1u << std::min<uint32_t>(attempt, 6);
  const std::string noise = RandomBytes(1);
  const uint32_t wait_ms = static_cast<uint8_t>(noise[0]) % (ceiling_ms + 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
}

// Reads the table's entry afresh, under its commit lock: another commit may have landed since the
// change was authorised.
HandlerResult LoadCurrent(Backend& backend, const TableChange& change, bool allow_create,
                          PreparedCommit& out) {
  Result<meta::EntityRecord> entity = backend.catalog().GetEntity(change.id);
  if (entity.ok()) {
    out.entity = std::move(entity).value();
    auto metadata = LoadTableMetadata(backend, out.entity->metadata_location);
    if (!metadata.ok()) {
      return MakeError(500, "InternalServerError",
                       "cannot read table metadata: " + metadata.status().message());
    }
    out.current = std::move(metadata).value();
    return kHandled;
  }
  if (entity.status().code() != ErrorCode::kNotFound) return ErrorFromStatus(entity.status(), BadRequest(""));
  if (!allow_create || !change.changes->asserts_create()) return NoSuchTable(DisplayName(change.id));
  auto ns = backend.catalog().GetNamespace(change.id.warehouse, change.id.levels);
  if (!ns.ok()) return ErrorFromStatus(ns.status(), NoSuchNamespace(NamespaceDisplayName(change.id.levels)));
  // A view that took the name since the stage-create: the name is not ours to create.
  return RequireNameFree(backend, change.id);
}

// Keeps the table's files in the warehouse bucket: a location elsewhere (a client's file:/ path,
// another bucket) is replaced by the table's current one, or a fresh one for a new table.
void KeepLocationInWarehouse(const TableChange& change, PreparedCommit& prepared) {
  if (ClientLocationInWarehouse(prepared.next->location(), change.id.warehouse)) return;
  prepared.next = prepared.next->WithLocation(
      prepared.current ? prepared.current->location()
                       : DefaultEntityLocation(change.id.warehouse, change.id.levels, change.id.name));
}

// Applies the change to the current metadata and writes the next metadata file if it differs.
HandlerResult Prepare(Backend& backend, const TableChange& change, bool allow_create, PreparedCommit& out) {
  out = PreparedCommit{};
  if (auto error = LoadCurrent(backend, change, allow_create, out)) return error;
  iceberg::CommitOptions options;
  options.now_ms = ToUnixMillis(Now());
  if (out.entity) options.previous_metadata_location = out.entity->metadata_location;
  auto applied = iceberg::CommitTable(out.current.get(), *change.changes, options);
  if (!applied.ok()) {
    // The message goes out unchanged: Java clients recognise "Requirement failed: ..." in it.
    if (applied.status().code() == ErrorCode::kConflict) {
      return MakeError(409, "CommitFailedException", applied.status().message());
    }
    return MetadataRuleError(applied.status());
  }
  out.next = std::move(applied->metadata);
  out.changed = applied->changed || !out.entity;
  if (!out.changed) return kHandled;
  KeepLocationInWarehouse(change, out);
  // What the table owns after the commit, and everything the commit adds must be there.
  const std::string& warehouse = change.id.warehouse;
  std::string owned_key;
  if (auto error = OwnedKey(warehouse, "location", out.next->location(), owned_key)) return error;
  if (auto error =
          RequireLocationsOwned(warehouse, owned_key, DisplayName(change.id), out.current.get(), *out.next)) {
    return error;
  }
  if (auto error = RequireAddedFilesOwned(backend, warehouse, owned_key, DisplayName(change.id),
                                          out.current.get(), *out.next)) {
    return error;
  }
  if (out.entity && meta::LocationKeyIn(warehouse, out.entity->location) != owned_key) {
    out.moved_to = "s3://" + warehouse + "/" + owned_key;  // the store checks it as a create's
  }
  out.new_location = out.next->NewFileLocation(options.previous_metadata_location, RandomUuid());
  if (auto error = RequireOwnedMetadataFile(warehouse, owned_key, out.new_location)) return error;
  out.next_json = std::make_shared<const TableText>(out.next->ToJsonPieces());
  auto file = TableMetadataFileRecord(backend, out.new_location, *out.next_json);
  if (!file.ok()) {
    out.new_location.clear();
    return ErrorFromStatus(file.status(), BadRequest(file.status().message()));
  }
  out.new_file = std::move(file).value();
  return kHandled;
}

// The entity a commit that finishes a stage-create makes appear with its first metadata file.
meta::EntityRecord CreatedEntity(const TableChange& change, const PreparedCommit& prepared) {
  meta::EntityRecord record;
  record.warehouse = change.id.warehouse;
  record.levels = change.id.levels;
  record.name = change.id.name;
  record.kind = meta::EntityKind::kTable;
  record.uuid = prepared.next->table_uuid();
  record.location = prepared.next->location();
  record.metadata_location = prepared.new_location;
  record.created_ms = record.updated_ms = ToUnixMillis(Now());
  return record;
}

// Adds one prepared table to the single durable step that stores the whole commit.
void AddToCommit(const TableChange& change, const PreparedCommit& prepared, meta::MetadataCommit& commit) {
  commit.new_files.push_back(prepared.new_file);
  if (!prepared.entity) {
    commit.created.push_back(CreatedEntity(change, prepared));
    return;
  }
  commit.swaps.push_back(
      {change.id, prepared.entity->metadata_location, prepared.new_location, prepared.moved_to});
  // Trimmed files go only from what the table owned (a table from before locations were confined
  // may own nothing).
  const std::optional<std::string> owned_key =
      meta::LocationKeyIn(change.id.warehouse, prepared.entity->location);
  if (!owned_key) return;
  for (auto& trimmed : TrimmedMetadataFiles(*prepared.current, prepared.entity->metadata_location,
                                            *prepared.next, change.id.warehouse, *owned_key)) {
    commit.removed_files.push_back(std::move(trimmed));
  }
}

void DiscardPrepared(Backend& backend, const std::vector<PreparedCommit>& prepared) {
  for (const PreparedCommit& commit : prepared) {
    if (!commit.changed || commit.new_location.empty()) continue;
    DiscardMetadataFileRecord(backend, commit.new_file);
    ForgetTableVersion(backend, commit.new_location);
  }
}

// Caches the new version (parsed, and its text as the commit's pieces) under its new location
// before the commit makes it visible: whoever then reads the table's row — the table's next
// commit, the loads of clients whose commits lost — finds it ready. Only the commit makes the
// location reachable; DiscardPrepared forgets it if the commit does not happen.
void CacheNewVersion(Backend& backend, PreparedCommit& prepared, ReleasedVersions& released) {
  auto tables = backend.tables.Put(prepared.new_location,
                                   std::make_shared<const iceberg::TableMetadata>(std::move(*prepared.next)),
                                   ParsedMetadataBytes(prepared.new_file.size));
  auto texts = CacheCommittedTableText(backend, prepared.new_location, prepared.next_json);
  std::move(tables.begin(), tables.end(), std::back_inserter(released.tables));
  std::move(texts.begin(), texts.end(), std::back_inserter(released.texts));
}

void AddCommitEtag(RequestContext& ctx, const std::string& location) {
  ctx.response.AddHeader("ETag", TableEtag(location, iceberg::SnapshotSelection::kAll));
}

// A CommitTableResponse up to its "metadata" member, written without a Json tree.
std::string CommitResultHead(const std::string& metadata_location) {
  std::string head = "{\"metadata-location\":";
  AppendJsonString(head, metadata_location);
  head += ",\"metadata\":";
  return head;
}

// The commit may or may not have happened — it became visible but could not be made durable, its
// acknowledgement was lost, or the store failed in a way it cannot explain: the client must not
// retry it as if it had failed.
IcebergError StateUnknown(const Status& status) {
  return MakeError(500, "CommitStateUnknownException", "commit state unknown: " + status.message());
}

// The swap did not happen; any other outcome than a lost race ends the commit.
IcebergError SwapError(const Status& status, const std::string& display) {
  if (status.code() == ErrorCode::kNotFound) return NoSuchTable(display);
  if (status.code() == ErrorCode::kInternal) return StateUnknown(status);
  // The store reports errors only for transactions it rolled back: the commit surely did not land.
  return ErrorFromStatus(status, NoSuchTable(display));
}

// A commit updates an existing table (the route's s3tables:UpdateTable on its ARN); one that
// finishes a staged create (assert-create on a table that does not exist) creates it, which is
// s3tables:CreateTable in its namespace, as for an unstaged create.
HandlerResult AuthorizeChange(RequestContext& ctx, const TableChange& change, bool allow_create) {
  auto found = ctx.catalog().GetEntity(change.id);
  if (!found.ok() && found.status().code() != ErrorCode::kNotFound) {
    return ErrorFromStatus(found.status(), BadRequest(""));
  }
  if (!found.ok() && allow_create && change.changes->asserts_create()) {
    return Authorize(ctx, actions::kCreateTable, auth::TablesWarehouseArn(change.id.warehouse),
                     CatalogConditions(ctx, change.id.levels, meta::EntityKind::kTable, change.id.name));
  }
  return AuthorizeEntity(ctx, ctx.action, change.id, found.ok() ? &*found : nullptr);
}

}  // namespace

HandlerResult CommitTableChange(Backend& backend, const meta::EntityId& table, iceberg::TableChanges changes,
                                ReleasedVersions& released, CommittedTable& out) {
  TableChange change;
  change.id = table;
  change.changes = std::move(changes);
  const std::string display = DisplayName(change.id);
  std::unique_lock<std::mutex> table_lock(backend.CommitLock(change.id));
  for (uint32_t attempt = 0; attempt <= limits::kCatalogCommitRetriesMax; ++attempt) {
    std::vector<PreparedCommit> prepared(1);
    PreparedCommit& next = prepared[0];
    if (auto error = Prepare(backend, change, true, next)) return error;
    if (!next.changed) {
      out.metadata_location = next.entity->metadata_location;
      out.text =
          CachedTableText(backend, out.metadata_location, *next.current, iceberg::SnapshotSelection::kAll);
      out.metadata = next.current;
      return kHandled;
    }
    meta::MetadataCommit commit;
    AddToCommit(change, next, commit);
    out.text = next.next_json;
    CacheNewVersion(backend, next, released);
    // Once the commit is visible the table's next commit may start from it, while this one waits
    // for its fsync before answering.
    bool visible = false;
    commit.on_visible = [&] {
      visible = true;
      table_lock.unlock();
    };
    Status swapped = backend.catalog().CommitMetadata(commit);
    if (visible && !swapped.ok()) return StateUnknown(swapped);
    if (swapped.ok()) {
      out.metadata_location = next.new_location;
      out.metadata = backend.tables.Get(next.new_location);
      NoteCommitForMaintenance(backend, change.id, next);
      return kHandled;
    }
    DiscardPrepared(backend, prepared);
    // A name taken since the checks (by a table or a view) is final, not a race to retry.
    if (swapped.code() == ErrorCode::kAlreadyExists) return NameTaken(backend, change.id);
    if (swapped.code() != ErrorCode::kConflict) return SwapError(swapped, display);
    BackOff(attempt);
  }
  return MakeError(
      409, "CommitFailedException",
      "Commit failed for " + display + ": too many concurrent commits (limits::kCatalogCommitRetriesMax)");
}

HandlerResult CommitTable(RequestContext& ctx) {
  Json body;
  if (auto error = ParseJsonObject(ctx, body)) return error;
  TableChange change;
  change.id = ctx.Entity(meta::EntityKind::kTable);
  if (auto error = ReadChange(body, change)) return error;
  if (auto error = AuthorizeChange(ctx, change, true)) return error;
  ReleasedVersions released;  // declared first: freed after the answer is sent
  CommittedTable committed;
  if (auto error =
          CommitTableChange(ctx.backend, change.id, std::move(*change.changes), released, committed)) {
    return error;
  }
  AddCommitEtag(ctx, committed.metadata_location);
  return SendJsonAfterHead(ctx, CommitResultHead(committed.metadata_location), *committed.text);
}

namespace {

HandlerResult ParseTransaction(RequestContext& ctx, std::vector<TableChange>& changes) {
  Json body;
  if (auto error = ParseJsonObject(ctx, body)) return error;
  auto list = body.find("table-changes");
  if (list == body.end() || !list->is_array() || list->empty()) {
    return BadRequest("table-changes must be a non-empty array");
  }
  if (list->size() > limits::kCatalogTablesPerTransactionMax) {
    return BadRequest("too many table changes (limits::kCatalogTablesPerTransactionMax = 100)");
  }
  std::set<std::pair<meta::NamespaceLevels, std::string>> seen;
  for (Json& item : *list) {
    if (!item.is_object()) return BadRequest("each table change must be an object");
    auto identifier = item.find("identifier");
    if (identifier == item.end()) return BadRequest("each table change needs an identifier");
    TableChange change;
    change.id = {ctx.path.warehouse, {}, "", meta::EntityKind::kTable};
    if (auto error = ParseIdentifier(*identifier, change.id.levels, change.id.name)) return error;
    if (auto error = ReadChange(item, change)) return error;
    if (!seen.insert({change.id.levels, change.id.name}).second) {
      return BadRequest("table changed twice in one transaction: " + DisplayName(change.id));
    }
    changes.push_back(std::move(change));
  }
  return kHandled;
}

}  // namespace

HandlerResult CommitTransaction(RequestContext& ctx) {
  std::vector<TableChange> changes;
  if (auto error = ParseTransaction(ctx, changes)) return error;
  // Every table is authorised before any file is written.
  for (const TableChange& change : changes) {
    if (auto error = AuthorizeChange(ctx, change, false)) return error;
  }
  // The tables' commit locks, always taken in the same order so transactions cannot deadlock.
  std::set<std::mutex*> lock_set;
  for (const TableChange& change : changes) lock_set.insert(&ctx.backend.CommitLock(change.id));
  ReleasedVersions released;  // freed after the locks are let go and the answer sent
  std::vector<std::unique_lock<std::mutex>> table_locks;
  for (std::mutex* lock : lock_set) table_locks.emplace_back(*lock);
  for (uint32_t attempt = 0; attempt <= limits::kCatalogCommitRetriesMax; ++attempt) {
    std::vector<PreparedCommit> prepared(changes.size());
    meta::MetadataCommit commit;
    for (size_t i = 0; i < changes.size(); ++i) {
      if (auto error = Prepare(ctx.backend, changes[i], false, prepared[i])) {
        DiscardPrepared(ctx.backend, prepared);
        return error;
      }
      if (prepared[i].changed) AddToCommit(changes[i], prepared[i], commit);
    }
    if (commit.new_files.empty()) return SendNoContent(ctx);
    for (PreparedCommit& table : prepared) {
      if (table.changed) CacheNewVersion(ctx.backend, table, released);
    }
    bool visible = false;
    commit.on_visible = [&] {  // as for one table: the next commits may start from this one
      visible = true;
      for (std::unique_lock<std::mutex>& lock : table_locks) lock.unlock();
    };
    Status swapped = ctx.catalog().CommitMetadata(commit);
    if (visible && !swapped.ok()) return StateUnknown(swapped);
    if (swapped.ok()) {
      for (size_t i = 0; i < changes.size(); ++i) {
        if (prepared[i].changed) NoteCommitForMaintenance(ctx.backend, changes[i].id, prepared[i]);
      }
      return SendNoContent(ctx);
    }
    DiscardPrepared(ctx.backend, prepared);
    if (swapped.code() != ErrorCode::kConflict) return SwapError(swapped, "in transaction");
    BackOff(attempt);
  }
  return MakeError(409, "CommitFailedException", "Transaction failed: too many concurrent commits");
}

}  // namespace serac::catalog
