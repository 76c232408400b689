// `serac warehouse maintenance set|show` and `serac table maintenance set|show|run|status`: the
// maintenance API (catalog/catalog_maintenance.cc) from the command line. `run` starts a job and
// waits for it, with a running line on a terminal.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "cli/client_commands_internal.h"
#include "cli/text_table.h"
#include "client/api_client.h"
#include "client/catalog_requests.h"
#include "common/limits.h"
#include "iceberg/expression/expression.h"

namespace serac::cli {
namespace {

using Json = nlohmann::json;
using State = CommandState;

constexpr const char* kTypes[] = {"icebergCompaction", "icebergSnapshotManagement",
                                  "icebergUnreferencedFileRemoval"};
constexpr auto kStatusPollInterval = std::chrono::milliseconds(250);

Result<Json> Call(const State& state, const client::ApiRequest& request) {
  SERAC_ASSIGN_OR_RETURN(std::string body, client::ApiClient(state.connection).Call(request));
  if (body.empty()) return Json::object();
  Json parsed = Json::parse(body, nullptr, false);
  if (parsed.is_discarded()) return Error(ErrorCode::kInternal, "server sent a response that is not JSON");
  return parsed;
}

// The value the flags describe: {"status": ..., "settings": {TYPE: {...}}}; a flag of another type
// is refused, naming it.
Result<std::string> ValueFromFlags(const State& state) {
  const std::string& type = state.maintenance_type;
  Json inner = Json::object();
  struct Flag {
    const char* flag;
    const char* field;
    const char* type;
    int64_t value;
  };
  const Flag flags[] = {
      {"--target-file-size-mb", "targetFileSizeMB", "icebergCompaction", state.target_file_size_mb},
      {"--min-snapshots", "minSnapshotsToKeep", "icebergSnapshotManagement", state.min_snapshots},
      {"--max-age-hours", "maxSnapshotAgeHours", "icebergSnapshotManagement", state.max_age_hours},
      {"--unreferenced-days", "unreferencedDays", "icebergUnreferencedFileRemoval", state.unreferenced_days},
      {"--noncurrent-days", "nonCurrentDays", "icebergUnreferencedFileRemoval", state.noncurrent_days},
  };
  for (const Flag& flag : flags) {
    if (flag.value == 0) continue;
    if (type != flag.type) {
      return Error(ErrorCode::kInvalidArgument,
                   std::string(flag.flag) + " is a setting of " + flag.type + ", not of " + type);
    }
    inner[flag.field] = flag.value;
  }
  if (!state.strategy.empty()) {
    if (type != "icebergCompaction") {
      return Error(ErrorCode::kInvalidArgument,
                   "--strategy is a setting of icebergCompaction, not of " + type);
    }
    inner["strategy"] = state.strategy;
  }
  Json value = Json::object();
  if (!state.maintenance_status.empty()) value["status"] = state.maintenance_status;
  if (!inner.empty()) value["settings"][type] = inner;
  if (value.empty()) {
    return Error(ErrorCode::kInvalidArgument, "nothing to set: give --status or a setting of " + type);
  }
  return value.dump();
}

// "minSnapshotsToKeep=1 maxSnapshotAgeHours=120" from a value's inner settings.
std::string SettingsText(const Json& value, const std::string& type) {
  std::string text;
  auto settings = value.find("settings");
  if (settings == value.end() || !settings->is_object() || !settings->contains(type)) return text;
  for (const auto& [field, setting] : (*settings)[type].items()) {
    if (!text.empty()) text += " ";
    text += field + "=" + (setting.is_string() ? setting.get<std::string>() : setting.dump());
  }
  return text;
}

std::string StatusOf(const Json& value) {
  return value.is_object() && value.contains("status") && value["status"].is_string()
             ? value["status"].get<std::string>()
             : "";
}

Result<client::NamespaceLevels> Levels(const State& state) { return client::ParseNamespace(state.ns); }

Status SetWarehouseMaintenance(const State& state) {
  SERAC_ASSIGN_OR_RETURN(std::string value, ValueFromFlags(state));
  SERAC_ASSIGN_OR_RETURN(Json reply, Call(state, client::PutWarehouseMaintenanceRequest(
                                                     state.name, state.maintenance_type, std::move(value))));
  Print("Set " + state.maintenance_type + " of warehouse " + state.name);
  return Status::Ok();
}

Status ShowWarehouseMaintenance(const State& state) {
  SERAC_ASSIGN_OR_RETURN(Json reply, Call(state, client::WarehouseMaintenanceRequest(state.name)));
  if (state.json_output) {
    Print(reply.dump(2));
    return Status::Ok();
  }
  std::vector<std::vector<std::string>> rows;
  const Json& configuration = reply.contains("configuration") ? reply["configuration"] : Json::object();
  for (const char* type : kTypes) {
    if (!configuration.contains(type)) {
      rows.push_back({type, "-", "(defaults)"});
      continue;
    }
    const Json& value = configuration[type];
    rows.push_back({type, StatusOf(value).empty() ? "-" : StatusOf(value), SettingsText(value, type)});
  }
  Print(FormatTable({"TYPE", "STATUS", "SETTINGS"}, rows));
  return Status::Ok();
}

Status SetTableMaintenance(const State& state) {
  SERAC_ASSIGN_OR_RETURN(client::NamespaceLevels levels, Levels(state));
  SERAC_ASSIGN_OR_RETURN(std::string value, ValueFromFlags(state));
  SERAC_ASSIGN_OR_RETURN(
      Json reply, Call(state, client::PutTableMaintenanceRequest(state.warehouse, levels, state.name,
                                                                 state.maintenance_type, std::move(value))));
  Print("Set " + state.maintenance_type + " of " + state.ns + "." + state.name);
  return Status::Ok();
}

Status ShowTableMaintenance(const State& state) {
  SERAC_ASSIGN_OR_RETURN(client::NamespaceLevels levels, Levels(state));
  SERAC_ASSIGN_OR_RETURN(Json reply,
                         Call(state, client::TableMaintenanceRequest(state.warehouse, levels, state.name,
                                                                     state.maintenance_type)));
  if (state.json_output) {
    Print(reply.dump(2));
    return Status::Ok();
  }
  std::vector<std::vector<std::string>> rows;
  const Json& configuration = reply.contains("configuration") ? reply["configuration"] : Json::object();
  const Json& overrides = reply.contains("overrides") ? reply["overrides"] : Json::object();
  for (const auto& [type, value] : configuration.items()) {
    rows.push_back({type, StatusOf(value), SettingsText(value, type),
                    overrides.contains(type) ? "table override" : "warehouse, table properties, defaults"});
  }
  Print(FormatTable({"TYPE", "STATUS", "SETTINGS", "FROM"}, rows));
  return Status::Ok();
}

// One job as a line: "icebergSnapshotManagement succeeded 2026-...: snapshotsRemoved=3 ...".
std::string JobLine(const Json& job) {
  std::string line =
      (job.value("type", "") + " " + job.value("status", "") + " " + job.value("startedAt", ""));
  std::string figures;
  for (const char* name : {"snapshotsRemoved", "filesRead", "bytesRead", "filesWritten", "bytesWritten",
                           "rowsDeleted", "filesListed", "filesKeptYoung", "filesRemoved", "bytesRemoved"}) {
    if (job.contains(name) && job[name].is_number()) {
      figures += std::string(figures.empty() ? "" : " ") + name + "=" + job[name].dump();
    }
  }
  if (!figures.empty()) line += ": " + figures;
  if (job.contains("error") && job["error"].is_string()) line += ": " + job["error"].get<std::string>();
  return line;
}

Status TableMaintenanceStatus(const State& state) {
  SERAC_ASSIGN_OR_RETURN(client::NamespaceLevels levels, Levels(state));
  SERAC_ASSIGN_OR_RETURN(
      Json reply, Call(state, client::TableMaintenanceStatusRequest(state.warehouse, levels, state.name,
                                                                    state.maintenance_type)));
  if (state.json_output) {
    Print(reply.dump(2));
    return Status::Ok();
  }
  const Json& status = reply["status"][state.maintenance_type];
  Print(state.maintenance_type + ": " + status.value("status", ""));
  if (reply.contains("jobs")) {
    for (const Json& job : reply["jobs"]) Print("  " + JobLine(job));
  }
  return Status::Ok();
}

// Starts a job of `type` with `body` (the run's options) and, unless --no-wait, waits for it with a
// running line on a terminal and prints its figures.
Status RunAndWait(const State& state, const std::string& type, const Json& body) {
  SERAC_ASSIGN_OR_RETURN(client::NamespaceLevels levels, Levels(state));
  SERAC_ASSIGN_OR_RETURN(
      Json started, Call(state, client::RunTableMaintenanceRequest(state.warehouse, levels, state.name, type,
                                                                   body.dump())));
  const int64_t job_id = started.value("jobId", int64_t{0});
  if (state.no_wait) {
    Print("Started " + type + " job " + std::to_string(job_id));
    return Status::Ok();
  }
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  const auto start = std::chrono::steady_clock::now();
  static constexpr const char* kSpinner[] = {"|", "/", "-", "\\"};
  for (uint64_t tick = 0;; ++tick) {
    SERAC_ASSIGN_OR_RETURN(Json reply, Call(state, client::TableMaintenanceStatusRequest(
                                                       state.warehouse, levels, state.name, type)));
    std::optional<Json> job;
    const Json jobs = reply.value("jobs", Json::array());
    for (const Json& candidate : jobs) {
      if (candidate.value("jobId", int64_t{-1}) == job_id) job = candidate;
    }
    if (!job)
      return Error(ErrorCode::kNotFound, "job " + std::to_string(job_id) + " is not in the table's history");
    const std::string status = job->value("status", "");
    if (status != "running") {
      if (terminal) std::fputs("\r\033[K", stderr);
      Print(JobLine(*job));
      if (status == "succeeded") return Status::Ok();
      return Error(ErrorCode::kInternal, "the " + type + " job failed");
    }
    if (terminal) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(stderr, "\r%s %s on %s.%s: running %.1f s", kSpinner[tick % 4], type.c_str(),
                   state.ns.c_str(), state.name.c_str(), seconds);
      std::fflush(stderr);
    }
    std::this_thread::sleep_for(kStatusPollInterval);
  }
}

Status RunTableMaintenance(const State& state) {
  Json body = Json::object();
  if (state.older_than_seconds >= 0) body["olderThanSeconds"] = state.older_than_seconds;
  return RunAndWait(state, state.maintenance_type, body);
}

// "36h", "90m", "7d", "3600s" as seconds; nullopt for anything else.
std::optional<int64_t> AgeSeconds(const std::string& text) {
  if (text.size() < 2) return std::nullopt;
  int64_t unit = 0;
  switch (text.back()) {
    case 's':
      unit = 1;
      break;
    case 'm':
      unit = 60;
      break;
    case 'h':
      unit = 3600;
      break;
    case 'd':
      unit = 86400;
      break;
    default:
      return std::nullopt;
  }
  int64_t count = 0;
  const char* end = text.data() + text.size() - 1;
  auto [stop, error] = std::from_chars(text.data(), end, count);
  if (error != std::errc() || stop != end || count < 0 ||
      count > limits::kMaintenanceRunAgeSecondsMax / unit) {
    return std::nullopt;
  }
  return count * unit;
}

Status ExpireTableSnapshots(const State& state) {
  Json body = Json::object();
  if (!state.older_than.empty()) {
    if (std::optional<int64_t> age = AgeSeconds(state.older_than)) {
      body["olderThanSeconds"] = *age;
    } else {
      // A timestamp, read as a filter reads one (UTC unless it says otherwise).
      iceberg::NestedField field;
      field.name = "--older-than";
      field.type.id = iceberg::TypeId::kTimestampTz;
      Result<iceberg::Datum> micros = iceberg::ConvertLiteral(
          iceberg::ExprLiteral{iceberg::ExprLiteral::Kind::kString, state.older_than}, field, field.name);
      if (!micros.ok()) {
        return Error(ErrorCode::kInvalidArgument,
                     "--older-than " + state.older_than +
                         ": not a timestamp (2026-12-01T00:00:00Z, 2026-12-01) or an age (90m, 36h, 7d)");
      }
      body["olderThanTimestampMs"] = std::get<int64_t>(*micros) / 1000;
    }
  }
  if (state.retain_last > 0) body["retainLast"] = state.retain_last;
  if (!state.snapshot_ids.empty()) body["snapshotIds"] = state.snapshot_ids;
  return RunAndWait(state, "icebergSnapshotManagement", body);
}

void AddTypeOption(CLI::App* leaf, State& state, bool required) {
  CLI::Option* option = leaf->add_option("--type", state.maintenance_type,
                                         "icebergCompaction, icebergSnapshotManagement or "
                                         "icebergUnreferencedFileRemoval")
                            ->check(CLI::IsMember({kTypes[0], kTypes[1], kTypes[2]}));
  if (required) option->required();
}

void AddSettingOptions(CLI::App* leaf, State& state) {
  leaf->add_option("--status", state.maintenance_status, "enabled or disabled")
      ->check(CLI::IsMember({"enabled", "disabled"}));
  leaf->add_option("--target-file-size-mb", state.target_file_size_mb, "icebergCompaction: target file size")
      ->check(CLI::PositiveNumber);
  leaf->add_option("--strategy", state.strategy, "icebergCompaction: auto, binpack or sort")
      ->check(CLI::IsMember({"auto", "binpack", "sort"}));
  leaf->add_option("--min-snapshots", state.min_snapshots, "icebergSnapshotManagement: snapshots always kept")
      ->check(CLI::PositiveNumber);
  leaf->add_option("--max-age-hours", state.max_age_hours,
                   "icebergSnapshotManagement: older snapshots expire (beyond the minimum)")
      ->check(CLI::PositiveNumber);
  leaf->add_option("--unreferenced-days", state.unreferenced_days,
                   "icebergUnreferencedFileRemoval: age of unreferenced files removed")
      ->check(CLI::PositiveNumber);
  leaf->add_option("--noncurrent-days", state.noncurrent_days,
                   "icebergUnreferencedFileRemoval: age of non-current files removed")
      ->check(CLI::PositiveNumber);
}

void AddTableArguments(CLI::App* leaf, State& state) {
  leaf->add_option("WAREHOUSE", state.warehouse)->required();
  leaf->add_option("NS", state.ns)->required();
  leaf->add_option("TABLE", state.name)->required();
}

}  // namespace

void RegisterMaintenanceCommands(CLI::App& warehouse, CLI::App& table, CommandState& state) {
  CLI::App* warehouse_group =
      AddGroup(warehouse, "maintenance", "A warehouse's default maintenance settings", state);
  CLI::App* set =
      AddLeaf(warehouse_group, "set", "Set one maintenance type's defaults for the warehouse's tables", state,
              SetWarehouseMaintenance);
  set->add_option("WAREHOUSE", state.name)->required();
  AddTypeOption(set, state, true);
  AddSettingOptions(set, state);
  CLI::App* show = AddLeaf(warehouse_group, "show", "Print the warehouse's maintenance defaults", state,
                           ShowWarehouseMaintenance);
  show->add_option("WAREHOUSE", state.name)->required();
  show->add_flag("--json", state.json_output, "Print the API's JSON");

  CLI::App* table_group =
      AddGroup(table, "maintenance", "A table's maintenance: settings, jobs, history", state);
  CLI::App* table_set = AddLeaf(table_group, "set", "Override one maintenance type's settings for the table",
                                state, SetTableMaintenance);
  AddTableArguments(table_set, state);
  AddTypeOption(table_set, state, true);
  AddSettingOptions(table_set, state);
  CLI::App* table_show = AddLeaf(table_group, "show", "Print the table's effective maintenance settings",
                                 state, ShowTableMaintenance);
  AddTableArguments(table_show, state);
  AddTypeOption(table_show, state, false);
  table_show->add_flag("--json", state.json_output, "Print the API's JSON");
  CLI::App* run =
      AddLeaf(table_group, "run", "Run a maintenance job now and wait for it", state, RunTableMaintenance);
  AddTableArguments(run, state);
  AddTypeOption(run, state, true);
  run->add_flag("--no-wait", state.no_wait, "Start the job and return");
  run->add_option("--older-than-seconds", state.older_than_seconds,
                  "icebergUnreferencedFileRemoval: remove unreferenced files older than this instead of the "
                  "settings' days")
      ->check(CLI::NonNegativeNumber);
  CLI::App* expire =
      AddLeaf(&table, "expire-snapshots",
              "Expire snapshots now (as Spark's expire_snapshots): those older than --older-than "
              "beyond each branch's newest --retain-last, and any --snapshot-id; refs' heads stay, "
              "and only files no remaining snapshot reaches are deleted",
              state, ExpireTableSnapshots);
  AddTableArguments(expire, state);
  expire->add_option(
      "--older-than", state.older_than,
      "A timestamp (2026-12-01T00:00:00Z; UTC unless it has an offset) or an age (90m, 36h, 7d); "
      "default: the table's icebergSnapshotManagement settings");
  expire->add_option("--retain-last", state.retain_last, "Snapshots each branch keeps whatever their age")
      ->check(CLI::PositiveNumber);
  expire->add_option("--snapshot-id", state.snapshot_ids,
                     "A snapshot to expire whatever its age (repeatable)");
  expire->add_flag("--no-wait", state.no_wait, "Start the job and return");
  CLI::App* status = AddLeaf(table_group, "status", "Print a maintenance type's status and job history",
                             state, TableMaintenanceStatus);
  AddTableArguments(status, state);
  AddTypeOption(status, state, true);
  status->add_flag("--json", state.json_output, "Print the API's JSON");
}

}  // namespace serac::cli
