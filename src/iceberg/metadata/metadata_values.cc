// The typed values of iceberg/metadata/table_metadata.h, read from the documents the module keeps. Every
// part was checked when it came in (ParseTableMetadata, the commit rules), so the readers below
// take what they find without failing: a member that is absent gets the spec's default.
#include <algorithm>
#include <cctype>
#include <unordered_set>

#include "iceberg/metadata/metadata_internal.h"
#include "iceberg/metadata/table_metadata.h"

namespace serac::iceberg {

namespace {

template <typename T>
std::optional<T> Member(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<T>();
}

std::string TextMember(const Json& object, const char* key) { return StringOr(object, key, ""); }

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

// `source-id`, or v3's `source-ids`.
std::vector<int32_t> SourceIds(const Json& field) {
  if (std::optional<int32_t> id = Member<int32_t>(field, "source-id")) return {*id};
  std::vector<int32_t> ids;
  if (auto list = field.find("source-ids"); list != field.end() && list->is_array()) {
    for (const Json& id : *list) ids.push_back(id.get<int32_t>());
  }
  return ids;
}

PartitionSpec SpecFromJson(const Json& json) {
  PartitionSpec spec;
  spec.spec_id = Member<int32_t>(json, "spec-id").value_or(0);
  int32_t next_legacy_id = kPartitionFieldIdStart;
  for (const Json& field : json.at("fields")) {
    PartitionField typed;
    typed.source_ids = SourceIds(field);
    typed.field_id = Member<int32_t>(field, "field-id").value_or(next_legacy_id);
    next_legacy_id = typed.field_id + 1;
    typed.name = TextMember(field, "name");
    typed.transform = TextMember(field, "transform");
    spec.fields.push_back(std::move(typed));
  }
  return spec;
}

SortOrder SortOrderFromJson(const Json& json) {
  SortOrder order;
  order.order_id = Member<int32_t>(json, "order-id").value_or(kUnsortedOrderId);
  for (const Json& field : json.at("fields")) {
    SortField typed;
    typed.source_ids = SourceIds(field);
    typed.transform = TextMember(field, "transform");
    typed.direction = EqualsIgnoringCase(TextMember(field, "direction"), "desc") ? SortDirection::kDescending
                                                                                 : SortDirection::kAscending;
    typed.null_order = EqualsIgnoringCase(TextMember(field, "null-order"), "nulls-last")
                           ? NullOrder::kNullsLast
                           : NullOrder::kNullsFirst;
    order.fields.push_back(std::move(typed));
  }
  return order;
}

Snapshot SnapshotFromJson(const Json& json) {
  Snapshot snapshot;
  snapshot.snapshot_id = Member<int64_t>(json, "snapshot-id").value_or(0);
  snapshot.parent_snapshot_id = Member<int64_t>(json, "parent-snapshot-id");
  snapshot.sequence_number = Member<int64_t>(json, "sequence-number").value_or(0);
  snapshot.timestamp_ms = Member<int64_t>(json, "timestamp-ms").value_or(0);
  snapshot.manifest_list = TextMember(json, "manifest-list");
  if (auto manifests = json.find("manifests"); manifests != json.end() && manifests->is_array()) {
    for (const Json& manifest : *manifests) snapshot.manifests.push_back(manifest.get<std::string>());
  }
  if (auto summary = json.find("summary"); summary != json.end() && summary->is_object()) {
    for (const auto& [key, value] : summary->items()) {
      if (value.is_string()) snapshot.summary[key] = value.get<std::string>();
    }
  }
  snapshot.schema_id = Member<int32_t>(json, "schema-id");
  snapshot.first_row_id = Member<int64_t>(json, "first-row-id");
  snapshot.added_rows = Member<int64_t>(json, "added-rows");
  return snapshot;
}

SnapshotRef RefFromJson(const Json& json) {
  SnapshotRef ref;
  ref.snapshot_id = Member<int64_t>(json, "snapshot-id").value_or(0);
  ref.type = TextMember(json, "type") == "tag" ? RefType::kTag : RefType::kBranch;
  ref.min_snapshots_to_keep = Member<int32_t>(json, "min-snapshots-to-keep");
  ref.max_snapshot_age_ms = Member<int64_t>(json, "max-snapshot-age-ms");
  ref.max_ref_age_ms = Member<int64_t>(json, "max-ref-age-ms");
  return ref;
}

template <typename T, typename Convert>
std::vector<T> AllOf(const std::vector<Json>& items, Convert convert) {
  std::vector<T> typed;
  typed.reserve(items.size());
  for (const Json& item : items) typed.push_back(convert(item));
  return typed;
}

}  // namespace

std::string_view Snapshot::operation() const {
  auto it = summary.find("operation");
  return it == summary.end() ? std::string_view() : std::string_view(it->second);
}

// ---- TableMetadata ----

TableMetadata::TableMetadata(std::shared_ptr<const TableModel> model) : model_(std::move(model)) {}

Result<TableMetadata> TableMetadata::Parse(std::string_view json) {
  SERAC_ASSIGN_OR_RETURN(Json parsed, ParseJson(json));
  SERAC_ASSIGN_OR_RETURN(TableModel model, ParseTableMetadata(parsed));
  return TableMetadata(std::make_shared<const TableModel>(std::move(model)));
}

int TableMetadata::format_version() const { return model_->format_version; }
const std::string& TableMetadata::table_uuid() const { return model_->table_uuid; }
const std::string& TableMetadata::location() const { return model_->location; }
int64_t TableMetadata::last_sequence_number() const { return model_->last_sequence_number; }
int64_t TableMetadata::last_updated_ms() const { return model_->last_updated_ms; }
int32_t TableMetadata::last_column_id() const { return model_->last_column_id; }
int32_t TableMetadata::last_partition_id() const { return model_->last_partition_id; }
int64_t TableMetadata::next_row_id() const { return model_->next_row_id; }
const std::map<std::string, std::string>& TableMetadata::properties() const { return model_->properties; }
const std::vector<SnapshotLogEntry>& TableMetadata::snapshot_log() const { return model_->snapshot_log; }
const std::vector<MetadataLogEntry>& TableMetadata::metadata_log() const { return model_->metadata_log; }

int32_t TableMetadata::current_schema_id() const { return model_->current_schema_id; }
Schema TableMetadata::CurrentSchema() const { return *FindSchema(model_->current_schema_id); }
std::vector<Schema> TableMetadata::Schemas() const { return AllOf<Schema>(model_->schemas, SchemaFromJson); }
std::optional<Schema> TableMetadata::FindSchema(int32_t schema_id) const {
  const Json* schema = model_->FindSchema(schema_id);
  if (schema == nullptr) return std::nullopt;
  return SchemaFromJson(*schema);
}

int32_t TableMetadata::default_spec_id() const { return model_->default_spec_id; }
PartitionSpec TableMetadata::DefaultSpec() const { return *FindSpec(model_->default_spec_id); }
std::vector<PartitionSpec> TableMetadata::Specs() const {
  return AllOf<PartitionSpec>(model_->partition_specs, SpecFromJson);
}
std::optional<PartitionSpec> TableMetadata::FindSpec(int32_t spec_id) const {
  const Json* spec = model_->FindSpec(spec_id);
  if (spec == nullptr) return std::nullopt;
  return SpecFromJson(*spec);
}

int32_t TableMetadata::default_sort_order_id() const { return model_->default_sort_order_id; }
SortOrder TableMetadata::DefaultSortOrder() const {
  const Json* order = model_->FindSortOrder(model_->default_sort_order_id);
  if (order == nullptr) return SortOrder{};  // v1 tables may list no sort order: unsorted
  return SortOrderFromJson(*order);
}
std::vector<SortOrder> TableMetadata::SortOrders() const {
  return AllOf<SortOrder>(model_->sort_orders, SortOrderFromJson);
}

int64_t TableMetadata::current_snapshot_id() const { return model_->current_snapshot_id; }
std::optional<Snapshot> TableMetadata::CurrentSnapshot() const {
  if (model_->current_snapshot_id < 0) return std::nullopt;
  return FindSnapshot(model_->current_snapshot_id);
}
std::optional<Snapshot> TableMetadata::FindSnapshot(int64_t snapshot_id) const {
  const Json* snapshot = model_->FindSnapshot(snapshot_id);
  if (snapshot == nullptr) return std::nullopt;
  return SnapshotFromJson(*snapshot);
}
std::vector<Snapshot> TableMetadata::Snapshots() const {
  std::vector<Snapshot> snapshots;
  snapshots.reserve(model_->snapshots.size());
  for (const StoredSnapshotPtr& snapshot : model_->snapshots)
    snapshots.push_back(SnapshotFromJson(snapshot->json()));
  return snapshots;
}
size_t TableMetadata::snapshot_count() const { return model_->snapshots.size(); }
std::map<std::string, SnapshotRef> TableMetadata::Refs() const {
  std::map<std::string, SnapshotRef> refs;
  for (const auto& [name, ref] : model_->refs) refs.emplace(name, RefFromJson(ref));
  return refs;
}

std::vector<TableMetadata::NamedLocation> TableMetadata::LocationsAddedSince(
    const TableMetadata* before) const {
  static constexpr const char* kPathProperties[] = {"write.data.path", kMetadataPathProperty,
                                                    "write.object-storage.path", "write.folder-storage.path"};
  std::vector<NamedLocation> added;
  const TableModel* old = before != nullptr ? &before->model() : nullptr;
  for (const char* name : kPathProperties) {
    auto it = model_->properties.find(name);
    if (it == model_->properties.end() || it->second.empty()) continue;
    if (old != nullptr) {
      auto was = old->properties.find(name);
      if (was != old->properties.end() && was->second == it->second) continue;
    }
    added.push_back({std::string("property ") + name, it->second});
  }
  // Versions share their snapshots' stored form, and a commit appends the snapshots it adds: the
  // new ones are those after `before`'s last one (found from the end, so a commit to a table of
  // thousands of snapshots looks at the few it adds). Only when that one is gone are they told
  // apart by a set of `before`'s.
  size_t first_new = 0;
  std::unordered_set<const StoredSnapshot*> shared;
  if (old != nullptr && !old->snapshots.empty()) {
    const StoredSnapshot* last_old = old->snapshots.back().get();
    size_t i = model_->snapshots.size();
    while (i > 0 && model_->snapshots[i - 1].get() != last_old) --i;
    if (i > 0) {
      first_new = i;
    } else {
      for (const StoredSnapshotPtr& snapshot : old->snapshots) shared.insert(snapshot.get());
    }
  }
  for (size_t i = first_new; i < model_->snapshots.size(); ++i) {
    const StoredSnapshotPtr& snapshot = model_->snapshots[i];
    if (shared.count(snapshot.get()) != 0) continue;
    const std::string id = std::to_string(snapshot->id());
    const Json& json = snapshot->json();
    if (auto list = json.find("manifest-list"); list != json.end() && list->is_string()) {
      added.push_back({"snapshot " + id + "'s manifest list", list->get<std::string>(), snapshot->id()});
    }
    if (auto manifests = json.find("manifests"); manifests != json.end() && manifests->is_array()) {
      for (const Json& manifest : *manifests) {
        if (manifest.is_string())
          added.push_back({"snapshot " + id + "'s manifest", manifest.get<std::string>()});
      }
    }
  }
  auto statistics_paths = [&](const std::vector<Json>& now, const std::vector<Json>* was, const char* kind) {
    for (const Json& file : now) {
      auto path = file.find("statistics-path");
      if (path == file.end() || !path->is_string()) continue;
      bool known = false;
      if (was != nullptr) {
        for (const Json& old_file : *was) known = known || old_file == file;
      }
      if (!known) added.push_back({std::string(kind) + " file", path->get<std::string>()});
    }
  };
  statistics_paths(model_->statistics, old != nullptr ? &old->statistics : nullptr, "statistics");
  statistics_paths(model_->partition_statistics, old != nullptr ? &old->partition_statistics : nullptr,
                   "partition statistics");
  return added;
}

std::vector<std::string> TableMetadata::StatisticsFiles() const {
  std::vector<std::string> paths;
  for (const std::vector<Json>* files : {&model_->statistics, &model_->partition_statistics}) {
    for (const Json& file : *files) {
      auto path = file.find("statistics-path");
      if (path != file.end() && path->is_string()) paths.push_back(path->get<std::string>());
    }
  }
  return paths;
}

TableMetadata TableMetadata::WithLocation(std::string location) const {
  if (location == model_->location) return *this;
  auto moved = std::make_shared<TableModel>(*model_);
  moved->location = std::move(location);
  return TableMetadata(std::move(moved));
}

std::string TableMetadata::ToJsonText(SnapshotSelection selection) const {
  return TableMetadataToJsonText(*model_, selection);
}
std::vector<MetadataTextPiece> TableMetadata::ToJsonPieces() const {
  return TableMetadataToJsonPieces(*model_);
}
std::string TableMetadata::NewFileLocation(std::string_view previous_metadata_location,
                                           std::string_view file_uuid) const {
  return NewTableMetadataFileLocation(*model_, previous_metadata_location, file_uuid);
}

// ---- TableCreation ----

TableCreation::TableCreation(std::shared_ptr<const CreateTableRequest> request)
    : request_(std::move(request)) {}

Result<TableCreation> TableCreation::Parse(std::string_view body_json) {
  SERAC_ASSIGN_OR_RETURN(Json body, ParseJson(body_json));
  return FromJson(body);
}

Result<TableCreation> TableCreation::FromJson(const Json& body) {
  SERAC_ASSIGN_OR_RETURN(CreateTableRequest request, ParseCreateTableRequest(body));
  return TableCreation(std::make_shared<const CreateTableRequest>(std::move(request)));
}

const std::string& TableCreation::name() const { return request_->name; }
const std::optional<std::string>& TableCreation::location() const { return request_->location; }
bool TableCreation::stage_create() const { return request_->stage_create; }
Result<TableMetadata> TableCreation::NewMetadata(std::string_view location, std::string_view table_uuid,
                                                 int64_t now_ms) const {
  SERAC_ASSIGN_OR_RETURN(TableModel model, NewTableMetadata(*request_, location, table_uuid, now_ms));
  return TableMetadata(std::make_shared<const TableModel>(std::move(model)));
}

// ---- Views ----

ViewMetadata::ViewMetadata(std::shared_ptr<const ViewModel> model) : model_(std::move(model)) {}

Result<ViewMetadata> ViewMetadata::Parse(std::string_view json) {
  SERAC_ASSIGN_OR_RETURN(Json parsed, ParseJson(json));
  SERAC_ASSIGN_OR_RETURN(ViewModel model, ParseViewMetadata(parsed));
  return ViewMetadata(std::make_shared<const ViewModel>(std::move(model)));
}

const std::string& ViewMetadata::view_uuid() const { return model_->view_uuid; }
int ViewMetadata::format_version() const { return model_->format_version; }
const std::string& ViewMetadata::location() const { return model_->location; }
int32_t ViewMetadata::current_version_id() const { return model_->current_version_id; }
const std::map<std::string, std::string>& ViewMetadata::properties() const { return model_->properties; }
std::string ViewMetadata::ToJsonText() const {
  return ViewMetadataToJson(*model_).dump(-1, ' ', false, Json::error_handler_t::replace);
}

ViewCreation::ViewCreation(std::shared_ptr<const CreateViewRequest> request) : request_(std::move(request)) {}

Result<ViewCreation> ViewCreation::Parse(std::string_view body_json) {
  SERAC_ASSIGN_OR_RETURN(Json body, ParseJson(body_json));
  return FromJson(body);
}

Result<ViewCreation> ViewCreation::FromJson(const Json& body) {
  SERAC_ASSIGN_OR_RETURN(CreateViewRequest request, ParseCreateViewRequest(body));
  return ViewCreation(std::make_shared<const CreateViewRequest>(std::move(request)));
}

const std::string& ViewCreation::name() const { return request_->name; }
const std::optional<std::string>& ViewCreation::location() const { return request_->location; }
Result<ViewMetadata> ViewCreation::NewMetadata(std::string_view location, std::string_view view_uuid) const {
  SERAC_ASSIGN_OR_RETURN(ViewModel model, NewViewMetadata(*request_, location, view_uuid));
  return ViewMetadata(std::make_shared<const ViewModel>(std::move(model)));
}

Result<ViewCommitResult> CommitView(const ViewMetadata& current, std::string_view requirements_json,
                                    std::string_view updates_json, int64_t now_ms) {
  SERAC_ASSIGN_OR_RETURN(Json requirements, ParseJson(requirements_json));
  SERAC_ASSIGN_OR_RETURN(Json updates, ParseJson(updates_json));
  return CommitView(current, requirements, updates, now_ms);
}

Result<ViewCommitResult> CommitView(const ViewMetadata& current, const Json& requirements,
                                    const Json& updates, int64_t now_ms) {
  SERAC_ASSIGN_OR_RETURN(ViewCommitOutcome outcome,
                         ApplyViewCommit(current.model(), requirements, updates, now_ms));
  if (!outcome.changed) return ViewCommitResult{current, false};
  return ViewCommitResult{ViewMetadata(std::make_shared<const ViewModel>(std::move(outcome.metadata))), true};
}

}  // namespace serac::iceberg
