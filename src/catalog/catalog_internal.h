// Private to catalog/: the per-request context, error values, pure request rules, authorisation,
// vended credentials, metadata file I/O and the route handlers, one file per area
// (catalog_access.cc, catalog_credentials.cc, catalog_namespaces.cc, catalog_tables.cc,
// catalog_commit.cc, catalog_views.cc, catalog_warehouses.cc).
#pragma once

#include <array>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "auth/identity.h"
#include "auth/policy.h"
#include "auth/sign_in_throttle.h"
#include "auth/sigv4.h"
#include "blob/blob_store.h"
#include "catalog/catalog_service.h"
#include "common/json_reads.h"
#include "common/limits.h"
#include "common/lru_cache.h"
#include "http/http.h"
#include "iceberg/metadata/table_metadata.h"
#include "meta/catalog_locations.h"
#include "meta/catalog_store.h"
#include "meta/meta_store.h"
#include "service/front_end_stores.h"
#include "service/handler_result.h"
#include "service/query_params.h"
#include "service/request_context.h"

namespace serac::maintenance {
class JobRunner;
struct ListedFile;
}  // namespace serac::maintenance

namespace serac::catalog {

// ---- Errors (catalog_errors.cc): the IcebergErrorResponse of the REST spec. ----

struct IcebergError {
  int http_status = 500;
  std::string type;  // "NoSuchTableException", ...
  std::string message;
};

// A handler either sent its success response itself (kHandled) or returns the error to send
// (service/handler_result.h).
using HandlerResult = service::HandlerResult<IcebergError>;
using service::kHandled;

IcebergError MakeError(int http_status, std::string type, std::string message);
IcebergError BadRequest(std::string message);
IcebergError NoSuchTable(std::string_view name);
IcebergError NoSuchView(std::string_view name);
IcebergError NoSuchNamespace(std::string_view name);
// Maps a Status from the stores or the iceberg module. kNotFound becomes `not_found` (the caller
// knows what was missing); kConflict a 409 CommitFailedException.
IcebergError ErrorFromStatus(const Status& status, const IcebergError& not_found);
// An error of the iceberg module when it applies a commit or checks a view: kInvalidArgument is
// IllegalArgumentException, as the reference answers (Java clients rethrow that type with the
// message unchanged); the rest as ErrorFromStatus.
IcebergError MetadataRuleError(const Status& status);
// {"error": {"message", "type", "code"}}
std::string RenderErrorJson(const IcebergError& error);

// ---- Pure request rules (catalog_rules.cc). ----

using service::QueryParams;  // the query string, decoded: service/query_params.h

// "true"/"false" in any letter case; nullopt for anything else.
std::optional<bool> ParseBoolean(std::string_view text);
// Splits a decoded namespace path segment on 0x1F (the %1F separator). Empty levels are refused.
std::optional<meta::NamespaceLevels> SplitNamespace(std::string_view decoded);
// "a.b" for messages.
std::string NamespaceDisplayName(const meta::NamespaceLevels& levels);
// Why a namespace level list is unacceptable (empty, empty level, 0x1F, not UTF-8), if it is.
std::optional<std::string> NamespaceProblem(const meta::NamespaceLevels& levels);
// Why a table or view name is unacceptable, if it is.
std::optional<std::string> EntityNameProblem(std::string_view name);
// S3 bucket naming rules plus the words that name catalog routes ("namespaces", ...).
std::optional<std::string> WarehouseNameProblem(std::string_view name);
// True for the first path segments after /v1 that are routes, never a {prefix}.
bool IsReservedPrefixWord(std::string_view segment);

struct S3Location {
  std::string bucket;
  std::string key;  // without leading '/', may be empty
};
// "s3://bucket/key" (also s3a:// and s3n://); nullopt otherwise.
std::optional<S3Location> ParseS3Location(std::string_view location);
// s3://<warehouse>/<meta::NamespaceLocationKey>: the directory under which the namespace's tables
// get their default locations.
std::string DefaultNamespaceLocation(std::string_view warehouse, const meta::NamespaceLevels& levels);
// s3://<warehouse>/<levels joined by '/'>/<name>-<32 hex>, each part a meta::LocationSegment:
// unique for every entity ever created, whatever its name holds.
std::string DefaultEntityLocation(std::string_view warehouse, const meta::NamespaceLevels& levels,
                                  std::string_view name);
// The key below which the table or view at `location` owns every object (meta::LocationKeyIn); a
// 400 naming `what` and the location when it is no such place in the warehouse.
HandlerResult OwnedKey(std::string_view warehouse, std::string_view what, const std::string& location,
                       std::string& key);
// 400 unless every place in serac's storage (s3:// and its aliases) that `after` names and
// `before` (null: none) does not — manifest lists, statistics files, write.*.path properties
// (iceberg::TableMetadata::LocationsAddedSince) — is below `owned_key`, the table
// `display_name`'s location key.
HandlerResult RequireLocationsOwned(std::string_view warehouse, const std::string& owned_key,
                                    std::string_view display_name, const iceberg::TableMetadata* before,
                                    const iceberg::TableMetadata& after);
// The client's location without trailing slashes, if it is below the warehouse bucket (not the
// bucket root itself, so a purge can never remove the whole warehouse); nullopt otherwise.
std::optional<std::string> ClientLocationInWarehouse(std::string_view location, std::string_view warehouse);

// Page tokens are the last name of the previous page, opaque to clients.
std::string EncodePageToken(std::string_view last_name);
std::optional<std::string> DecodePageToken(std::string_view token);
// True if an If-None-Match header value (entity-tag list or "*") matches `etag` (quoted).
bool IfNoneMatchMatches(std::string_view header, std::string_view etag);

// What a parsed metadata document costs in memory, estimated from its JSON text: the Json trees
// of its snapshots and schemas take a few times the bytes of their text, and each snapshot also
// keeps its own text.
inline uint64_t ParsedMetadataBytes(size_t text_bytes) {
  return 5 * static_cast<uint64_t>(text_bytes) + 4096;
}

// A table document's JSON text as loads send it: one piece when serialised for a load, or the
// pieces a commit cut it into (whose history chunks versions of the table share).
using TableText = std::vector<iceberg::MetadataTextPiece>;

// ---- Shared state and the request context. ----

// What server-side scan planning remembers (catalog_scan_planning.cc): the plan ids it handed out,
// for GET and DELETE .../plan/{id} (the newest limits::kScanPlansKept, at most
// limits::kScanPlansBytesMax of plan tasks all together; plan tasks themselves carry
// all they need, so a forgotten plan's tasks still fetch), and each warehouse's planning mode as
// stored, read once per process and kept current by the routes that change it.
class ScanPlanningState {
 public:
  struct PlanRecord {
    std::string table_uuid;
    std::vector<std::string> plan_tasks;
  };
  void Remember(const std::string& plan_id, PlanRecord record);
  std::optional<PlanRecord> Find(const std::string& plan_id);
  bool Forget(const std::string& plan_id);

  // nullopt: not read yet; an empty string: the warehouse sets none.
  std::optional<std::string> CachedWarehouseMode(const std::string& warehouse);
  void CacheWarehouseMode(const std::string& warehouse, std::string mode);

 private:
  std::mutex mutex_;
  std::list<std::string> order_;  // plan ids, oldest first
  uint64_t bytes_ = 0;            // of the plans remembered (estimated)
  std::unordered_map<std::string, std::pair<PlanRecord, std::list<std::string>::iterator>> plans_;
  std::unordered_map<std::string, std::string> warehouse_modes_;
};

struct Backend : service::FrontEndStores {
  CatalogOptions options;
  // Table maintenance jobs (maintenance/job_runner.h); null where the service runs none.
  std::unique_ptr<maintenance::JobRunner> jobs;
  // Parsed metadata by file location (files never change), bounded in entries and bytes: one table
  // with thousands of snapshots makes every metadata file large, and a hot table writes one per commit.
  LruCache<iceberg::TableMetadata> tables;
  LruCache<iceberg::ViewMetadata> views;
  // Table documents as sent by loads, keyed by location and snapshot selection: a load of an unchanged table
  // is then a copy of bytes instead of a serialisation of every snapshot. A commit puts its new file's
  // pieces, so the loads that follow it (every client whose commit lost the race) cost no
  // serialisation either.
  LruCache<TableText> table_texts;
  ScanPlanningState scan_planning;
  // Failed OAuth2 sign-ins by client address and client id.
  auth::SignInThrottle sign_in_throttle;

  Backend();
  ~Backend();
  meta::CatalogStore& catalog();
  // Commits to one table take its lock (tables share a fixed set of locks): a commit that would
  // lose the race to another in this process waits for it and is then checked against its result,
  // instead of writing a metadata file that cannot land.
  std::mutex& CommitLock(const meta::EntityId& table);
  std::array<std::mutex, 64> commit_locks;
};

// Values taken from the route's path template.
struct PathParams {
  std::string warehouse;         // {prefix}, or the default warehouse
  meta::NamespaceLevels levels;  // {namespace}
  std::string name;              // {table} / {view} / warehouse name of the admin API
  std::string type;              // {type}: a maintenance type
  std::string plan_id;           // {plan-id}: a scan plan
};

// The exchange, query, signature and principal are service::RequestContext's.
struct RequestContext : service::RequestContext {
  RequestContext(Backend& backend_in, const http::Request& request_in, http::BodyReader& raw_body_in,
                 http::ResponseWriter& response_in, http::RequestOutcome& outcome_in)
      : service::RequestContext(request_in, raw_body_in, response_in, outcome_in), backend(backend_in) {}

  Backend& backend;
  // The s3tables:* action of the matched route (catalog_service.cc's route table).
  std::string_view action;
  // The table or view a route on an existing entity was authorised against (its uuid names the
  // ARN), so the handler serves exactly what was checked.
  std::optional<meta::EntityRecord> entity;
  std::string body;  // the whole verified request body (catalog bodies are small JSON)
  PathParams path;

  meta::CatalogStore& catalog() { return backend.catalog(); }
  meta::MetaStore& meta() { return *backend.meta; }
  meta::EntityId Entity(meta::EntityKind kind) const {
    return {path.warehouse, path.levels, path.name, kind};
  }
};

// ---- Authorisation (catalog_access.cc). ----

namespace actions {
// AIStor's names (shared/reference/peers.md §2.7) where they are on record.
inline constexpr std::string_view kGetConfig = "s3tables:GetConfig";
inline constexpr std::string_view kCreateWarehouse = "s3tables:CreateWarehouse";
inline constexpr std::string_view kListWarehouses = "s3tables:ListWarehouses";
inline constexpr std::string_view kGetWarehouse = "s3tables:GetWarehouse";
inline constexpr std::string_view kDeleteWarehouse = "s3tables:DeleteWarehouse";
inline constexpr std::string_view kCreateNamespace = "s3tables:CreateNamespace";
inline constexpr std::string_view kListNamespaces = "s3tables:ListNamespaces";
inline constexpr std::string_view kGetNamespace = "s3tables:GetNamespace";
inline constexpr std::string_view kUpdateNamespaceProperties = "s3tables:UpdateNamespaceProperties";
inline constexpr std::string_view kDeleteNamespace = "s3tables:DeleteNamespace";
inline constexpr std::string_view kCreateTable = "s3tables:CreateTable";
inline constexpr std::string_view kListTables = "s3tables:ListTables";
inline constexpr std::string_view kGetTable = "s3tables:GetTable";
inline constexpr std::string_view kUpdateTable = "s3tables:UpdateTable";
inline constexpr std::string_view kDeleteTable = "s3tables:DeleteTable";
inline constexpr std::string_view kRenameTable = "s3tables:RenameTable";
inline constexpr std::string_view kRegisterTable = "s3tables:RegisterTable";
inline constexpr std::string_view kCreateView = "s3tables:CreateView";
inline constexpr std::string_view kListViews = "s3tables:ListViews";
inline constexpr std::string_view kGetView = "s3tables:GetView";
inline constexpr std::string_view kUpdateView = "s3tables:UpdateView";
inline constexpr std::string_view kDeleteView = "s3tables:DeleteView";
inline constexpr std::string_view kRenameView = "s3tables:RenameView";
inline constexpr std::string_view kRegisterView = "s3tables:RegisterView";
// S3 Tables' names of the maintenance API's actions (a warehouse is S3 Tables' table bucket).
inline constexpr std::string_view kGetWarehouseMaintenance =
    "s3tables:GetTableBucketMaintenanceConfiguration";
inline constexpr std::string_view kPutWarehouseMaintenance =
    "s3tables:PutTableBucketMaintenanceConfiguration";
inline constexpr std::string_view kGetTableMaintenance = "s3tables:GetTableMaintenanceConfiguration";
inline constexpr std::string_view kPutTableMaintenance = "s3tables:PutTableMaintenanceConfiguration";
inline constexpr std::string_view kGetTableMaintenanceStatus = "s3tables:GetTableMaintenanceJobStatus";
// serac's own: starting a job now.
inline constexpr std::string_view kRunTableMaintenance = "s3tables:StartTableMaintenanceJob";
inline constexpr std::string_view kGetWarehouseScanPlanning =
    "s3tables:GetTableBucketScanPlanningConfiguration";
inline constexpr std::string_view kPutWarehouseScanPlanning =
    "s3tables:PutTableBucketScanPlanningConfiguration";
}  // namespace actions

// What a route's action is checked against, decided before its handler runs (or by it).
enum class AccessScope {
  kPublic,         // no authentication (the OAuth2 token endpoint)
  kService,        // TablesServiceArn(): account-level (the warehouse list filters in its handler)
  kWarehouseName,  // TablesWarehouseArn({name}) of the warehouse admin API
  kNamespace,      // TablesWarehouseArn({prefix}) with s3tables:namespace = {namespace}
  kTable,          // the existing table {table} (TablesTableArn of its uuid), or any table if none
  kView,           // the same for the view {view}
  kHandler,        // the handler authorises once it has read what the body names
};

struct RouteAccess {
  std::string_view method;
  std::string_view path;    // template after /_iceberg
  std::string_view action;  // empty for kPublic
  AccessScope scope;
};
// Every route with its action, in route-table order (catalog_service.cc).
std::vector<RouteAccess> RouteAccessTable();

// The condition keys of one request about `levels` (s3tables:namespace, levels joined by '.';
// absent for the warehouse level) and, when `name` is not empty, s3tables:tableName or
// s3tables:viewName; plus aws:SourceIp and aws:SecureTransport.
auth::ConditionContext CatalogConditions(const RequestContext& ctx, const meta::NamespaceLevels& levels,
                                         meta::EntityKind kind = meta::EntityKind::kTable,
                                         std::string_view name = {});
// 403 ForbiddenException naming the action unless the principal may do it.
HandlerResult Authorize(RequestContext& ctx, std::string_view action, const std::string& resource,
                        const auth::ConditionContext& conditions);
bool IsAllowed(const RequestContext& ctx, std::string_view action, const std::string& resource,
               const auth::ConditionContext& conditions);
// An action at warehouse level (create, list, namespaces): TablesWarehouseArn(ctx.path.warehouse).
HandlerResult AuthorizeInWarehouse(RequestContext& ctx, std::string_view action,
                                   const meta::NamespaceLevels& levels,
                                   meta::EntityKind kind = meta::EntityKind::kTable,
                                   std::string_view name = {});
// The ARN of a table or view: its uuid when it exists, else "*" (any entity of that kind), so the
// decision for a name that does not exist never depends on whether it exists.
std::string EntityArn(const std::string& warehouse, meta::EntityKind kind,
                      const meta::EntityRecord* existing);
// An action on the table or view `id` (existing or not; see EntityArn).
HandlerResult AuthorizeEntity(RequestContext& ctx, std::string_view action, const meta::EntityId& id,
                              const meta::EntityRecord* existing);
bool IsEntityAllowed(const RequestContext& ctx, std::string_view action, const meta::EntityId& id,
                     const meta::EntityRecord* existing);
// Looks the route's entity up (kNotFound is fine) and authorises ctx.action on it; keeps the
// record in ctx.entity.
HandlerResult AuthorizeRouteEntity(RequestContext& ctx, meta::EntityKind kind);

// ---- Vended credentials (catalog_credentials.cc). ----

// True when X-Iceberg-Access-Delegation lists vended-credentials.
bool WantsVendedCredentials(const http::Request& request);
// Temporary credentials for the files under `location` (the table's, with a trailing '/'), as
// FileIO properties: keys, token, expiry, endpoint (ending in '/'), path style, region, and the
// refresh endpoint of `table`. nullopt (and a debug log) when the caller may not read there or the
// location is not an s3:// one; the caller then sends the table without credentials.
std::optional<Json> VendedStorageConfig(RequestContext& ctx, const meta::EntityId& table,
                                        const std::string& location, bool want_write);
// Adds vended credentials to a LoadTableResult body ("config" and "storage-credentials") when the
// request asks for them.
void AddVendedCredentials(RequestContext& ctx, const meta::EntityId& table, const std::string& location,
                          bool want_write, Json& body);
// GET .../tables/{table}/credentials
HandlerResult LoadCredentials(RequestContext& ctx);

// ---- Response helpers (catalog_service.cc). ----

// List paging: a client that sends no pageToken gets everything (the spec's rule); with one
// (even empty) it gets pages of pageSize (capped by limits::kCatalogPageSizeMax).
struct Paging {
  bool paged = false;
  uint32_t page_size = 0;
  std::string start_after;  // decoded from pageToken
};
HandlerResult ReadPaging(RequestContext& ctx, Paging& paging);

// The paged listing shared by warehouses, namespaces, tables and views.
// Builds {field: [...], "next-page-token": ...}. `fetch(start_after, limit)` returns one store page;
// `key(record)` is the name paging resumes after.
// `visible(record)` hides what the caller may not see; a page may then hold fewer entries than
// its size (its token still moves on).
template <typename Fetch, typename Key, typename ToJson, typename Visible>
HandlerResult CollectListing(const char* field, const Paging& paging, Fetch fetch, Key key, ToJson to_json,
                             Visible visible, const IcebergError& not_found, Json& out) {
  Json items = Json::array();
  Json next = nullptr;
  std::string start_after = paging.start_after;
  while (true) {
    const uint32_t limit = paging.paged ? paging.page_size + 1 : limits::kCatalogPageSizeMax;
    auto page = fetch(start_after, limit);
    if (!page.ok()) return ErrorFromStatus(page.status(), not_found);
    if (paging.paged) {
      for (size_t i = 0; i < page->size() && i < paging.page_size; ++i) {
        if (visible((*page)[i])) items.push_back(to_json((*page)[i]));
      }
      if (page->size() > paging.page_size) next = EncodePageToken(key((*page)[paging.page_size - 1]));
      break;
    }
    for (const auto& record : *page) {
      if (visible(record)) items.push_back(to_json(record));
    }
    if (page->size() < limit) break;
    start_after = key(page->back());
  }
  out = Json{{field, items}, {"next-page-token", next}};
  return kHandled;
}

// Parses ctx.body as a JSON object (400 BadRequestException otherwise).
HandlerResult ParseJsonObject(RequestContext& ctx, Json& out);
HandlerResult SendJson(RequestContext& ctx, const Json& body, int status = 200);
// `body`'s members and then `"name":`, ready for a member whose value is already JSON text.
std::string RawMemberHead(const Json& body, std::string_view name);
// Sends `head` (an object's text up to a member's colon, as RawMemberHead gives) followed by that
// member's JSON text (a metadata document that is cached or was just written as text) and the
// closing brace, so large documents are not rebuilt as a Json tree.
HandlerResult SendJsonAfterHead(RequestContext& ctx, std::string head, std::string_view raw_json,
                                int status = 200);
// The same with the member's JSON given in pieces (iceberg::TableMetadata::ToJsonPieces), written
// one after the other without joining them (or in one copy when small).
HandlerResult SendJsonAfterHead(RequestContext& ctx, const std::string& head,
                                const std::vector<iceberg::MetadataTextPiece>& raw_json, int status = 200);
// SendJsonAfterHead(RawMemberHead(body, name), raw_json).
HandlerResult SendJsonWithRawMember(RequestContext& ctx, const Json& body, std::string_view name,
                                    std::string_view raw_json, int status = 200);
HandlerResult SendNoContent(RequestContext& ctx);
// The S3 endpoint clients should use for data: the configured one, else scheme://Host.
std::string AdvertisedS3Endpoint(const RequestContext& ctx);
// FileIO settings for LoadTableResult/LoadViewResult "config" and the catalog config defaults.
Json StorageConfig(const RequestContext& ctx);
// The same object as JSON text, appended to `out` (for answers written without a Json tree).
void AppendStorageConfigText(const RequestContext& ctx, std::string& out);
// Every "<VERB> <template>" the service answers, for /v1/config "endpoints".
std::vector<std::string> AdvertisedEndpoints();

// ---- Metadata files as objects in the warehouse bucket (catalog_metadata_io.cc). ----

// Writes a new metadata file (never overwrites: kPreconditionFailed if it exists).
Status WriteMetadataFile(Backend& backend, const std::string& location, const std::string& json);
// The object record of a new metadata file, not yet in the index: small files are inline, larger
// ones are written (durably) to a blob first. The caller stores it, e.g. in a
// CatalogStore::CommitMetadata, or calls DiscardMetadataFileRecord when it does not.
Result<meta::ObjectRecord> MetadataFileRecord(Backend& backend, const std::string& location,
                                              const std::string& json);
void DiscardMetadataFileRecord(Backend& backend, const meta::ObjectRecord& record);
// The record of a new table metadata file given as iceberg::TableMetadata::ToJsonPieces cut it: the history
// chunks are stored once for every file that repeats them, so a commit stores and hashes only what is new.
// Its ETag is the MD5 of the pieces' MD5s followed by "-<pieces>", as S3 gives objects uploaded in parts.
// Without chunks, or when the rest would not fit the index row, it is MetadataFileRecord of the joined text.
Result<meta::ObjectRecord> TableMetadataFileRecord(Backend& backend, const std::string& location,
                                                   const std::vector<iceberg::MetadataTextPiece>& pieces);
// Removes a metadata file written by a failed attempt; errors are only logged.
void DeleteMetadataFileQuietly(Backend& backend, const std::string& location);
Result<std::string> ReadMetadataFile(Backend& backend, const std::string& location);
Result<std::shared_ptr<const iceberg::TableMetadata>> LoadTableMetadata(Backend& backend,
                                                                        const std::string& location);
Result<std::shared_ptr<const iceberg::ViewMetadata>> LoadViewMetadata(Backend& backend,
                                                                      const std::string& location);
// Deletes every object a dropped table or view owned: those below its location's key in its
// warehouse's bucket (blobs go to the GC queue). A location that owns nothing (one outside the
// warehouse, from before locations were confined) purges nothing: kValidationFailed.
Status PurgeLocation(Backend& backend, const meta::EntityRecord& dropped);
// Every object whose location starts with `prefix` ("s3://bucket/key-prefix"), for the
// unreferenced-file job (maintenance/remove_unreferenced_files.h).
Result<std::vector<maintenance::ListedFile>> ListTableFiles(Backend& backend, const std::string& prefix);
// 400 unless what the snapshots `after` adds over `before` add is the table's own: the manifests a
// new snapshot's manifest list adds, and the data and delete files those manifests add, wherever
// they are in serac's storage, must be below `owned_key`. Files that are not there (yet) are not
// looked into: every later read or delete of them is confined anyway (MakeTableFileIO).
HandlerResult RequireAddedFilesOwned(Backend& backend, std::string_view warehouse,
                                     const std::string& owned_key, std::string_view display_name,
                                     const iceberg::TableMetadata* before,
                                     const iceberg::TableMetadata& after);
// The metadata files (bucket, key) a commit from `before` to `after` drops from the history when
// write.metadata.delete-after-commit.enabled is set, and only those the table owns (below
// `owned_key` in `warehouse`): a metadata log may name any file; empty otherwise.
std::vector<std::pair<std::string, std::string>> TrimmedMetadataFiles(const iceberg::TableMetadata& before,
                                                                      const std::string& before_location,
                                                                      const iceberg::TableMetadata& after,
                                                                      std::string_view warehouse,
                                                                      std::string_view owned_key);

// ---- Handlers. ----

// catalog_config.cc / catalog_warehouses.cc
HandlerResult GetConfig(RequestContext& ctx);
// ---- Table maintenance (catalog_maintenance.cc). ----
// Server-side scan planning (catalog_scan_planning.cc).
HandlerResult PlanTableScan(RequestContext& ctx);
HandlerResult FetchPlanningResult(RequestContext& ctx);
HandlerResult CancelPlanning(RequestContext& ctx);
HandlerResult FetchScanTasks(RequestContext& ctx);
HandlerResult GetWarehouseScanPlanning(RequestContext& ctx);
HandlerResult PutWarehouseScanPlanning(RequestContext& ctx);
HandlerResult DeleteWarehouseScanPlanning(RequestContext& ctx);
// The scan planning mode a table's clients are told ("server" or "client" from the table's
// `scan-planning-mode` property, else its warehouse's setting); empty when neither says.
std::string ScanPlanningMode(RequestContext& ctx, const iceberg::TableMetadata& metadata);
// The warehouse's own setting alone (empty when it sets none), for /v1/config.
std::string WarehouseScanPlanningMode(RequestContext& ctx, const std::string& warehouse);
HandlerResult GetWarehouseMaintenance(RequestContext& ctx);
HandlerResult PutWarehouseMaintenance(RequestContext& ctx);
HandlerResult DeleteWarehouseMaintenance(RequestContext& ctx);
HandlerResult GetTableMaintenance(RequestContext& ctx);
HandlerResult PutTableMaintenance(RequestContext& ctx);
HandlerResult DeleteTableMaintenance(RequestContext& ctx);
HandlerResult GetTableMaintenanceStatus(RequestContext& ctx);
HandlerResult RunTableMaintenance(RequestContext& ctx);
HandlerResult CreateWarehouse(RequestContext& ctx);
HandlerResult ListWarehouses(RequestContext& ctx);
HandlerResult GetWarehouse(RequestContext& ctx);
HandlerResult DeleteWarehouse(RequestContext& ctx);
// Resolves the warehouse of a prefix-less request (options.default_warehouse, else the only one).
HandlerResult ResolveDefaultWarehouse(RequestContext& ctx, std::string& warehouse);
// 404 NoSuchWarehouseException unless it exists.
HandlerResult RequireWarehouse(RequestContext& ctx, const std::string& warehouse);

// catalog_namespaces.cc
HandlerResult ListNamespaces(RequestContext& ctx);
HandlerResult CreateNamespace(RequestContext& ctx);
HandlerResult LoadNamespace(RequestContext& ctx);
HandlerResult NamespaceExists(RequestContext& ctx);
HandlerResult DropNamespace(RequestContext& ctx);
HandlerResult UpdateNamespaceProperties(RequestContext& ctx);
// Lists names of one kind page by page (shared by tables and views).
HandlerResult ListEntities(RequestContext& ctx, meta::EntityKind kind);
// Reads a {"namespace": [...], "name": "..."} identifier.
HandlerResult ParseIdentifier(const Json& json, meta::NamespaceLevels& levels, std::string& name);
Json NamespaceToJson(const meta::NamespaceLevels& levels);

// catalog_tables.cc
HandlerResult CreateTable(RequestContext& ctx);
HandlerResult LoadTable(RequestContext& ctx);
HandlerResult TableExists(RequestContext& ctx);
HandlerResult DropTable(RequestContext& ctx);
HandlerResult RegisterTable(RequestContext& ctx);
// The start of RegisterTable and RegisterView: the body, its name and metadata-location, the name's
// rules, and the caller's right to register an entity of `kind` under that name.
HandlerResult ReadRegistration(RequestContext& ctx, meta::EntityKind kind, Json& body, std::string& name,
                               std::string& metadata_location);
HandlerResult ReportMetrics(RequestContext& ctx);
HandlerResult RenameTable(RequestContext& ctx);
HandlerResult RenameView(RequestContext& ctx);
// "ns.name" of the request's table or view, for messages.
std::string EntityDisplayName(const RequestContext& ctx);
// "Table" or "View", as messages name them.
const char* KindName(meta::EntityKind kind);
// Which kind holds the name of `wanted` (its own kind first), if any.
std::optional<meta::EntityKind> HolderKind(Backend& backend, const meta::EntityId& wanted);
// The 409 AlreadyExistsException for a taken name, worded as the reference server words it (Java
// clients and the conformance kit compare the text): "<Kind> already exists: ns.name" when the
// same kind holds it, "<Other kind> with same name already exists: ns.name" otherwise.
IcebergError NameTaken(Backend& backend, const meta::EntityId& wanted);
// NameTaken unless neither a table nor a view holds the name of `wanted`.
HandlerResult RequireNameFree(Backend& backend, const meta::EntityId& wanted);
// Where a new table lives: the client's location when it lies inside the warehouse bucket (below
// its root), else a fresh default location. Locations elsewhere (another bucket, file:/...) are
// overridden rather than refused, as the REST spec allows: serac stores data only in its own
// buckets, and the response tells the client where the table went. A location in the bucket that
// names no place a table can own (its root, an empty, "." or ".." segment) is a 400; one that
// overlaps another table's is refused by the store when the table is created.
HandlerResult ChooseTableLocation(std::string_view warehouse, const meta::NamespaceLevels& levels,
                                  std::string_view name, const std::optional<std::string>& requested,
                                  std::string& location);
// The quoted ETag of one rendering of one metadata file.
// The table document (with every snapshot, or only referenced ones) as loads send it, from the
// cache or serialised now and cached.
std::shared_ptr<const TableText> CachedTableText(Backend& backend, const std::string& metadata_location,
                                                 const iceberg::TableMetadata& metadata,
                                                 iceberg::SnapshotSelection selection);
// Caches the document (every snapshot) of a metadata file about to be committed, as its pieces.
// Returns the texts it pushed out, for the caller to release once it has answered.
std::vector<std::shared_ptr<const TableText>> CacheCommittedTableText(Backend& backend,
                                                                      const std::string& metadata_location,
                                                                      std::shared_ptr<const TableText> text);
// Forgets what a commit cached of a metadata file it did not commit: the parsed metadata and the
// text CacheCommittedTableText put.
void ForgetTableVersion(Backend& backend, const std::string& metadata_location);
std::string TableEtag(const std::string& metadata_location, iceberg::SnapshotSelection selection);
// LoadTableResult ({metadata-location, metadata, config}) with an ETag when the location is known,
// and vended credentials for the table's location (read-write when `vend_write`) when the request
// asks for them. The table is ctx.path's. `etag`: the location's TableEtag when the caller has
// already computed it.
HandlerResult SendTableResult(RequestContext& ctx, const std::optional<std::string>& metadata_location,
                              const iceberg::TableMetadata& metadata, bool vend_write,
                              iceberg::SnapshotSelection selection = iceberg::SnapshotSelection::kAll,
                              const std::string* etag = nullptr);
// 400 unless `location` is an object location in the warehouse bucket (the request's).
HandlerResult RequireInWarehouse(std::string_view warehouse, const std::string& location);
HandlerResult RequireInWarehouse(const RequestContext& ctx, const std::string& location);
// 400 unless the metadata file is an object below `owned_key`, its table's location key.
HandlerResult RequireOwnedMetadataFile(std::string_view warehouse, const std::string& owned_key,
                                       const std::string& file);

// catalog_commit.cc
// What caching a new version pushed out of the caches: released once the commit has answered,
// since freeing parsed documents is not the client's wait.
struct ReleasedVersions {
  std::vector<std::shared_ptr<const iceberg::TableMetadata>> tables;
  std::vector<std::shared_ptr<const TableText>> texts;
};
// The table's metadata after a commit: the current file, its document as loads send it, parsed.
struct CommittedTable {
  std::string metadata_location;
  std::shared_ptr<const TableText> text;
  std::shared_ptr<const iceberg::TableMetadata> metadata;  // null when the cache let it go already
};
// Applies `changes` to the table (a commit that finishes a staged create creates it) under its
// commit lock, retrying lost races with the requirements checked against the winner. The caller
// has authorised it. Used by the REST route and by the server's own writers (in_process_tables.h).
HandlerResult CommitTableChange(Backend& backend, const meta::EntityId& table, iceberg::TableChanges changes,
                                ReleasedVersions& released, CommittedTable& out);
HandlerResult CommitTable(RequestContext& ctx);
// in_process_catalog.cc: CatalogService::InProcessTables.
std::unique_ptr<iceberg::TableCatalog> MakeInProcessTableCatalog(Backend& backend, std::string warehouse);
HandlerResult CommitTransaction(RequestContext& ctx);

// catalog_views.cc
HandlerResult ListViews(RequestContext& ctx);
HandlerResult CreateView(RequestContext& ctx);
HandlerResult LoadView(RequestContext& ctx);
HandlerResult ViewExists(RequestContext& ctx);
HandlerResult ReplaceView(RequestContext& ctx);
HandlerResult DropView(RequestContext& ctx);
HandlerResult RegisterView(RequestContext& ctx);

}  // namespace serac::catalog
