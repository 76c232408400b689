// The maintenance API of AIStor Tables (S3 Tables' names and JSON): a warehouse's default settings
// per type (`/v1/warehouses/{wh}/maintenance[/{type}]`), a table's overrides and effective settings
// (`.../tables/{t}/maintenance[/{type}]`), its jobs' status and history (`.../{type}/status`), and
// serac's own `.../{type}/run`, which starts a job now. Settings are checked here
// (catalog/maintenance_settings.h) and kept in the catalog store; jobs run on the server's JobRunner.
#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "catalog/catalog_metadata_io_internal.h"
#include "catalog/catalog_responses_internal.h"
#include "catalog/catalog_routes_internal.h"
#include "catalog/catalog_tables_internal.h"
#include "catalog/catalog_warehouses_internal.h"
#include "catalog/job_lease_owner.h"
#include "catalog/job_runner.h"
#include "catalog/maintenance_settings.h"
#include "common/clock.h"
#include "common/json_reads.h"
#include "common/limits.h"

namespace serac::catalog {
namespace {

constexpr uint32_t kStatusJobsShown = 20;  // jobs a status answer lists, newest first

HandlerResult TypeFromPath(RequestContext& ctx, MaintenanceType& type) {
  auto parsed = ParseMaintenanceType(ctx.path.type);
  if (!parsed) {
    return BadRequest("unknown maintenance type \"" + ctx.path.type +
                      "\": icebergCompaction, icebergSnapshotManagement or icebergUnreferencedFileRemoval");
  }
  type = *parsed;
  return kHandled;
}

// The warehouse of a warehouse-level route ({name}) or of a table route ({warehouse}).
const std::string& RouteWarehouse(const RequestContext& ctx) {
  return ctx.path.warehouse.empty() ? ctx.path.name : ctx.path.warehouse;
}

HandlerResult StoreError(const Status& status) {
  return ErrorFromStatus(status, BadRequest(status.message()));
}

// The table's effective settings: its overrides, its Iceberg properties, the warehouse's defaults.
Result<MaintenanceSettings> EffectiveSettings(RequestContext& ctx,
                                              std::map<MaintenanceType, std::string>* overrides) {
  SERAC_ASSIGN_OR_RETURN(std::shared_ptr<const iceberg::TableMetadata> metadata,
                         LoadTableMetadata(ctx.backend, ctx.entity->metadata_location));
  return LoadTableSettings(ctx.catalog(), RouteWarehouse(ctx), ctx.entity->uuid, metadata->properties(),
                           overrides);
}

// A job recorded as running by another server of a shared catalog runs while that server holds
// its table's lease (catalog/job_lease_owner.h).
bool RunsOnAnotherServer(RequestContext& ctx, const meta::MaintenanceJobRecord& job, const Json& body) {
  auto node = body.find("node");
  if (ctx.backend.options.lease_holder.empty() || node == body.end() || !node->is_string() ||
      *node == ctx.backend.options.lease_holder) {
    return false;
  }
  Result<std::optional<meta::LeaseRecord>> lease =
      ctx.meta().GetLease(TableJobLeaseName(job.warehouse, job.table_uuid));
  return lease.ok() && lease->has_value() && (*lease)->holder == node->get<std::string>();
}

// Whether a job recorded as running still runs: on this server, or on the one holding its table's
// lease.
bool StillRunning(RequestContext& ctx, const meta::MaintenanceJobRecord& job) {
  if (ctx.backend.jobs != nullptr && ctx.backend.jobs->Active(job.id)) return true;
  Json body = Json::parse(job.json, nullptr, false);
  return body.is_object() && RunsOnAnotherServer(ctx, job, body);
}

// The record as it is now when it was read as running but no runner holds the job: it may have
// ended between the listing and the look at the runner (its final record is saved before the
// runner lets it go), and only a job whose record still says running was interrupted.
meta::MaintenanceJobRecord Settled(RequestContext& ctx, const meta::MaintenanceJobRecord& job) {
  if (job.status != "running" || StillRunning(ctx, job)) return job;
  auto again = ctx.catalog().ListMaintenanceJobs(job.warehouse, job.table_uuid, job.type, kStatusJobsShown);
  if (!again.ok()) return job;
  for (const meta::MaintenanceJobRecord& fresh : *again) {
    if (fresh.id == job.id) return fresh;
  }
  return job;
}

Json JobJson(RequestContext& ctx, const meta::MaintenanceJobRecord& listed) {
  const meta::MaintenanceJobRecord job = Settled(ctx, listed);
  Json body = Json::parse(job.json, nullptr, false);
  if (!body.is_object()) body = Json::object();
  body["jobId"] = job.id;
  body["type"] = job.type;
  body["startedAt"] = FormatIso8601(FromUnixMillis(job.started_ms));
  std::string status = job.status;
  if (status == "running" && !StillRunning(ctx, job)) {
    // No runner holds it: the server stopped while it ran (its commit, if any, is whole).
    status = "failed";
    body["error"] = "interrupted: the server stopped while the job ran";
  }
  body["status"] = status;
  if (job.ended_ms != 0) body["endedAt"] = FormatIso8601(FromUnixMillis(job.ended_ms));
  return body;
}

HandlerResult RequireTable(RequestContext& ctx) {
  if (!ctx.entity) return NoSuchTable(EntityDisplayName(ctx));
  return kHandled;
}

}  // namespace

// ---- warehouse defaults ----

HandlerResult GetWarehouseMaintenance(RequestContext& ctx) {
  if (auto error = RequireWarehouse(ctx, ctx.path.name)) return error;
  auto layer = LoadSettingLayer(ctx.catalog(), ctx.path.name, "");
  if (!layer.ok()) return StoreError(layer.status());
  Json configuration = Json::object();
  for (const auto& [type, text] : *layer) {
    configuration[std::string(MaintenanceTypeName(type))] = Json::parse(text, nullptr, false);
  }
  return SendJson(ctx, {{"warehouse", ctx.path.name}, {"configuration", configuration}});
}

HandlerResult PutWarehouseMaintenance(RequestContext& ctx) {
  MaintenanceType type;
  if (auto error = TypeFromPath(ctx, type)) return error;
  if (auto error = RequireWarehouse(ctx, ctx.path.name)) return error;
  auto checked = CheckSettingJson(type, ctx.body);
  if (!checked.ok()) return BadRequest(checked.status().message());
  meta::MaintenanceSetting setting{ctx.path.name, "", ctx.path.type, *checked, ToUnixMillis(Now())};
  if (Status put = ctx.catalog().PutMaintenanceSetting(setting); !put.ok()) return StoreError(put);
  return SendNoContent(ctx);
}

HandlerResult DeleteWarehouseMaintenance(RequestContext& ctx) {
  MaintenanceType type;
  if (auto error = TypeFromPath(ctx, type)) return error;
  if (auto error = RequireWarehouse(ctx, ctx.path.name)) return error;
  Status deleted = ctx.catalog().DeleteMaintenanceSetting(ctx.path.name, "", ctx.path.type);
  if (!deleted.ok() && deleted.code() != ErrorCode::kNotFound) return StoreError(deleted);
  return SendNoContent(ctx);
}

// ---- tables ----

HandlerResult GetTableMaintenance(RequestContext& ctx) {
  if (auto error = RequireTable(ctx)) return error;
  std::map<MaintenanceType, std::string> overrides;
  auto settings = EffectiveSettings(ctx, &overrides);
  if (!settings.ok()) return StoreError(settings.status());
  Json configuration = Json::object();
  Json overridden = Json::object();
  for (MaintenanceType type : kMaintenanceTypes) {
    const std::string name(MaintenanceTypeName(type));
    if (!ctx.path.type.empty() && ctx.path.type != name) continue;
    configuration[name] = Json::parse(EffectiveSettingJson(type, *settings));
    if (auto it = overrides.find(type); it != overrides.end()) overridden[name] = Json::parse(it->second);
  }
  if (!ctx.path.type.empty()) {
    MaintenanceType type;
    if (auto error = TypeFromPath(ctx, type)) return error;
  }
  return SendJson(ctx, {{"tableARN", auth::TablesTableArn(RouteWarehouse(ctx), ctx.entity->uuid)},
                        {"configuration", configuration},
                        {"overrides", overridden}});
}

HandlerResult PutTableMaintenance(RequestContext& ctx) {
  if (auto error = RequireTable(ctx)) return error;
  MaintenanceType type;
  if (auto error = TypeFromPath(ctx, type)) return error;
  auto checked = CheckSettingJson(type, ctx.body);
  if (!checked.ok()) return BadRequest(checked.status().message());
  meta::MaintenanceSetting setting{RouteWarehouse(ctx), ctx.entity->uuid, ctx.path.type, *checked,
                                   ToUnixMillis(Now())};
  if (Status put = ctx.catalog().PutMaintenanceSetting(setting); !put.ok()) return StoreError(put);
  return SendNoContent(ctx);
}

HandlerResult DeleteTableMaintenance(RequestContext& ctx) {
  if (auto error = RequireTable(ctx)) return error;
  MaintenanceType type;
  if (auto error = TypeFromPath(ctx, type)) return error;
  Status deleted =
      ctx.catalog().DeleteMaintenanceSetting(RouteWarehouse(ctx), ctx.entity->uuid, ctx.path.type);
  if (!deleted.ok() && deleted.code() != ErrorCode::kNotFound) return StoreError(deleted);
  return SendNoContent(ctx);
}

HandlerResult GetTableMaintenanceStatus(RequestContext& ctx) {
  if (auto error = RequireTable(ctx)) return error;
  MaintenanceType type;
  if (auto error = TypeFromPath(ctx, type)) return error;
  auto settings = EffectiveSettings(ctx, nullptr);
  if (!settings.ok()) return StoreError(settings.status());
  auto jobs = ctx.catalog().ListMaintenanceJobs(RouteWarehouse(ctx), ctx.entity->uuid, ctx.path.type,
                                                kStatusJobsShown);
  if (!jobs.ok()) return StoreError(jobs.status());
  Json history = Json::array();
  for (const meta::MaintenanceJobRecord& job : *jobs) history.push_back(JobJson(ctx, job));
  const bool enabled = Json::parse(EffectiveSettingJson(type, *settings))["status"] == "enabled";
  // S3 Tables' status words: Not_Yet_Run, Successful, Failed, Disabled (and serac's Running).
  Json status = {{"status", !enabled                              ? "Disabled"
                            : history.empty()                     ? "Not_Yet_Run"
                            : history[0]["status"] == "running"   ? "Running"
                            : history[0]["status"] == "succeeded" ? "Successful"
                                                                  : "Failed"}};
  if (!history.empty()) {
    status["lastRunTimestamp"] = history[0]["startedAt"];
    if (history[0].contains("error")) status["failureMessage"] = history[0]["error"];
  }
  return SendJson(ctx, {{"tableARN", auth::TablesTableArn(RouteWarehouse(ctx), ctx.entity->uuid)},
                        {"status", {{ctx.path.type, status}}},
                        {"jobs", history}});
}

// The fields of a run's body, each checked: a field another type takes, a malformed value, or a
// snapshot id the table does not have or a ref still points at is a 400 (404) naming it, before a
// job starts.
HandlerResult ParseRunOptions(RequestContext& ctx, MaintenanceType type, const Json& body,
                              JobRunner::RunOptions& options) {
  const bool expiry = type == MaintenanceType::kSnapshotManagement;
  const bool unreferenced = type == MaintenanceType::kUnreferencedFileRemoval;
  const std::string takes = expiry ? "olderThanSeconds, olderThanTimestampMs, retainLast and snapshotIds"
                            : unreferenced ? "olderThanSeconds"
                                           : "no fields";
  for (const auto& [key, value] : body.items()) {
    const bool known = key == "olderThanSeconds" ? expiry || unreferenced
                       : key == "olderThanTimestampMs" || key == "retainLast" || key == "snapshotIds" ? expiry
                                                                                                      : false;
    if (!known)
      return BadRequest(key + ": not a field of a " + ctx.path.type + " run (it takes " + takes + ")");
    if (key == "olderThanSeconds") {
      if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
          value.get<int64_t>() > limits::kMaintenanceRunAgeSecondsMax) {
        return BadRequest("olderThanSeconds: must be a whole number of seconds from 0 to " +
                          std::to_string(limits::kMaintenanceRunAgeSecondsMax));
      }
      (expiry ? options.snapshots_older_than_ms : options.files_older_than_ms) = value.get<int64_t>() * 1000;
    } else if (key == "olderThanTimestampMs") {
      if (!value.is_number_integer() || value.get<int64_t>() < 0) {
        return BadRequest("olderThanTimestampMs: must be milliseconds since 1970-01-01T00:00:00Z");
      }
      // As an age from now, so that the job and the settings speak alike.
      options.snapshots_older_than_ms = ToUnixMillis(Now()) - value.get<int64_t>();
    } else if (key == "retainLast") {
      if (!value.is_number_integer() || value.get<int64_t>() < 1 ||
          value.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
        return BadRequest(
            "retainLast: must be a whole number, 1 or more (each branch keeps its newest snapshots)");
      }
      options.retain_last = static_cast<int32_t>(value.get<int64_t>());
    } else {
      if (!value.is_array() || value.size() > limits::kCatalogUpdatesPerCommitMax) {
        return BadRequest("snapshotIds: must be an array of at most " +
                          std::to_string(limits::kCatalogUpdatesPerCommitMax) + " snapshot ids");
      }
      for (const Json& id : value) {
        if (!id.is_number_integer()) return BadRequest("snapshotIds: " + id.dump() + " is not a snapshot id");
        options.snapshot_ids.push_back(id.get<int64_t>());
      }
    }
  }
  if (body.contains("olderThanSeconds") && body.contains("olderThanTimestampMs")) {
    return BadRequest("olderThanSeconds and olderThanTimestampMs: give one of them");
  }
  if (options.snapshot_ids.empty()) return kHandled;
  auto metadata = LoadTableMetadata(ctx.backend, ctx.entity->metadata_location);
  if (!metadata.ok()) return StoreError(metadata.status());
  const auto refs = (*metadata)->Refs();
  for (int64_t id : options.snapshot_ids) {
    if (!(*metadata)->FindSnapshot(id)) {
      return MakeError(404, "NoSuchSnapshotException",
                       "snapshotIds: the table has no snapshot " + std::to_string(id));
    }
    for (const auto& [name, ref] : refs) {
      if (ref.snapshot_id == id) {
        return BadRequest("snapshotIds: snapshot " + std::to_string(id) + " is the head of " +
                          (ref.type == iceberg::RefType::kBranch ? "branch " : "tag ") + name +
                          ", which keeps it");
      }
    }
  }
  return kHandled;
}

HandlerResult RunTableMaintenance(RequestContext& ctx) {
  if (auto error = RequireTable(ctx)) return error;
  MaintenanceType type;
  if (auto error = TypeFromPath(ctx, type)) return error;
  if (ctx.backend.jobs == nullptr) return MakeError(503, "ServiceUnavailableException", "no job runner");
  auto settings = EffectiveSettings(ctx, nullptr);
  if (!settings.ok()) return StoreError(settings.status());
  JobRunner::Target target;
  target.warehouse = RouteWarehouse(ctx);
  target.table_uuid = ctx.entity->uuid;
  target.table.namespace_levels = ctx.entity->levels;
  target.table.name = ctx.entity->name;
  // serac's own, as Spark's procedures take them: an unreferenced-file removal's
  // {"olderThanSeconds": N}; a snapshot expiry's {"olderThanSeconds": N} or
  // {"olderThanTimestampMs": T}, {"retainLast": N} and {"snapshotIds": [...]}.
  JobRunner::RunOptions options;
  if (!ctx.body.empty()) {
    Json body;
    if (auto error = ParseJsonObject(ctx, body)) return error;
    if (auto error = ParseRunOptions(ctx, type, body, options)) return error;
  }
  auto id = ctx.backend.jobs->Start(target, type, *settings, std::move(options));
  if (!id.ok()) {
    if (id.status().code() == ErrorCode::kConflict) {
      return MakeError(409, "CommitFailedException", id.status().message());
    }
    if (id.status().code() == ErrorCode::kNotImplemented) {
      return MakeError(501, "NotImplementedException", id.status().message());
    }
    return StoreError(id.status());
  }
  return SendJson(ctx, {{"jobId", *id}, {"type", ctx.path.type}, {"status", "running"}}, 202);
}

}  // namespace serac::catalog
