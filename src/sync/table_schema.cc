// TableSink's schema: the table opened (made from the source's columns when missing), its columns
// bound to the source's, and evolved when the source's columns change (a Relation message, a load).
#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <map>

#include "iceberg/schema/partition.h"
#include "sync/table_sink.h"
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

// Whether Iceberg may change a column of type `from` to `to` (the spec's type promotions).
bool Promotable(const iceberg::Type& from, const iceberg::Type& to) {
  using iceberg::TypeId;
  if (from.id == TypeId::kInt && to.id == TypeId::kLong) return true;
  if (from.id == TypeId::kFloat && to.id == TypeId::kDouble) return true;
  return from.id == TypeId::kDecimal && to.id == TypeId::kDecimal && from.scale == to.scale &&
         to.precision >= from.precision;
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

Status TableSink::PrepareLoad(const std::vector<SourceColumn>& columns) { return Evolve(columns); }

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
  std::map<std::string, std::string> properties = {{kAttnumsProperty, AttnumsToText(attnums)}};
  if (filled_column_added) properties[kReloadProperty] = "true";
  iceberg::TableChanges evolve;
  evolve.requirements = {iceberg::AssertCurrentSchemaId{table.current_schema_id()},
                         iceberg::AssertLastAssignedFieldId{table.last_column_id()}};
  evolve.updates = {iceberg::AddSchema::Of(evolved, std::max(last_id, table.last_column_id())),
                    iceberg::SetCurrentSchema{iceberg::kLastAdded},
                    iceberg::SetProperties{std::move(properties)}};
  if (table.current_schema_id() != schema_.schema_id || table.last_column_id() != last_column_id_) {
    return Error(ErrorCode::kConflict,
                 name() + ": its schema was changed by another writer while serac sync ran");
  }
  SERAC_RETURN_IF_ERROR(targets_.catalog->CommitTable(ref_, evolve));
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

}  // namespace serac::sync
