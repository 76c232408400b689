// Server-side scan planning, as the REST spec's PlanTableScan, FetchPlanningResult,
// CancelPlanning and FetchScanTasks serve it and Java's RESTTableScan reads it. Every plan is made
// while the POST waits (status "completed"): a small one answers with its file scan tasks, a large
// one with plan tasks, each a run of whole data manifests. A plan task is self-contained — the
// request, the table, the snapshot pinned and the manifests, as base64 JSON — so it fetches from
// any server process, after a restart, and after its plan id is forgotten. Files and delete files
// are written as Java's ContentFileParser writes them (typed partition values and column metrics in
// the single-value JSON form), residuals as Java's ExpressionParser.
//
// The mode clients are told (`scan-planning-mode` in a table's load config and the warehouse's
// `/v1/config` overrides) comes from the table's `scan-planning-mode` property, else the
// warehouse's setting under `/v1/warehouses/{name}/scan-planning`.
#include <cmath>

#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "catalog/catalog_metadata_io_internal.h"
#include "catalog/catalog_responses_internal.h"
#include "catalog/catalog_routes_internal.h"
#include "catalog/catalog_rules_internal.h"
#include "catalog/catalog_tables_internal.h"
#include "catalog/catalog_warehouses_internal.h"
#include "catalog/in_process_tables.h"
#include "common/encoding.h"
#include "common/json_reads.h"
#include "common/limits.h"
#include "common/random.h"
#include "iceberg/expression/expression.h"
#include "iceberg/scan/scan_planning.h"
#include "iceberg/schema/partition.h"

namespace serac::catalog {

// ---- ScanPlanningState ----

namespace {

uint64_t PlanBytes(const std::string& plan_id, const ScanPlanningState::PlanRecord& record) {
  uint64_t bytes = plan_id.size() + record.table_uuid.size() + 128;  // list and map nodes
  for (const std::string& task : record.plan_tasks) bytes += task.size() + sizeof(std::string);
  return bytes;
}

}  // namespace

void ScanPlanningState::Remember(const std::string& plan_id, PlanRecord record) {
  std::lock_guard lock(mutex_);
  if (auto existing = plans_.find(plan_id); existing != plans_.end()) {
    bytes_ -= PlanBytes(plan_id, existing->second.first);
    order_.erase(existing->second.second);
    plans_.erase(existing);
  }
  const uint64_t bytes = PlanBytes(plan_id, record);
  if (bytes > limits::kScanPlansBytesMax)
    return;  // its tasks still fetch; only GET of the plan id forgets it
  order_.push_back(plan_id);
  plans_[plan_id] = {std::move(record), std::prev(order_.end())};
  bytes_ += bytes;
  while (plans_.size() > limits::kScanPlansKept || bytes_ > limits::kScanPlansBytesMax) {
    auto oldest = plans_.find(order_.front());
    bytes_ -= PlanBytes(oldest->first, oldest->second.first);
    plans_.erase(oldest);
    order_.pop_front();
  }
}

std::optional<ScanPlanningState::PlanRecord> ScanPlanningState::Find(const std::string& plan_id) {
  std::lock_guard lock(mutex_);
  auto it = plans_.find(plan_id);
  if (it == plans_.end()) return std::nullopt;
  return it->second.first;
}

bool ScanPlanningState::Forget(const std::string& plan_id) {
  std::lock_guard lock(mutex_);
  auto it = plans_.find(plan_id);
  if (it == plans_.end()) return false;
  bytes_ -= PlanBytes(it->first, it->second.first);
  order_.erase(it->second.second);
  plans_.erase(it);
  return true;
}

std::optional<std::string> ScanPlanningState::CachedWarehouseMode(const std::string& warehouse) {
  std::lock_guard lock(mutex_);
  auto it = warehouse_modes_.find(warehouse);
  if (it == warehouse_modes_.end()) return std::nullopt;
  return it->second;
}

void ScanPlanningState::CacheWarehouseMode(const std::string& warehouse, std::string mode) {
  std::lock_guard lock(mutex_);
  warehouse_modes_[warehouse] = std::move(mode);
}

namespace {

using iceberg::BoundExpression;
using iceberg::DataFile;
using iceberg::Datum;
using iceberg::ExprOp;
using iceberg::Type;
using iceberg::TypeId;

constexpr const char* kScanPlanningSetting = "scanPlanning";  // its type in the settings store
constexpr const char* kPlanTaskPrefix = "serac-plan-task-1:";

IcebergError NoSuchPlanId(const std::string& plan_id) {
  return MakeError(404, "NoSuchPlanIdException", "Plan does not exist: " + plan_id);
}
IcebergError NoSuchPlanTask(const std::string& why) {
  return MakeError(404, "NoSuchPlanTaskException", "Plan task does not exist: " + why);
}

HandlerResult RequireTable(RequestContext& ctx) {
  if (!ctx.entity) return NoSuchTable(EntityDisplayName(ctx));
  return kHandled;
}

bool IsPlanningMode(std::string_view mode) { return mode == "server" || mode == "client"; }

// ---- the single-value JSON form (Java's SingleValueParser) ----

std::string UpperHex(std::string_view bytes) {
  std::string hex = HexEncode(bytes);
  for (char& c : hex) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return hex;
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

std::string NanosTimestampText(int64_t nanos, bool with_zone) {
  constexpr int64_t kNanosPerDay = 86'400'000'000'000;
  const int64_t days = FloorDiv(nanos, kNanosPerDay);
  const int64_t of_day = nanos - days * kNanosPerDay;
  char time[32];
  std::snprintf(
      time, sizeof(time), "T%02lld:%02lld:%02lld.%09lld", static_cast<long long>(of_day / 3'600'000'000'000),
      static_cast<long long>(of_day / 60'000'000'000 % 60),
      static_cast<long long>(of_day / 1'000'000'000 % 60), static_cast<long long>(of_day % 1'000'000'000));
  return iceberg::DatumToText(Type{TypeId::kDate}, Datum(static_cast<int32_t>(days))) + time +
         (with_zone ? "+00:00" : "");
}

Json SingleValueJson(const Type& type, const Datum& value) {
  if (iceberg::IsNull(value)) return nullptr;
  switch (type.id) {
    case TypeId::kDate:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kDecimal:
    case TypeId::kUuid:
      return iceberg::DatumToText(type, value);
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      return NanosTimestampText(std::get<int64_t>(value), type.id == TypeId::kTimestampTzNs);
    case TypeId::kBinary:
    case TypeId::kFixed:
      return UpperHex(std::get<std::string>(value));
    default:
      break;
  }
  if (const auto* b = std::get_if<bool>(&value)) return *b;
  if (const auto* i = std::get_if<int32_t>(&value)) return *i;
  if (const auto* l = std::get_if<int64_t>(&value)) return *l;
  if (const auto* f = std::get_if<float>(&value)) return std::isfinite(*f) ? Json(*f) : Json(nullptr);
  if (const auto* d = std::get_if<double>(&value)) return std::isfinite(*d) ? Json(*d) : Json(nullptr);
  return std::get<std::string>(value);
}

// A value whose type is unknown (a partition field whose source column left the schema): by the
// value's own kind.
Json UntypedValueJson(const Datum& value) {
  if (iceberg::IsNull(value)) return nullptr;
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  return std::visit(
      [](const auto& v) -> Json {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_floating_point_v<V>) {
          return std::isfinite(v) ? Json(v) : Json(nullptr);
        } else {
          return v;
        }
      },
      value);
}

Json CountsJson(const iceberg::ColumnCounts& counts, const std::vector<int32_t>* keep) {
  Json keys = Json::array(), values = Json::array();
  for (const auto& [id, count] : counts) {
    if (keep && std::find(keep->begin(), keep->end(), id) == keep->end()) continue;
    keys.push_back(id);
    values.push_back(count);
  }
  return {{"keys", std::move(keys)}, {"values", std::move(values)}};
}

Json BoundsJson(const iceberg::ColumnBounds& bounds, const std::vector<int32_t>* keep) {
  Json keys = Json::array(), values = Json::array();
  for (const auto& [id, bytes] : bounds) {
    if (keep && std::find(keep->begin(), keep->end(), id) == keep->end()) continue;
    keys.push_back(id);
    values.push_back(UpperHex(bytes));
  }
  return {{"keys", std::move(keys)}, {"values", std::move(values)}};
}

// Each spec's partition type under the planned schema, for writing partition values.
using PartitionTypes = std::map<int32_t, std::optional<Type>>;

PartitionTypes PartitionTypesOf(const iceberg::TableMetadata& metadata, const iceberg::Schema& schema) {
  PartitionTypes types;
  for (const iceberg::PartitionSpec& spec : metadata.Specs()) {
    auto type = iceberg::PartitionType(spec, schema);
    if (!type.ok()) type = iceberg::PartitionType(spec, metadata.CurrentSchema());
    types[spec.spec_id] = type.ok() ? std::optional<Type>(std::move(type).value()) : std::nullopt;
  }
  return types;
}

// A data or delete file as Java's ContentFileParser writes it. `stats_ids`: the columns whose
// metrics are kept (nullptr: all of them).
Json ContentFileJson(const DataFile& file, const PartitionTypes& types,
                     const std::vector<int32_t>* stats_ids) {
  Json out = Json::object();
  out["spec-id"] = file.spec_id;
  out["content"] = iceberg::FileContentName(file.content);
  out["file-path"] = file.file_path;
  out["file-format"] = AsciiLower(file.file_format);
  Json partition = Json::array();
  auto type = types.find(file.spec_id);
  const Type* partition_type =
      type != types.end() && type->second && type->second->fields.size() == file.partition.size()
          ? &*type->second
          : nullptr;
  for (size_t i = 0; i < file.partition.size(); ++i) {
    partition.push_back(partition_type ? SingleValueJson(partition_type->fields[i].type, file.partition[i])
                                       : UntypedValueJson(file.partition[i]));
  }
  out["partition"] = std::move(partition);
  out["file-size-in-bytes"] = file.file_size_in_bytes;
  out["record-count"] = file.record_count;
  const bool any_stats = stats_ids == nullptr || !stats_ids->empty();
  if (any_stats) {
    if (!file.column_sizes.empty()) out["column-sizes"] = CountsJson(file.column_sizes, stats_ids);
    if (!file.value_counts.empty()) out["value-counts"] = CountsJson(file.value_counts, stats_ids);
    if (!file.null_value_counts.empty())
      out["null-value-counts"] = CountsJson(file.null_value_counts, stats_ids);
    if (!file.nan_value_counts.empty())
      out["nan-value-counts"] = CountsJson(file.nan_value_counts, stats_ids);
    if (!file.lower_bounds.empty()) out["lower-bounds"] = BoundsJson(file.lower_bounds, stats_ids);
    if (!file.upper_bounds.empty()) out["upper-bounds"] = BoundsJson(file.upper_bounds, stats_ids);
  }
  if (file.key_metadata) out["key-metadata"] = UpperHex(*file.key_metadata);
  if (!file.split_offsets.empty()) out["split-offsets"] = file.split_offsets;
  if (!file.equality_ids.empty()) out["equality-ids"] = file.equality_ids;
  if (file.sort_order_id) out["sort-order-id"] = *file.sort_order_id;
  if (file.first_row_id) out["first-row-id"] = *file.first_row_id;
  if (file.content != iceberg::FileContent::kData) {
    if (file.referenced_data_file) out["referenced-data-file"] = *file.referenced_data_file;
    if (file.content_offset) out["content-offset"] = *file.content_offset;
    if (file.content_size_in_bytes) out["content-size-in-bytes"] = *file.content_size_in_bytes;
  }
  return out;
}

// ---- expressions (Java's ExpressionParser) ----

// Every field's full dotted name by id ("a.b", "list.element", "map.key").
void CollectNames(const std::vector<iceberg::NestedField>& fields, const std::string& prefix,
                  std::map<int32_t, std::string>& names) {
  for (const iceberg::NestedField& field : fields) {
    const std::string name = prefix.empty() ? field.name : prefix + "." + field.name;
    names[field.id] = name;
    CollectNames(field.type.fields, name, names);
  }
}

const char* OperationName(ExprOp op) {
  switch (op) {
    case ExprOp::kIsNull:
      return "is-null";
    case ExprOp::kNotNull:
      return "not-null";
    case ExprOp::kIsNan:
      return "is-nan";
    case ExprOp::kNotNan:
      return "not-nan";
    case ExprOp::kLt:
      return "lt";
    case ExprOp::kLtEq:
      return "lt-eq";
    case ExprOp::kGt:
      return "gt";
    case ExprOp::kGtEq:
      return "gt-eq";
    case ExprOp::kEq:
      return "eq";
    case ExprOp::kNotEq:
      return "not-eq";
    case ExprOp::kStartsWith:
      return "starts-with";
    case ExprOp::kNotStartsWith:
      return "not-starts-with";
    case ExprOp::kIn:
      return "in";
    case ExprOp::kNotIn:
      return "not-in";
    default:
      return "";
  }
}

Json ExpressionJson(const BoundExpression& expression, const std::map<int32_t, std::string>& names) {
  switch (expression.op) {
    case ExprOp::kTrue:
      return true;
    case ExprOp::kFalse:
      return false;
    case ExprOp::kAnd:
    case ExprOp::kOr:
      return {{"type", expression.op == ExprOp::kAnd ? "and" : "or"},
              {"left", ExpressionJson(expression.children[0], names)},
              {"right", ExpressionJson(expression.children[1], names)}};
    default:
      break;
  }
  Json out = {{"type", OperationName(expression.op)}};
  auto name = names.find(expression.field_id);
  out["term"] = name != names.end() ? name->second : std::to_string(expression.field_id);
  if (expression.op == ExprOp::kIn || expression.op == ExprOp::kNotIn) {
    Json values = Json::array();
    for (const Datum& value : expression.values) values.push_back(SingleValueJson(expression.type, value));
    out["values"] = std::move(values);
  } else if (!expression.values.empty()) {
    out["value"] = SingleValueJson(expression.type, expression.values[0]);
  }
  return out;
}

// ---- requests and plan tasks ----

struct ParsedRequest {
  iceberg::ScanRequest scan;
  Json echo;  // the request's fields as a plan task carries them
};

HandlerResult ReadLong(const Json& body, const char* name, std::optional<int64_t>& out) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return kHandled;
  if (!it->is_number_integer()) return BadRequest(std::string(name) + " must be a long");
  out = it->get<int64_t>();
  return kHandled;
}

HandlerResult ReadBool(const Json& body, const char* name, bool& out) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return kHandled;
  if (!it->is_boolean()) return BadRequest(std::string(name) + " must be a boolean");
  out = it->get<bool>();
  return kHandled;
}

HandlerResult ReadNames(const Json& body, const char* name, std::optional<std::vector<std::string>>& out) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return kHandled;
  if (!it->is_array()) return BadRequest(std::string(name) + " must be a list of field names");
  std::vector<std::string> names;
  for (const Json& item : *it) {
    if (!item.is_string()) return BadRequest(std::string(name) + " must be a list of field names");
    names.push_back(item.get<std::string>());
  }
  out = std::move(names);
  return kHandled;
}

HandlerResult ParseScanRequest(const Json& body, ParsedRequest& parsed) {
  iceberg::ScanRequest& scan = parsed.scan;
  if (auto error = ReadLong(body, "snapshot-id", scan.snapshot_id)) return error;
  if (auto error = ReadLong(body, "start-snapshot-id", scan.start_snapshot_id)) return error;
  if (auto error = ReadLong(body, "end-snapshot-id", scan.end_snapshot_id)) return error;
  if (auto error = ReadBool(body, "case-sensitive", scan.case_sensitive)) return error;
  if (auto error = ReadBool(body, "use-snapshot-schema", scan.use_snapshot_schema)) return error;
  std::optional<std::vector<std::string>> select;
  if (auto error = ReadNames(body, "select", select)) return error;
  if (select) scan.select = std::move(*select);
  if (auto error = ReadNames(body, "stats-fields", scan.stats_fields)) return error;
  std::optional<int64_t> min_rows;
  if (auto error = ReadLong(body, "min-rows-requested", min_rows))
    return error;  // a hint: every file is planned
  if (scan.snapshot_id && scan.end_snapshot_id) {
    return BadRequest("snapshot-id and start-snapshot-id/end-snapshot-id are two kinds of scan: send one");
  }
  if (auto it = body.find("filter"); it != body.end() && !it->is_null()) {
    auto filter = iceberg::ParseExpressionJson(it->dump());
    if (!filter.ok()) {
      return ErrorFromStatus(filter.status(), BadRequest("filter: " + filter.status().message()));
    }
    scan.filter = std::move(filter).value();
  }
  parsed.echo = Json::object();
  for (const char* name : {"snapshot-id", "start-snapshot-id", "end-snapshot-id", "case-sensitive",
                           "use-snapshot-schema", "select", "stats-fields", "filter"}) {
    if (auto it = body.find(name); it != body.end() && !it->is_null()) parsed.echo[name] = *it;
  }
  return kHandled;
}

std::string PlanTaskToken(const std::string& table_uuid, int64_t snapshot_id, const Json& echo, size_t begin,
                          size_t end) {
  Json request = echo;
  // Pinned: a table that moves on between the plan and its tasks is still read at the plan's snapshot.
  if (!request.contains("end-snapshot-id")) request["snapshot-id"] = snapshot_id;
  Json token = {{"table-uuid", table_uuid}, {"request", std::move(request)}, {"manifests", {begin, end}}};
  return kPlanTaskPrefix + Base64Encode(token.dump());
}

struct PlanTask {
  std::string table_uuid;
  Json request;
  size_t begin = 0, end = 0;
};

std::optional<PlanTask> ParsePlanTaskToken(std::string_view text) {
  if (text.substr(0, std::strlen(kPlanTaskPrefix)) != kPlanTaskPrefix) return std::nullopt;
  auto decoded = Base64Decode(text.substr(std::strlen(kPlanTaskPrefix)));
  if (!decoded) return std::nullopt;
  Json token = Json::parse(*decoded, nullptr, false);
  if (!token.is_object()) return std::nullopt;
  auto uuid = token.find("table-uuid");
  auto request = token.find("request");
  auto manifests = token.find("manifests");
  if (uuid == token.end() || !uuid->is_string() || request == token.end() || !request->is_object() ||
      manifests == token.end() || !manifests->is_array() || manifests->size() != 2 ||
      !(*manifests)[0].is_number_unsigned() || !(*manifests)[1].is_number_unsigned()) {
    return std::nullopt;
  }
  PlanTask task;
  task.table_uuid = uuid->get<std::string>();
  task.request = *request;
  task.begin = (*manifests)[0].get<size_t>();
  task.end = (*manifests)[1].get<size_t>();
  return task;
}

// A planned slice as the response's "delete-files" and "file-scan-tasks".
void AddScanTasks(const iceberg::ScanPlan& plan, const iceberg::ScanPlanner& planner,
                  const iceberg::TableMetadata& metadata, Json& body) {
  const PartitionTypes types = PartitionTypesOf(metadata, planner.schema());
  std::map<int32_t, std::string> names;
  CollectNames(planner.schema().fields, "", names);
  if (!plan.delete_files.empty()) {
    Json deletes = Json::array();
    for (const DataFile& file : plan.delete_files) deletes.push_back(ContentFileJson(file, types, nullptr));
    body["delete-files"] = std::move(deletes);
  }
  Json tasks = Json::array();
  for (const iceberg::PlannedTask& task : plan.tasks) {
    Json out = {{"data-file", ContentFileJson(task.file, types, &planner.stats_field_ids())}};
    if (!task.deletes.empty()) out["delete-file-references"] = task.deletes;
    // Always written, true included: Java's client evaluates the residual it reads and has none to
    // fall back on.
    out["residual-filter"] = ExpressionJson(task.residual, names);
    tasks.push_back(std::move(out));
  }
  body["file-scan-tasks"] = std::move(tasks);
}

HandlerResult PlanningError(const Status& status) {
  if (status.code() == ErrorCode::kInvalidArgument || status.code() == ErrorCode::kNotFound) {
    return BadRequest(status.message());
  }
  return ErrorFromStatus(status, BadRequest(status.message()));
}

}  // namespace

HandlerResult PlanTableScan(RequestContext& ctx) {
  Json body;
  if (auto error = ParseJsonObject(ctx, body)) return error;
  if (auto error = RequireTable(ctx)) return error;
  ParsedRequest parsed;
  if (auto error = ParseScanRequest(body, parsed)) return error;
  auto metadata = LoadTableMetadata(ctx.backend, ctx.entity->metadata_location);
  if (!metadata.ok()) return ErrorFromStatus(metadata.status(), NoSuchTable(EntityDisplayName(ctx)));
  std::unique_ptr<iceberg::FileIO> io;
  if (auto error = OpenTableFiles(ctx, io)) return error;
  auto planner = iceberg::ScanPlanner::Make(*io, **metadata, parsed.scan);
  if (!planner.ok()) return PlanningError(planner.status());

  int64_t files = 0;
  for (size_t i = 0; i < planner->data_manifest_count(); ++i) files += planner->LiveFilesIn(i);
  const std::string plan_id = "serac-" + RandomUuid();
  const std::string& uuid = ctx.entity->uuid;
  Json response = {{"status", "completed"}, {"plan-id", plan_id}};
  ScanPlanningState::PlanRecord record{uuid, {}};
  if (files <= static_cast<int64_t>(limits::kScanPlanFilesPerTask)) {
    auto plan = planner->Plan(0, planner->data_manifest_count());
    if (!plan.ok()) return PlanningError(plan.status());
    AddScanTasks(*plan, *planner, **metadata, response);
    if (planner->data_manifest_count() > 0) {
      record.plan_tasks.push_back(
          PlanTaskToken(uuid, planner->snapshot_id(), parsed.echo, 0, planner->data_manifest_count()));
    }
  } else {
    // Runs of whole manifests of at most kScanPlanFilesPerTask live files (or one larger manifest).
    const int64_t per_task = limits::kScanPlanFilesPerTask;
    const size_t count = planner->data_manifest_count();
    size_t begin = 0;
    int64_t in_run = 0;
    for (size_t i = 0; i < count; ++i) {
      const int64_t files_in = planner->LiveFilesIn(i);
      if (in_run > 0 && in_run + files_in > per_task) {
        record.plan_tasks.push_back(PlanTaskToken(uuid, planner->snapshot_id(), parsed.echo, begin, i));
        begin = i;
        in_run = 0;
      }
      in_run += files_in;
    }
    record.plan_tasks.push_back(PlanTaskToken(uuid, planner->snapshot_id(), parsed.echo, begin, count));
    response["plan-tasks"] = record.plan_tasks;
  }
  ctx.backend.scan_planning.Remember(plan_id, std::move(record));
  return SendJson(ctx, response);
}

HandlerResult FetchPlanningResult(RequestContext& ctx) {
  if (auto error = RequireTable(ctx)) return error;
  auto record = ctx.backend.scan_planning.Find(ctx.path.plan_id);
  if (!record || record->table_uuid != ctx.entity->uuid) return NoSuchPlanId(ctx.path.plan_id);
  Json response = {{"status", "completed"}};
  if (!record->plan_tasks.empty()) response["plan-tasks"] = record->plan_tasks;
  return SendJson(ctx, response);
}

HandlerResult CancelPlanning(RequestContext& ctx) {
  if (auto error = RequireTable(ctx)) return error;
  auto record = ctx.backend.scan_planning.Find(ctx.path.plan_id);
  if (!record || record->table_uuid != ctx.entity->uuid) return NoSuchPlanId(ctx.path.plan_id);
  ctx.backend.scan_planning.Forget(ctx.path.plan_id);
  return SendNoContent(ctx);
}

HandlerResult FetchScanTasks(RequestContext& ctx) {
  Json body;
  if (auto error = ParseJsonObject(ctx, body)) return error;
  if (auto error = RequireTable(ctx)) return error;
  auto text = body.find("plan-task");
  if (text == body.end() || !text->is_string()) return BadRequest("plan-task must be a string");
  auto task = ParsePlanTaskToken(text->get<std::string>());
  if (!task) return NoSuchPlanTask("not a plan task this catalog made");
  if (task->table_uuid != ctx.entity->uuid) return NoSuchPlanTask("it belongs to another table");
  ParsedRequest parsed;
  if (auto error = ParseScanRequest(task->request, parsed)) return error;
  auto metadata = LoadTableMetadata(ctx.backend, ctx.entity->metadata_location);
  if (!metadata.ok()) return ErrorFromStatus(metadata.status(), NoSuchTable(EntityDisplayName(ctx)));
  std::unique_ptr<iceberg::FileIO> io;
  if (auto error = OpenTableFiles(ctx, io)) return error;
  auto planner = iceberg::ScanPlanner::Make(*io, **metadata, parsed.scan);
  if (!planner.ok()) {
    if (planner.status().code() == ErrorCode::kNotFound) {
      return NoSuchPlanTask("its snapshot is no longer in the table (" + planner.status().message() + ")");
    }
    return PlanningError(planner.status());
  }
  if (task->end > planner->data_manifest_count() || task->begin > task->end) {
    return NoSuchPlanTask("its manifests are not the snapshot's");
  }
  auto plan = planner->Plan(task->begin, task->end);
  if (!plan.ok()) return PlanningError(plan.status());
  Json response = Json::object();
  AddScanTasks(*plan, *planner, **metadata, response);
  return SendJson(ctx, response);
}

// ---- the planning mode ----

namespace {

Result<std::string> WarehouseMode(RequestContext& ctx, const std::string& warehouse) {
  if (auto cached = ctx.backend.scan_planning.CachedWarehouseMode(warehouse)) return *cached;
  SERAC_ASSIGN_OR_RETURN(std::vector<meta::MaintenanceSetting> settings,
                         ctx.catalog().ListMaintenanceSettings(warehouse, ""));
  std::string mode;
  for (const meta::MaintenanceSetting& setting : settings) {
    if (setting.type != kScanPlanningSetting) continue;
    Json stored = Json::parse(setting.json, nullptr, false);
    if (stored.is_object() && stored.contains("mode") && stored["mode"].is_string()) {
      mode = stored["mode"].get<std::string>();
    }
  }
  ctx.backend.scan_planning.CacheWarehouseMode(warehouse, mode);
  return mode;
}

HandlerResult SendWarehouseMode(RequestContext& ctx, const std::string& mode) {
  return SendJson(ctx, {{"warehouse", ctx.path.name}, {"mode", mode.empty() ? Json(nullptr) : Json(mode)}});
}

}  // namespace

std::string WarehouseScanPlanningMode(RequestContext& ctx, const std::string& warehouse) {
  auto mode = WarehouseMode(ctx, warehouse);
  return mode.ok() ? *mode : std::string();
}

std::string ScanPlanningMode(RequestContext& ctx, const iceberg::TableMetadata& metadata) {
  auto property = metadata.properties().find("scan-planning-mode");
  if (property != metadata.properties().end() && IsPlanningMode(property->second)) return property->second;
  return WarehouseScanPlanningMode(ctx, ctx.path.warehouse);
}

HandlerResult GetWarehouseScanPlanning(RequestContext& ctx) {
  if (auto error = RequireWarehouse(ctx, ctx.path.name)) return error;
  auto mode = WarehouseMode(ctx, ctx.path.name);
  if (!mode.ok()) return ErrorFromStatus(mode.status(), BadRequest(mode.status().message()));
  return SendWarehouseMode(ctx, *mode);
}

HandlerResult PutWarehouseScanPlanning(RequestContext& ctx) {
  Json body;
  if (auto error = ParseJsonObject(ctx, body)) return error;
  if (auto error = RequireWarehouse(ctx, ctx.path.name)) return error;
  auto mode = body.find("mode");
  if (mode == body.end() || !mode->is_string() || !IsPlanningMode(mode->get<std::string>())) {
    return BadRequest("mode must be \"server\" or \"client\"");
  }
  meta::MaintenanceSetting setting;
  setting.warehouse = ctx.path.name;
  setting.type = kScanPlanningSetting;
  setting.json = Json{{"mode", *mode}}.dump();
  if (Status put = ctx.catalog().PutMaintenanceSetting(setting); !put.ok()) {
    return ErrorFromStatus(put, BadRequest(put.message()));
  }
  ctx.backend.scan_planning.CacheWarehouseMode(ctx.path.name, mode->get<std::string>());
  return SendWarehouseMode(ctx, mode->get<std::string>());
}

HandlerResult DeleteWarehouseScanPlanning(RequestContext& ctx) {
  if (auto error = RequireWarehouse(ctx, ctx.path.name)) return error;
  Status deleted = ctx.catalog().DeleteMaintenanceSetting(ctx.path.name, "", kScanPlanningSetting);
  if (!deleted.ok() && deleted.code() != ErrorCode::kNotFound) {
    return ErrorFromStatus(deleted, BadRequest(deleted.message()));
  }
  ctx.backend.scan_planning.CacheWarehouseMode(ctx.path.name, "");
  return SendNoContent(ctx);
}

}  // namespace serac::catalog
