// TableSink: the table's columns from the source's, changes kept per key until a flush, and the
// commits that carry the sink's position in their summaries.
#include "sync/table_sink.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "common/hash.h"
#include "iceberg/scan/table_files.h"
#include "iceberg/schema/partition.h"
#include "sync/pg_values.h"
#include "sync/type_mapping.h"

namespace serac::sync {
namespace {

// The position a table's snapshots record: the newest snapshot of main's history that a sync
// commit wrote (maintenance commits in between carry none).
TableSink::Position PositionOf(const iceberg::TableMetadata& table) {
  TableSink::Position position;
  std::optional<iceberg::Snapshot> snapshot = table.CurrentSnapshot();
  while (snapshot) {
    auto lsn = snapshot->summary.find(kSummaryLsn);
    if (lsn != snapshot->summary.end()) {
      Result<pgoutput::Lsn> parsed = pgoutput::ParseLsn(lsn->second);
      if (parsed.ok()) position.lsn = *parsed;
      auto loaded = snapshot->summary.find(kSummaryLoaded);
      position.loaded = loaded != snapshot->summary.end() && loaded->second == "true";
      auto cursor = snapshot->summary.find(kSummaryCursor);
      if (cursor != snapshot->summary.end()) position.cursor = cursor->second;
      return position;
    }
    if (!snapshot->parent_snapshot_id) break;
    snapshot = table.FindSnapshot(*snapshot->parent_snapshot_id);
  }
  return position;
}

// OLake's metadata columns, in the order tables get them.
std::array<std::pair<const char*, iceberg::TypeId>, 4> OlakeColumns() {
  return {{{"_olake_id", iceberg::TypeId::kString},
           {"_op_type", iceberg::TypeId::kString},
           {"_cdc_timestamp", iceberg::TypeId::kTimestampTz},
           {"_olake_timestamp", iceberg::TypeId::kTimestampTz}}};
}

// Which source attribute each field was written from ("id:attnum,..."), kept as a table property
// so that a column renamed while no sync ran is still recognised by its attribute number.
constexpr const char* kAttnumsProperty = "serac.sync.attnums";
// Set while the table waits for a full load again (a column arrived whose older rows hold values
// no change carried); removed once the load is committed.
constexpr const char* kReloadProperty = "serac.sync.reload";

std::string AttnumsToText(const std::map<int32_t, int32_t>& attnums) {
  std::string text;
  for (const auto& [id, attnum] : attnums) {
    text += (text.empty() ? "" : ",") + std::to_string(id) + ":" + std::to_string(attnum);
  }
  return text;
}

std::map<int32_t, int32_t> AttnumsFromText(const std::string& text) {
  std::map<int32_t, int32_t> attnums;
  size_t at = 0;
  while (at < text.size()) {
    size_t comma = text.find(',', at);
    if (comma == std::string::npos) comma = text.size();
    const std::string pair = text.substr(at, comma - at);
    const size_t colon = pair.find(':');
    if (colon != std::string::npos) {
      int32_t id = 0;
      int32_t attnum = 0;
      auto [id_end, id_error] = std::from_chars(pair.data(), pair.data() + colon, id);
      auto [number_end, number_error] =
          std::from_chars(pair.data() + colon + 1, pair.data() + pair.size(), attnum);
      if (id_error == std::errc() && number_error == std::errc()) attnums[id] = attnum;
    }
    at = comma + 1;
  }
  return attnums;
}

// OLake's partition_regex ("/{created_at, day}/{user_id, bucket[32]}": a column and a transform,
// identity when none is given, per segment) as a spec of `schema`.
Result<iceberg::PartitionSpec> PartitionSpecOf(const std::string& regex, const iceberg::Schema& schema) {
  iceberg::PartitionSpec spec;
  size_t at = 0;
  auto trim = [](std::string text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '"')) text.erase(text.begin());
    while (!text.empty() && (text.back() == ' ' || text.back() == '"')) text.pop_back();
    return text;
  };
  while (at < regex.size()) {
    const size_t open = regex.find('{', at);
    if (open == std::string::npos) {
      if (regex.find_first_not_of("/ ", at) != std::string::npos) {
        return Error(ErrorCode::kInvalidArgument, "text outside {column, transform}");
      }
      break;
    }
    const size_t close = regex.find('}', open);
    if (close == std::string::npos) return Error(ErrorCode::kInvalidArgument, "a { without its }");
    const std::string inside = regex.substr(open + 1, close - open - 1);
    const size_t comma = inside.find(',');
    const std::string column = trim(inside.substr(0, comma));
    const std::string transform = comma == std::string::npos ? "identity" : trim(inside.substr(comma + 1));
    if (column == "now()") {
      return Error(ErrorCode::kNotImplemented, "partitioning by " + column + " is not supported yet");
    }
    SERAC_ASSIGN_OR_RETURN(iceberg::PartitionField field,
                           iceberg::MakePartitionField(schema, column, transform,
                                                       1000 + static_cast<int32_t>(spec.fields.size())));
    spec.fields.push_back(std::move(field));
    at = close + 1;
  }
  if (spec.fields.empty()) return Error(ErrorCode::kInvalidArgument, "no {column, transform} segment");
  return spec;
}

// Appends `key`'s texts with their lengths, so that different keys never give the same bytes.
void AppendKeyPart(std::string& bytes, const std::optional<std::string>& text) {
  if (!text) {
    bytes += '\xff';
    return;
  }
  const uint32_t length = static_cast<uint32_t>(text->size());
  bytes.append(reinterpret_cast<const char*>(&length), sizeof(length));
  bytes += *text;
}

}  // namespace

Result<std::unique_ptr<TableSink>> TableSink::Open(const SinkTargets& targets, const SourceTable& source,
                                                   const StreamSelection& selection, iceberg::TableRef ref) {
  const std::optional<std::vector<std::string>>& selected_columns = selection.selected_columns;
  std::unique_ptr<TableSink> sink(new TableSink());
  sink->targets_ = targets;
  sink->source_ = source;
  sink->ref_ = std::move(ref);
  const std::string display = sink->ref_.DisplayName();
  // update_type as set, else the first kind every engine named for the stream reads (dv, pos, eq)
  // that the table's format version holds.
  std::string update_type = selection.update_type;
  if (!update_type.empty()) {
    if (auto refusing = EngineNotReading(selection.engines, update_type)) {
      return Error(ErrorCode::kInvalidArgument, display + ": update_type " + update_type +
                                                    " is not read by " + *refusing +
                                                    ", one of the stream's engines");
    }
  }
  const std::vector<std::string> readable = DeleteKindsReadBy(selection.engines);
  auto selected = [&](const std::string& column) {
    if (!selected_columns) return true;
    if (std::find(source.primary_key.begin(), source.primary_key.end(), column) != source.primary_key.end()) {
      return true;  // the key is always written: changes are applied by it
    }
    return std::find(selected_columns->begin(), selected_columns->end(), column) != selected_columns->end();
  };

  Result<iceberg::TableMetadata> table = targets.catalog->LoadTable(sink->ref_);
  bool created = false;
  if (!table.ok() && table.status().code() == ErrorCode::kNotFound) {
    created = true;
    SERAC_ASSIGN_OR_RETURN(bool namespace_exists, targets.rest->NamespaceExists(sink->ref_.namespace_levels));
    if (!namespace_exists) {
      Status created = targets.rest->CreateNamespace(sink->ref_.namespace_levels);
      if (!created.ok() && created.code() != ErrorCode::kAlreadyExists) return created;
    }
    iceberg::Schema schema;
    int32_t next_id = 1;
    for (const SourceColumn& column : source.columns) {
      if (!selected(column.name)) continue;
      Result<MappedType> mapped = IcebergTypeFor(column.type);
      if (!mapped.ok()) {
        return Error(mapped.status().code(), source.namespace_name + "." + source.name + ": column " +
                                                 column.name + ": " + mapped.status().message());
      }
      iceberg::NestedField field;
      field.id = next_id++;
      field.name = column.name;
      field.type = mapped->type;
      const bool is_key = std::find(source.primary_key.begin(), source.primary_key.end(), column.name) !=
                          source.primary_key.end();
      field.required = is_key;
      if (is_key && !targets.no_identifier_fields) schema.identifier_field_ids.push_back(field.id);
      schema.fields.push_back(std::move(field));
    }
    if (targets.olake_columns) {
      for (const auto& [column, type] : OlakeColumns()) {
        iceberg::NestedField field;
        field.id = next_id++;
        field.name = column;
        field.type.id = type;
        schema.fields.push_back(std::move(field));
      }
    }
    // Nested types (list elements) take ids after every top-level column's.
    for (iceberg::NestedField& field : schema.fields) {
      for (iceberg::NestedField& child : field.type.fields) child.id = next_id++;
    }
    client::TableCreation creation;
    creation.name = sink->ref_.name;
    creation.schema_json = iceberg::SchemaToJson(schema);
    if (!selection.partition_regex.empty()) {
      Result<iceberg::PartitionSpec> spec = PartitionSpecOf(selection.partition_regex, schema);
      if (!spec.ok()) {
        return Error(spec.status().code(), display + ": partition_regex \"" + selection.partition_regex +
                                               "\": " + spec.status().message());
      }
      creation.partition_spec_json = iceberg::PartitionSpecToJson(*spec);
    }
    const bool chosen_dv =
        update_type.empty() ? !selection.engines.empty() && readable.front() == "dv" : update_type == "dv";
    creation.properties["format-version"] = chosen_dv ? "3" : "2";
    creation.properties["serac.sync.source"] = source.namespace_name + "." + source.name;
    std::map<int32_t, int32_t> attnums;
    for (const iceberg::NestedField& field : schema.fields) {
      for (const SourceColumn& column : source.columns) {
        if (column.name == field.name) attnums[field.id] = column.attnum;
      }
    }
    creation.properties[kAttnumsProperty] = AttnumsToText(attnums);
    Result<client::LoadedTable> made = targets.rest->CreateTable(sink->ref_.namespace_levels, creation);
    if (!made.ok() && made.status().code() != ErrorCode::kAlreadyExists) {
      return Error(made.status().code(), "creating " + display + ": " + made.status().message());
    }
    table = targets.catalog->LoadTable(sink->ref_);
  }
  if (!table.ok()) return Error(table.status().code(), display + ": " + table.status().message());
  if (!created && !selection.partition_regex.empty()) {
    Result<iceberg::PartitionSpec> asked = PartitionSpecOf(selection.partition_regex, table->CurrentSchema());
    std::vector<std::pair<std::string, std::string>> wanted;
    std::vector<std::pair<std::string, std::string>> has;
    if (asked.ok()) {
      for (const iceberg::PartitionField& field : asked->fields)
        wanted.emplace_back(field.name, field.transform);
    }
    for (const iceberg::PartitionField& field : table->DefaultSpec().fields) {
      has.emplace_back(field.name, field.transform);
    }
    if (wanted != has) {
      std::fprintf(
          stderr,
          "serac sync: %s exists and keeps its own partition spec; partition_regex \"%s\" applies when "
          "serac sync creates the table\n",
          display.c_str(), selection.partition_regex.c_str());
    }
  }
  if (table->format_version() < 2) {
    return Error(ErrorCode::kInvalidArgument, display +
                                                  " is a format v1 table: changes need row-level "
                                                  "deletes (v2 or later)");
  }
  const int version = table->format_version();
  if (update_type.empty() && !selection.engines.empty()) {
    for (const std::string& kind : readable) {
      if ((kind == "dv" && version >= 3) || (kind == "pos" && version == 2) || kind == "eq") {
        update_type = kind;
        break;
      }
    }
    if (update_type.empty()) {
      std::string engines;
      for (const std::string& engine : selection.engines) engines += (engines.empty() ? "" : ", ") + engine;
      return Error(ErrorCode::kInvalidArgument,
                   display + ": a format v" + std::to_string(version) +
                       " table holds no kind of delete that every engine named for it reads (" + engines +
                       "): position deletes are deletion vectors from v3 on");
    }
  }
  if (update_type == "eq") {
    sink->deletes_ = DeleteKind::kEquality;
  } else if (update_type == "dv" || (update_type.empty() && version >= 3)) {
    if (version < 3) {
      return Error(ErrorCode::kInvalidArgument,
                   display + ": update_type dv needs a format v3 table; it is v" + std::to_string(version));
    }
    sink->deletes_ = DeleteKind::kDeletionVectors;
  } else {
    if (version >= 3) {
      return Error(
          ErrorCode::kInvalidArgument,
          display + ": a format v3 table keeps position deletes as deletion vectors (update_type dv)");
    }
    sink->deletes_ = DeleteKind::kPositionFiles;
  }
  sink->schema_ = table->CurrentSchema();
  sink->spec_ = table->DefaultSpec();
  sink->committed_ = PositionOf(*table);
  SERAC_ASSIGN_OR_RETURN(sink->options_, parquet::WriteOptions::FromTableProperties(table->properties()));
  sink->options_.sort_order = iceberg::SortOrder();  // rows are written as they come
  std::string location = table->location();
  while (!location.empty() && location.back() == '/') location.pop_back();
  sink->data_location_ = location + "/data";
  if (!targets.key_index_directory.empty() && sink->deletes_ != DeleteKind::kEquality) {
    SERAC_ASSIGN_OR_RETURN(sink->key_index_, parquet::DataFileKeyIndex::Open(targets.key_index_directory +
                                                                             "/" + table->table_uuid()));
  }

  sink->selection_ = selection;
  sink->olake_columns_ = targets.olake_columns;
  sink->append_mode_ = selection.append_mode;
  sink->last_column_id_ = table->last_column_id();
  sink->has_key_ = !source.primary_key.empty();
  if (auto attnums = table->properties().find(kAttnumsProperty); attnums != table->properties().end()) {
    sink->field_attnums_ = AttnumsFromText(attnums->second);
  }
  if (table->properties().count(kReloadProperty) > 0) {
    sink->reload_marked_ = true;
    sink->committed_.loaded = false;
  }
  // The source's columns as the table has them: a change stream brings later ones in its own
  // order (Evolve), a full load asks for them first (PrepareLoad).
  sink->source_.columns.clear();
  for (const SourceColumn& column : source.columns) {
    const bool in_table =
        std::any_of(sink->schema_.fields.begin(), sink->schema_.fields.end(),
                    [&](const iceberg::NestedField& field) { return field.name == column.name; });
    if (in_table) sink->source_.columns.push_back(column);
  }
  for (const SourceColumn& column : source.columns) sink->initial_columns_.push_back(column.name);
  SERAC_RETURN_IF_ERROR(sink->Bind());
  if (sink->deletes_ == DeleteKind::kEquality) {
    // Equality delete files are partitioned as the data is: from the key columns alone.
    for (const iceberg::PartitionField& field : sink->spec_.fields) {
      for (int32_t source_id : field.source_ids) {
        if (sink->key_schema_.FindField(source_id) == nullptr) {
          return Error(ErrorCode::kInvalidArgument,
                       display + ": update_type eq on a table partitioned by " + field.name +
                           ", which is not computed from the key: use pos or dv");
        }
      }
    }
  }
  return sink;
}

std::vector<LoadColumn> TableSink::LoadPlan() const {
  std::vector<LoadColumn> plan;
  for (size_t i = 0; i < load_columns_.size(); ++i) {
    LoadColumn column;
    column.name = load_columns_[i];
    for (const SourceColumn& source : source_.columns) {
      if (source.name == column.name) column.type = source.type;
    }
    column.field = static_cast<size_t>(load_fields_[i]);
    column.field_type = schema_.fields[column.field].type;
    plan.push_back(std::move(column));
  }
  if (olake_columns_) {
    // OLake's columns of a loaded row, computed by the query: its key as _olake_id (a composite
    // key's MD5, as OlakeId computes it), _op_type r, the load's time.
    std::string id = "NULL::text";
    if (has_key_) {
      std::vector<std::string> names;
      for (int field : key_fields_) names.push_back(schema_.fields[static_cast<size_t>(field)].name);
      std::sort(names.begin(), names.end());
      auto text = [](const std::string& column) { return "format('%s', " + QuoteIdentifier(column) + ")"; };
      if (names.size() == 1) {
        id = text(names[0]);
      } else {
        id = "md5(concat_ws('|'";
        for (const std::string& column : names) id += ", " + text(column);
        id += "))";
      }
    }
    const std::array<std::string, 4> expressions = {id, "'r'::text", "NULL::timestamptz", "now()"};
    const auto columns = OlakeColumns();
    for (size_t i = 0; i < columns.size(); ++i) {
      LoadColumn column;
      column.name = columns[i].first;
      column.type.name = columns[i].second == iceberg::TypeId::kString ? "text" : "timestamptz";
      column.expression = expressions[i];
      column.field = static_cast<size_t>(olake_fields_[i]);
      column.field_type = schema_.fields[column.field].type;
      plan.push_back(std::move(column));
    }
  }
  return plan;
}

Result<parquet::DataFileWriter> TableSink::NewLoadWriter() const {
  return parquet::DataFileWriter::Make(schema_, spec_, options_, *targets_.io, data_location_);
}

std::unique_ptr<iceberg::SnapshotProducer> TableSink::MakeProducer(
    const ChangeFiles& files, pgoutput::Lsn lsn, bool remove_all,
    std::optional<std::optional<int64_t>> validate_from) {
  std::map<std::string, std::string> summary = {{kSummaryLsn, pgoutput::LsnToText(lsn)},
                                                {kSummaryLoaded, committed_.loaded ? "true" : "false"}};
  if (committed_.cursor) summary[kSummaryCursor] = *committed_.cursor;
  const bool deletes = !files.deletes.empty() || !files.replaced.empty();
  auto producer = std::make_unique<iceberg::SnapshotProducer>(*targets_.io,
                                                              remove_all ? iceberg::ProducerKind::kOverwrite
                                                              : deletes  ? iceberg::ProducerKind::kRowDelta
                                                                         : iceberg::ProducerKind::kAppend,
                                                              std::move(summary));
  for (const iceberg::DataFile& file : files.data) producer->AddDataFile(file);
  for (const iceberg::DataFile& file : files.deletes) producer->AddDeleteFile(file);
  for (const iceberg::DataFile& file : files.replaced) producer->RemoveDeleteFile(file);
  if (remove_all) producer->RemoveAllFiles();
  if (validate_from) producer->ValidateFromSnapshot(*validate_from);
  return producer;
}

Status TableSink::Commit(const ChangeFiles& files, pgoutput::Lsn lsn, bool remove_all,
                         std::optional<std::optional<int64_t>> validate_from) {
  std::unique_ptr<iceberg::SnapshotProducer> producer = MakeProducer(files, lsn, remove_all, validate_from);
  Result<int64_t> snapshot = iceberg::CommitSnapshot(*targets_.catalog, ref_, *producer);
  if (!snapshot.ok()) {
    return Error(snapshot.status().code(), "committing to " + name() + ": " + snapshot.status().message());
  }
  committed_.lsn = std::max(committed_.lsn, lsn);
  return Status::Ok();
}

void TableSink::DeleteWritten(const ChangeFiles& files) {
  for (const iceberg::DataFile& file : files.data) (void)targets_.io->Delete(file.file_path);
  for (const iceberg::DataFile& file : files.deletes) (void)targets_.io->Delete(file.file_path);
}

Status TableSink::CommitLoad(std::vector<iceberg::DataFile> files, pgoutput::Lsn lsn, bool mark_loaded,
                             std::optional<std::string> cursor) {
  const bool was_loaded = committed_.loaded;
  const std::optional<std::string> cursor_before = committed_.cursor;
  committed_.loaded = mark_loaded;
  committed_.cursor = std::move(cursor);
  committed_.lsn = 0;  // the load replaces the table: its position is the load's
  ChangeFiles load;
  load.data = std::move(files);
  Status committed = Commit(load, lsn, true, std::nullopt);
  if (!committed.ok()) {
    committed_.loaded = was_loaded;
    committed_.cursor = cursor_before;
    if (committed.code() != ErrorCode::kOutcomeUnknown) DeleteWritten(load);
    return committed;
  }
  if (reload_marked_ && mark_loaded) {
    // A crash before this only loads the table once more.
    const nlohmann::json updates =
        nlohmann::json::array({{{"action", "remove-properties"}, {"removals", {kReloadProperty}}}});
    SERAC_RETURN_IF_ERROR(targets_.catalog->CommitTable(ref_, "[]", updates.dump()));
    reload_marked_ = false;
  }
  return Status::Ok();
}

Status TableSink::PrepareLoad(const std::vector<SourceColumn>& columns) { return Evolve(columns); }

bool TableSink::Selected(const std::string& column) const {
  if (std::find(source_.primary_key.begin(), source_.primary_key.end(), column) !=
      source_.primary_key.end()) {
    return true;  // the key is always written: changes are applied by it
  }
  if (!selection_.selected_columns) return true;
  if (std::find(selection_.selected_columns->begin(), selection_.selected_columns->end(), column) !=
      selection_.selected_columns->end()) {
    return true;
  }
  // A column the source gained after the selection was made, when sync_new_columns asks for them.
  const bool known = std::any_of(initial_columns_.begin(), initial_columns_.end(),
                                 [&](const std::string& name) { return name == column; });
  return selection_.sync_new_columns && !known;
}

Status TableSink::Bind() {
  auto field_index = [&](const std::string& name) -> int {
    for (size_t i = 0; i < schema_.fields.size(); ++i) {
      if (schema_.fields[i].name == name) return static_cast<int>(i);
    }
    return -1;
  };
  load_columns_.clear();
  load_fields_.clear();
  for (const SourceColumn& column : source_.columns) {
    if (!Selected(column.name)) continue;
    const int index = field_index(column.name);
    if (index < 0) return Error(ErrorCode::kInternal, name() + " has no column " + column.name);
    load_columns_.push_back(column.name);
    load_fields_.push_back(index);
  }
  // The key: the primary key's columns, or (without one) every primitive column, which REPLICA
  // IDENTITY FULL sends whole with each update and delete.
  key_fields_.clear();
  if (has_key_) {
    for (const std::string& column : source_.primary_key) {
      const int index = field_index(column);
      if (index < 0) return Error(ErrorCode::kInvalidArgument, name() + " has no key column " + column);
      key_fields_.push_back(index);
    }
  } else {
    for (int index : load_fields_) {
      if (schema_.fields[static_cast<size_t>(index)].type.is_primitive()) key_fields_.push_back(index);
    }
  }
  key_schema_ = iceberg::Schema();
  for (int index : key_fields_) key_schema_.fields.push_back(schema_.fields[static_cast<size_t>(index)]);
  if (olake_columns_) {
    const auto columns = OlakeColumns();
    for (size_t i = 0; i < columns.size(); ++i) {
      olake_fields_[i] = field_index(columns[i].first);
      if (olake_fields_[i] < 0) {
        return Error(ErrorCode::kInvalidArgument,
                     name() + " has no column " + columns[i].first +
                         " (olake_columns: the table was made without OLake's columns)");
      }
    }
  }
  return Status::Ok();
}

namespace {

// Whether Iceberg may change a column of type `from` to `to` (the spec's type promotions).
bool Promotable(const iceberg::Type& from, const iceberg::Type& to) {
  using iceberg::TypeId;
  if (from.id == TypeId::kInt && to.id == TypeId::kLong) return true;
  if (from.id == TypeId::kFloat && to.id == TypeId::kDouble) return true;
  return from.id == TypeId::kDecimal && to.id == TypeId::kDecimal && from.scale == to.scale &&
         to.precision >= from.precision;
}

}  // namespace

Status TableSink::Evolve(const std::vector<SourceColumn>& columns) {
  bool filled_column_added = false;
  iceberg::Schema evolved = schema_;
  int32_t last_id = last_column_id_;
  std::map<int32_t, int32_t> attnums = field_attnums_;
  auto find = [&](const std::string& column) -> iceberg::NestedField* {
    for (iceberg::NestedField& field : evolved.fields) {
      if (field.name == column) return &field;
    }
    return nullptr;
  };
  std::vector<std::string> kept;  // the table's columns the source still has
  for (const SourceColumn& column : columns) {
    if (!Selected(column.name)) continue;
    Result<MappedType> mapped = IcebergTypeFor(column.type);
    if (!mapped.ok()) {
      return Error(mapped.status().code(), source_.namespace_name + "." + source_.name + ": column " +
                                               column.name + ": " + mapped.status().message());
    }
    iceberg::NestedField* field = find(column.name);
    if (field == nullptr && column.attnum != 0) {
      // Renamed: the field written from the source's column of this attribute number, whose old
      // name the source no longer sends.
      for (iceberg::NestedField& candidate : evolved.fields) {
        auto attnum = attnums.find(candidate.id);
        if (attnum == attnums.end() || attnum->second != column.attnum) continue;
        const bool still_sent = std::any_of(columns.begin(), columns.end(),
                                            [&](const SourceColumn& c) { return c.name == candidate.name; });
        if (!still_sent) field = &candidate;
      }
      if (field != nullptr) field->name = column.name;
    }
    if (field == nullptr) {
      // Rows the table already holds would keep null where the source has the column's default.
      if (column.filled_when_added && reloadable_ && committed_.loaded) filled_column_added = true;
      iceberg::NestedField added;
      added.id = ++last_id;
      added.name = column.name;
      added.type = mapped->type;
      for (iceberg::NestedField& child : added.type.fields) child.id = ++last_id;
      if (column.attnum != 0) attnums[added.id] = column.attnum;
      evolved.fields.push_back(std::move(added));
    } else if (field->type.Name() != mapped->type.Name()) {
      if (!Promotable(field->type, mapped->type)) {
        return Error(ErrorCode::kInvalidArgument,
                     name() + ": column " + column.name + " changed from " + field->type.Name() + " to " +
                         mapped->type.Name() + " at the source, which an Iceberg column cannot become");
      }
      field->type = mapped->type;
    }
    if (field != nullptr && column.attnum != 0) attnums[field->id] = column.attnum;
    kept.push_back(column.name);
  }
  // Columns the source dropped leave the table's current schema (older snapshots keep them).
  for (const SourceColumn& before : source_.columns) {
    if (std::find(kept.begin(), kept.end(), before.name) != kept.end()) continue;
    const bool renamed_away = std::any_of(columns.begin(), columns.end(), [&](const SourceColumn& c) {
      return c.attnum != 0 && c.attnum == before.attnum;
    });
    if (renamed_away) continue;
    auto gone = std::find_if(evolved.fields.begin(), evolved.fields.end(),
                             [&](const iceberg::NestedField& field) { return field.name == before.name; });
    if (gone == evolved.fields.end()) continue;
    if (std::find(evolved.identifier_field_ids.begin(), evolved.identifier_field_ids.end(), gone->id) !=
        evolved.identifier_field_ids.end()) {
      return Error(ErrorCode::kInvalidArgument, name() + ": the source dropped key column " + before.name);
    }
    evolved.fields.erase(gone);
  }
  source_.columns = columns;
  if (iceberg::SchemaToJson(evolved) == iceberg::SchemaToJson(schema_)) {
    field_attnums_ = std::move(attnums);
    return Bind();
  }

  // The new schema, committed as Java's UpdateSchema commits it.
  SERAC_ASSIGN_OR_RETURN(iceberg::TableMetadata table, targets_.catalog->LoadTable(ref_));
  int32_t highest_schema_id = 0;
  for (const iceberg::Schema& schema : table.Schemas())
    highest_schema_id = std::max(highest_schema_id, schema.schema_id);
  evolved.schema_id = highest_schema_id + 1;
  const nlohmann::json requirements = nlohmann::json::array(
      {{{"type", "assert-current-schema-id"}, {"current-schema-id", table.current_schema_id()}},
       {{"type", "assert-last-assigned-field-id"}, {"last-assigned-field-id", table.last_column_id()}}});
  nlohmann::json properties = {{kAttnumsProperty, AttnumsToText(attnums)}};
  if (filled_column_added) properties[kReloadProperty] = "true";
  const nlohmann::json updates =
      nlohmann::json::array({{{"action", "add-schema"},
                              {"schema", nlohmann::json::parse(iceberg::SchemaToJson(evolved))},
                              {"last-column-id", std::max(last_id, table.last_column_id())}},
                             {{"action", "set-current-schema"}, {"schema-id", -1}},
                             {{"action", "set-properties"}, {"updates", std::move(properties)}}});
  if (table.current_schema_id() != schema_.schema_id || table.last_column_id() != last_column_id_) {
    return Error(ErrorCode::kConflict,
                 name() + ": its schema was changed by another writer while serac sync ran");
  }
  SERAC_RETURN_IF_ERROR(targets_.catalog->CommitTable(ref_, requirements.dump(), updates.dump()));
  SERAC_ASSIGN_OR_RETURN(table, targets_.catalog->LoadTable(ref_));
  schema_ = table.CurrentSchema();
  last_column_id_ = table.last_column_id();
  field_attnums_ = std::move(attnums);
  std::fprintf(stderr, "serac sync: %s: schema %d after the source's columns changed\n", name().c_str(),
               schema_.schema_id);
  if (filled_column_added) {
    reload_marked_ = true;
    committed_.loaded = false;
    std::fprintf(stderr,
                 "serac sync: %s: a column arrived with values in rows no change carried: loading again\n",
                 name().c_str());
  }
  return Bind();
}

Status TableSink::SetRelation(const pgoutput::Relation& relation) {
  // The columns as the source now sends them: when they differ from what the table was written
  // with, what is pending is committed under the old schema first, then the schema evolves.
  std::vector<std::pair<std::string, std::pair<uint32_t, int32_t>>> described;
  for (const pgoutput::Column& column : relation.columns) {
    described.emplace_back(column.name, std::make_pair(column.type_oid, column.type_modifier));
  }
  if (described != relation_columns_) {
    if (lookup_ == nullptr)
      return Error(ErrorCode::kInternal, name() + ": no connection to describe the source");
    std::vector<SourceColumn> columns;
    SERAC_ASSIGN_OR_RETURN(auto numbers, ColumnNumbers(*lookup_, source_.oid));
    for (const pgoutput::Column& column : relation.columns) {
      SourceColumn described_column;
      described_column.name = column.name;
      SERAC_ASSIGN_OR_RETURN(described_column.type,
                             DescribeType(*lookup_, column.type_oid, column.type_modifier));
      auto number = numbers.find(column.name);
      if (number != numbers.end()) {
        described_column.attnum = number->second.attnum;
        described_column.filled_when_added = number->second.filled_when_added;
      }
      columns.push_back(std::move(described_column));
    }
    if (has_pending()) SERAC_RETURN_IF_ERROR(Flush(committed_.lsn));
    SERAC_RETURN_IF_ERROR(Evolve(columns));
    relation_columns_ = std::move(described);
  }
  relation_fields_.assign(relation.columns.size(), -1);
  for (size_t c = 0; c < relation.columns.size(); ++c) {
    for (size_t i = 0; i < load_columns_.size(); ++i) {
      if (load_columns_[i] == relation.columns[c].name) relation_fields_[c] = load_fields_[i];
    }
  }
  for (int key : key_fields_) {
    if (std::find(relation_fields_.begin(), relation_fields_.end(), key) == relation_fields_.end()) {
      return Error(ErrorCode::kInvalidArgument, name() + ": the source's changes lack key column " +
                                                    schema_.fields[static_cast<size_t>(key)].name);
    }
  }
  return Status::Ok();
}

Result<std::string> TableSink::KeyOf(const pgoutput::Tuple& tuple,
                                     std::vector<std::optional<std::string>>& key) const {
  if (tuple.size() != relation_fields_.size()) {
    return Error(ErrorCode::kInvalidArgument, name() + ": a change of " + std::to_string(tuple.size()) +
                                                  " columns for a relation of " +
                                                  std::to_string(relation_fields_.size()));
  }
  key.assign(key_fields_.size(), std::nullopt);
  std::string bytes;
  for (size_t k = 0; k < key_fields_.size(); ++k) {
    for (size_t c = 0; c < tuple.size(); ++c) {
      if (relation_fields_[c] != key_fields_[k]) continue;
      const pgoutput::Value& value = tuple[c];
      if (value.kind == pgoutput::Value::Kind::kUnchangedToast ||
          value.kind == pgoutput::Value::Kind::kBinary) {
        return Error(ErrorCode::kInvalidArgument,
                     name() + ": key column " + schema_.fields[static_cast<size_t>(key_fields_[k])].name +
                         " came without its text value");
      }
      if (value.kind == pgoutput::Value::Kind::kText) key[k] = value.bytes;
    }
    AppendKeyPart(bytes, key[k]);
  }
  return bytes;
}

Status TableSink::Upsert(const pgoutput::Tuple& tuple, char op) {
  Entry entry;
  SERAC_ASSIGN_OR_RETURN(std::string key, KeyOf(tuple, entry.key));
  entry.op = op;
  entry.changed_at = change_time_;
  entry.row.emplace(schema_.fields.size());
  entry.unchanged.assign(schema_.fields.size(), false);
  bool any_unchanged = false;
  for (size_t c = 0; c < tuple.size(); ++c) {
    const int field = relation_fields_[c];
    if (field < 0) continue;
    const pgoutput::Value& value = tuple[c];
    switch (value.kind) {
      case pgoutput::Value::Kind::kText:
        (*entry.row)[static_cast<size_t>(field)] = value.bytes;
        pending_bytes_ += value.bytes.size();
        break;
      case pgoutput::Value::Kind::kUnchangedToast:
        entry.unchanged[static_cast<size_t>(field)] = true;
        any_unchanged = true;
        break;
      case pgoutput::Value::Kind::kBinary:
        return Error(ErrorCode::kInvalidArgument, name() + ": a value in binary form (text was asked for)");
      case pgoutput::Value::Kind::kNull:
        break;
    }
  }
  pending_bytes_ += 64;
  if (!has_key_ || append_mode_) {
    // Without a key (or in append mode) every change is a row of its own.
    entries_.push_back(std::move(entry));
    return Status::Ok();
  }
  auto found = pending_.find(key);
  if (found != pending_.end()) {
    Entry& earlier = entries_[found->second];
    // Values not sent (unchanged TOAST) are the earlier version's.
    if (any_unchanged && earlier.row) {
      for (size_t f = 0; f < entry.unchanged.size(); ++f) {
        if (!entry.unchanged[f]) continue;
        (*entry.row)[f] = (*earlier.row)[f];
        entry.unchanged[f] = earlier.unchanged[f];
      }
    }
    earlier.row = std::move(entry.row);
    earlier.unchanged = std::move(entry.unchanged);
    // An insert updated in the same flush is still the row's first version here ('c').
    if (!(earlier.op == 'c' && op == 'u')) earlier.op = op;
    earlier.changed_at = entry.changed_at;
    return Status::Ok();
  }
  pending_.emplace(std::move(key), entries_.size());
  entries_.push_back(std::move(entry));
  return Status::Ok();
}

Status TableSink::RemoveKey(const pgoutput::Tuple& key_tuple) {
  // Soft deletes: the row's last version goes and a row with _op_type d, its key and what the
  // source sent of the old row, takes its place.
  if (olake_columns_ && has_key_) return Upsert(key_tuple, 'd');
  // Append mode keeps every version: a delete has no row to add without OLake's columns.
  if (append_mode_) return Status::Ok();
  Entry entry;
  SERAC_ASSIGN_OR_RETURN(std::string key, KeyOf(key_tuple, entry.key));
  pending_bytes_ += 64;
  if (!has_key_) {
    // Earlier inserts of this flush must be committed first: an equality delete reaches only rows
    // of earlier commits.
    if (!entries_.empty()) SERAC_RETURN_IF_ERROR(Flush(committed_.lsn));
    entries_.push_back(std::move(entry));
    return Status::Ok();
  }
  auto found = pending_.find(key);
  if (found != pending_.end()) {
    entries_[found->second].row.reset();
    return Status::Ok();
  }
  pending_.emplace(std::move(key), entries_.size());
  entries_.push_back(std::move(entry));
  return Status::Ok();
}

Status TableSink::Insert(const pgoutput::Tuple& row) { return Upsert(row, 'c'); }

Status TableSink::UpsertLoaded(const SourceTexts& texts) {
  if (texts.size() != load_fields_.size()) {
    return Error(ErrorCode::kInvalidArgument, name() + ": a row of " + std::to_string(texts.size()) +
                                                  " values for " + std::to_string(load_fields_.size()) +
                                                  " columns");
  }
  // The same change as a pgoutput insert of the load columns, in their order.
  pgoutput::Tuple tuple(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    if (texts[i]) {
      tuple[i].kind = pgoutput::Value::Kind::kText;
      tuple[i].bytes = *texts[i];
    }
  }
  if (relation_fields_ != load_fields_) {
    relation_fields_ = load_fields_;
    relation_columns_.clear();  // the next Relation message maps its own columns again
  }
  return Upsert(tuple, 'u');
}

Status TableSink::CommitCursor(std::string cursor) {
  // Nothing read: the cursor stays where it is (the next run reads from it again).
  if (!has_pending()) return Status::Ok();
  const std::optional<std::string> before = committed_.cursor;
  committed_.cursor = std::move(cursor);
  Status flushed = Flush(committed_.lsn);
  if (!flushed.ok()) committed_.cursor = before;
  return flushed;
}

Status TableSink::Update(const pgoutput::Update& update) {
  if (!has_key_) {
    if (!update.old_row) {
      return Error(ErrorCode::kInvalidArgument,
                   name() + ": an update of a table without a primary key needs REPLICA IDENTITY FULL on " +
                       source_.namespace_name + "." + source_.name);
    }
    SERAC_RETURN_IF_ERROR(RemoveKey(*update.old_row));
    return Upsert(update.row, 'u');
  }
  // The key changed: the old key's row goes.
  if (update.old_key || update.old_row) {
    const pgoutput::Tuple& old = update.old_key ? *update.old_key : *update.old_row;
    std::vector<std::optional<std::string>> old_key;
    std::vector<std::optional<std::string>> new_key;
    SERAC_ASSIGN_OR_RETURN(std::string old_bytes, KeyOf(old, old_key));
    SERAC_ASSIGN_OR_RETURN(std::string new_bytes, KeyOf(update.row, new_key));
    if (old_bytes != new_bytes) SERAC_RETURN_IF_ERROR(RemoveKey(old));
  }
  return Upsert(update.row, 'u');
}

Status TableSink::Delete(const pgoutput::Delete& deleted) {
  if (deleted.old_key) return RemoveKey(*deleted.old_key);
  if (deleted.old_row) return RemoveKey(*deleted.old_row);
  return Error(ErrorCode::kInvalidArgument,
               name() + ": a delete without the row's key (REPLICA IDENTITY NOTHING on " +
                   source_.namespace_name + "." + source_.name + ")");
}

Status TableSink::Truncate(pgoutput::Lsn lsn) {
  SERAC_RETURN_IF_ERROR(Flush(committed_.lsn));
  return Commit(ChangeFiles(), lsn, true, std::nullopt);
}

Status TableSink::FillUnchanged(Entry& entry) {
  std::vector<size_t> missing;
  for (size_t f = 0; f < entry.unchanged.size(); ++f) {
    if (entry.unchanged[f]) missing.push_back(f);
  }
  if (missing.empty()) return Status::Ok();
  if (lookup_ == nullptr) {
    return Error(ErrorCode::kInternal, name() + ": an unchanged TOAST value and no connection to read it");
  }
  std::string sql = "SELECT ";
  for (size_t i = 0; i < missing.size(); ++i) {
    sql += (i ? ", " : "") + QuoteIdentifier(schema_.fields[missing[i]].name) + "::text";
  }
  sql += " FROM " + source_.QualifiedName() + " WHERE ";
  std::vector<std::optional<std::string>> params;
  for (size_t k = 0; k < key_fields_.size(); ++k) {
    const std::string& column = schema_.fields[static_cast<size_t>(key_fields_[k])].name;
    sql += (k ? " AND " : "") + QuoteIdentifier(column) + "::text = $" + std::to_string(k + 1);
    params.push_back(entry.key[k]);
  }
  SERAC_ASSIGN_OR_RETURN(PgRows rows, lookup_->Query(sql, params));
  for (size_t i = 0; i < missing.size(); ++i) {
    // A row deleted since has its delete later in the stream; null stands in until then.
    (*entry.row)[missing[i]] = rows.rows.empty() ? std::nullopt : rows.rows[0][i];
    entry.unchanged[missing[i]] = false;
  }
  return Status::Ok();
}

void TableSink::FillOlakeColumns(const Entry& entry, parquet::Row& row, int64_t now_micros) const {
  auto put = [&](int field, iceberg::Datum value) {
    if (field >= 0) row[static_cast<size_t>(field)].datum = std::move(value);
  };
  if (has_key_) put(olake_fields_[0], iceberg::Datum(OlakeId(entry.key)));
  put(olake_fields_[1], iceberg::Datum(std::string(1, entry.op)));
  if (entry.changed_at != 0) put(olake_fields_[2], iceberg::Datum(entry.changed_at));
  put(olake_fields_[3], iceberg::Datum(now_micros));
}

std::string TableSink::OlakeId(const std::vector<std::optional<std::string>>& key) const {
  if (key.size() == 1) return key[0].value_or("");
  // A composite key: MD5 of the values joined by |, in the order of the key columns' names.
  std::vector<std::pair<std::string, std::string>> named;
  for (size_t k = 0; k < key.size(); ++k) {
    named.emplace_back(schema_.fields[static_cast<size_t>(key_fields_[k])].name, key[k].value_or(""));
  }
  std::sort(named.begin(), named.end());
  std::string joined;
  for (size_t k = 0; k < named.size(); ++k) joined += (k ? "|" : "") + named[k].second;
  const Md5Digest digest = Md5(joined);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t byte : digest) {
    hex += kHex[byte >> 4];
    hex += kHex[byte & 15];
  }
  return hex;
}

Result<std::vector<iceberg::DataFile>> TableSink::WritePendingRows() {
  const int64_t now_micros = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
  SERAC_ASSIGN_OR_RETURN(parquet::DataFileWriter writer, NewLoadWriter());
  std::vector<parquet::Row> rows;
  uint64_t written = 0;
  auto write_rows = [&]() -> Status {
    SERAC_RETURN_IF_ERROR(writer.AppendRows(rows, name(), static_cast<int64_t>(written) + 1));
    written += rows.size();
    rows.clear();
    return Status::Ok();
  };
  Status status = Status::Ok();
  for (Entry& entry : entries_) {
    if (!entry.row) continue;
    status = FillUnchanged(entry);
    if (!status.ok()) break;
    parquet::Row row(schema_.fields.size());
    for (size_t f = 0; f < schema_.fields.size(); ++f) {
      std::optional<std::string_view> text;
      if ((*entry.row)[f]) text = *(*entry.row)[f];
      Result<parquet::RowValue> value = ValueFromText(text, schema_.fields[f].type);
      if (!value.ok()) {
        status = Error(value.status().code(), source_.namespace_name + "." + source_.name + ": column " +
                                                  schema_.fields[f].name + ": " + value.status().message());
        break;
      }
      row[f] = std::move(value).value();
    }
    if (!status.ok()) break;
    if (olake_columns_) FillOlakeColumns(entry, row, now_micros);
    rows.push_back(std::move(row));
    if (rows.size() >= 4096) {
      status = write_rows();
      if (!status.ok()) break;
    }
  }
  if (status.ok() && !rows.empty()) status = write_rows();
  Result<std::vector<iceberg::DataFile>> files =
      status.ok() ? writer.Finish() : Result<std::vector<iceberg::DataFile>>(status);
  if (!files.ok()) {
    writer.AbortAndDelete();
    return files.status();
  }
  rows_written_ += written;
  return files;
}

Result<std::vector<iceberg::DataFile>> TableSink::WriteEqualityDeletes(
    const std::vector<parquet::Row>& keys) {
  SERAC_ASSIGN_OR_RETURN(
      parquet::DataFileWriter writer,
      parquet::DataFileWriter::Make(key_schema_, spec_, options_, *targets_.io, data_location_));
  Status appended = writer.AppendRows(keys, name() + " (deleted keys)", 1);
  Result<std::vector<iceberg::DataFile>> files =
      appended.ok() ? writer.Finish() : Result<std::vector<iceberg::DataFile>>(appended);
  if (!files.ok()) {
    writer.AbortAndDelete();
    return files.status();
  }
  std::vector<int32_t> ids;
  for (const iceberg::NestedField& field : key_schema_.fields) ids.push_back(field.id);
  for (iceberg::DataFile& file : *files) {
    file.content = iceberg::FileContent::kEqualityDeletes;
    file.equality_ids = ids;
    file.sort_order_id.reset();
  }
  return files;
}

Status TableSink::StageFlush(pgoutput::Lsn lsn) {
  // Every key touched: the rows earlier commits wrote with it go.
  std::vector<parquet::Row> keys;
  for (const Entry& entry : entries_) {
    // An insert into a table without a key, and any row in append mode, deletes nothing.
    if ((!has_key_ || append_mode_) && entry.row) continue;
    parquet::Row key(key_schema_.fields.size());
    for (size_t k = 0; k < key_fields_.size(); ++k) {
      std::optional<std::string_view> text;
      if (entry.key[k]) text = *entry.key[k];
      SERAC_ASSIGN_OR_RETURN(key[k], ValueFromText(text, key_schema_.fields[k].type));
    }
    keys.push_back(std::move(key));
  }
  std::optional<parquet::RowKeys> position_keys;
  if (deletes_ != DeleteKind::kEquality && !keys.empty()) {
    SERAC_ASSIGN_OR_RETURN(position_keys, parquet::RowKeys::FromRows(key_schema_, keys));
  }
  staged_ = std::make_unique<StagedFlush>();
  staged_->lsn = lsn;
  staged_->position_keys = std::move(position_keys);
  Status staged = Status::Ok();
  Result<std::vector<iceberg::DataFile>> data = WritePendingRows();
  if (data.ok()) {
    staged_->files.data = std::move(data).value();
    if (deletes_ == DeleteKind::kEquality) {
      Result<std::vector<iceberg::DataFile>> deletes =
          keys.empty() ? std::vector<iceberg::DataFile>() : WriteEqualityDeletes(keys);
      if (deletes.ok()) staged_->files.deletes = std::move(deletes).value();
      staged = deletes.status();
    }
  } else {
    staged = data.status();
  }
  if (staged.ok()) staged = RestageFlush(true);
  if (!staged.ok()) EndStagedFlush(staged);
  return staged;
}

Status TableSink::FindPositionDeletes() {
  // The rows are found in the table as it is now; a commit that lands between (a compaction that
  // rewrote a file the deletes point into) fails validation, and the rows are found again.
  for (const iceberg::DataFile& file : staged_->files.deletes) (void)targets_.io->Delete(file.file_path);
  staged_->files.deletes.clear();
  staged_->files.replaced.clear();
  SERAC_ASSIGN_OR_RETURN(iceberg::TableMetadata table, targets_.catalog->LoadTable(ref_));
  const std::optional<iceberg::Snapshot> current = table.CurrentSnapshot();
  staged_->validate_from = current ? std::optional<int64_t>(current->snapshot_id) : std::nullopt;
  if (!staged_->position_keys) return Status::Ok();
  SERAC_ASSIGN_OR_RETURN(iceberg::TableFiles live, iceberg::ReadTableFiles(*targets_.io, current));
  if (key_index_ != nullptr) {
    // Index files of data files a compaction or a load replaced go.
    std::set<std::string> live_paths;
    for (const iceberg::LiveFile& data : live.data) live_paths.insert(data.file.file_path);
    key_index_->Retain(live_paths);
  }
  SERAC_ASSIGN_OR_RETURN(parquet::RowDeletes deletes,
                         parquet::DeleteRowsByKey(*targets_.io, *staged_->position_keys, live,
                                                  deletes_ == DeleteKind::kDeletionVectors
                                                      ? parquet::PositionDeletes::kDeletionVectors
                                                      : parquet::PositionDeletes::kFiles,
                                                  options_, data_location_, key_index_.get()));
  staged_->files.deletes = std::move(deletes.added);
  staged_->files.replaced = std::move(deletes.replaced);
  return Status::Ok();
}

Status TableSink::RestageFlush(bool find_again) {
  if (find_again && deletes_ != DeleteKind::kEquality) SERAC_RETURN_IF_ERROR(FindPositionDeletes());
  staged_->producer = MakeProducer(staged_->files, staged_->lsn, false, staged_->validate_from);
  return Status::Ok();
}

void TableSink::EndStagedFlush(const Status& committed) {
  if (committed.ok()) {
    committed_.lsn = std::max(committed_.lsn, staged_->lsn);
    entries_.clear();
    pending_.clear();
    pending_bytes_ = 0;
  } else if (committed.code() != ErrorCode::kOutcomeUnknown) {
    DeleteWritten(staged_->files);
  }
  staged_.reset();
}

Status TableSink::Flush(pgoutput::Lsn lsn) {
  // Nothing pending: the table's position moves with its next commit that has something (a
  // restart resumes at the slot's acknowledged position, which covers the changes in between).
  if (entries_.empty()) return Status::Ok();
  SERAC_RETURN_IF_ERROR(StageFlush(lsn));
  Status committed = Status::Ok();
  for (int attempt = 1;; ++attempt) {
    Result<int64_t> snapshot = iceberg::CommitSnapshot(*targets_.catalog, ref_, *staged_->producer);
    committed = snapshot.status();
    if (committed.ok() || committed.code() != ErrorCode::kValidationFailed || attempt >= 3) break;
    committed = RestageFlush(true);
    if (!committed.ok()) break;
  }
  if (!committed.ok()) {
    committed = Error(committed.code(), "committing to " + name() + ": " + committed.message());
  }
  EndStagedFlush(committed);
  return committed;
}

Status FlushTogether(const std::vector<TableSink*>& sinks, pgoutput::Lsn lsn,
                     iceberg::TableCatalog& catalog) {
  std::vector<TableSink*> pending;
  for (TableSink* sink : sinks) {
    if (sink->has_pending()) pending.push_back(sink);
  }
  if (pending.size() < 2 || !catalog.CommitsAcrossTables()) {
    for (TableSink* sink : pending) SERAC_RETURN_IF_ERROR(sink->Flush(lsn));
    return Status::Ok();
  }
  if (pending.size() > kSyncTablesPerCommitMax) {
    for (size_t first = 0; first < pending.size(); first += kSyncTablesPerCommitMax) {
      const size_t end = std::min(pending.size(), first + kSyncTablesPerCommitMax);
      SERAC_RETURN_IF_ERROR(FlushTogether({pending.begin() + first, pending.begin() + end}, lsn, catalog));
    }
    return Status::Ok();
  }
  size_t staged_count = 0;
  Status committed = Status::Ok();
  for (; staged_count < pending.size() && committed.ok(); ++staged_count) {
    committed = pending[staged_count]->StageFlush(lsn);
  }
  if (!committed.ok()) {
    // The one that failed has ended its flush; the ones staged before it end theirs.
    for (size_t i = 0; i + 1 < staged_count; ++i) pending[i]->EndStagedFlush(committed);
    return committed;
  }
  for (int attempt = 1;; ++attempt) {
    std::vector<iceberg::TableSnapshotChange> changes;
    for (TableSink* sink : pending) changes.push_back(sink->staged_change());
    size_t failed = pending.size();
    committed = iceberg::CommitSnapshots(catalog, changes, &failed);
    if (committed.ok() || committed.code() != ErrorCode::kValidationFailed || failed >= pending.size() ||
        attempt >= 3) {
      break;
    }
    // A commit that moved the rows one table's deletes point to landed first: that table finds
    // them again, the others only make their snapshots anew.
    for (size_t i = 0; i < pending.size() && committed.ok(); ++i) {
      committed = pending[i]->RestageFlush(i == failed);
    }
    if (!committed.ok()) break;
  }
  if (!committed.ok()) {
    std::string names;
    for (TableSink* sink : pending) names += (names.empty() ? "" : ", ") + sink->name();
    committed = Error(committed.code(), "committing to " + names + ": " + committed.message());
  }
  for (TableSink* sink : pending) sink->EndStagedFlush(committed);
  return committed;
}

}  // namespace serac::sync
