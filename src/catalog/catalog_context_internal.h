// The catalog's shared state (Backend: stores, caches, commit locks, the job runner) and the
// per-request context every handler takes.
// Private to catalog/.
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

#include "auth/sign_in_throttle.h"
#include "catalog/catalog_rules_internal.h"
#include "catalog/catalog_service.h"
#include "common/lru_cache.h"
#include "http/http.h"
#include "iceberg/metadata/table_metadata.h"
#include "meta/catalog_store.h"
#include "meta/meta_store.h"
#include "service/front_end_stores.h"
#include "service/request_context.h"

namespace serac::catalog {
class JobRunner;  // job_runner.h
}  // namespace serac::catalog

namespace serac::catalog {

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
  // Table maintenance jobs (catalog/job_runner.h); null where the service runs none.
  std::unique_ptr<JobRunner> jobs;
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

}  // namespace serac::catalog
