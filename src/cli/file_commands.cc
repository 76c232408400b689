// `serac file show FILE`: what is inside a file of a table, without a server. Avro object container
// files (manifests, manifest lists) print their header metadata and then one record per line in
// Avro's JSON encoding, so they can be read, diffed and piped to jq. With --iceberg, a manifest or
// manifest list is read as Iceberg reads it (fields by id, whoever wrote it) and each entry printed
// with its partition values and column bounds in the types the header's schema gives them.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/client_commands_internal.h"
#include "common/encoding.h"
#include "common/json_reads.h"
#include "common/limits.h"
#include "iceberg/avro/avro.h"
#include "iceberg/manifest/manifest.h"

namespace serac::cli {

namespace {

constexpr std::string_view kAvroMagic("Obj\x01", 4);

Status ShowAvro(const std::string& path, const std::string& bytes, const CommandState& state) {
  auto reader = iceberg::avro::FileReader::Open(bytes);
  if (!reader.ok()) return Error(ErrorCode::kInvalidArgument, path + ": " + reader.status().message());
  Json header = Json::object();
  for (const auto& [key, value] : reader->metadata()) {
    if (key == "avro.schema") continue;
    header[key] = value;
  }
  Json head = {{"file", path},
               {"format", "avro"},
               {"metadata", header},
               {"schema", Json::parse(iceberg::avro::SchemaToJson(*reader->schema()), nullptr, false)}};
  Print(head.dump(-1, ' ', false, Json::error_handler_t::replace));
  if (state.schema_only) return Status::Ok();
  uint64_t printed = 0;
  uint64_t count = 0;
  std::string_view encoded;
  while (true) {
    Result<bool> more = reader->NextBlock(count, encoded);
    if (!more.ok()) return Error(ErrorCode::kInvalidArgument, path + ": " + more.status().message());
    if (!*more) return Status::Ok();
    for (uint64_t i = 0; i < count; ++i) {
      if (state.limit != 0 && printed == state.limit) return Status::Ok();
      auto value = iceberg::avro::Decode(*reader->schema(), encoded);
      if (!value.ok()) {
        return Error(ErrorCode::kInvalidArgument,
                     path + ": record " + std::to_string(printed + 1) + ": " + value.status().message());
      }
      Print(iceberg::avro::ValueToJson(*reader->schema(), *value));
      ++printed;
    }
  }
}

const char* StatusName(iceberg::EntryStatus status) {
  switch (status) {
    case iceberg::EntryStatus::kExisting:
      return "EXISTING";
    case iceberg::EntryStatus::kAdded:
      return "ADDED";
    case iceberg::EntryStatus::kDeleted:
      return "DELETED";
  }
  return "?";
}

Json DatumJson(const iceberg::Type* type, const iceberg::Datum& value) {
  if (iceberg::IsNull(value)) return nullptr;
  if (const auto* b = std::get_if<bool>(&value)) return *b;
  if (const auto* i = std::get_if<int32_t>(&value)) {
    if (type == nullptr || type->id == iceberg::TypeId::kInt) return *i;
  }
  if (const auto* l = std::get_if<int64_t>(&value)) {
    if (type == nullptr || type->id == iceberg::TypeId::kLong) return *l;
  }
  if (type != nullptr) return iceberg::DatumToText(*type, value);
  if (const auto* s = std::get_if<std::string>(&value)) return HexEncode(*s);
  return iceberg::DatumToText(iceberg::Type{}, value);
}

Json CountsJson(const iceberg::ColumnCounts& counts) {
  Json out = Json::object();
  for (const auto& [id, count] : counts) out[std::to_string(id)] = count;
  return out;
}

// Bounds in their column's type when the schema has the column, else as hex.
Json BoundsJson(const iceberg::ColumnBounds& bounds, const iceberg::Schema* schema) {
  Json out = Json::object();
  for (const auto& [id, bytes] : bounds) {
    const iceberg::NestedField* field = schema != nullptr ? schema->FindField(id) : nullptr;
    Json value = HexEncode(bytes);
    if (field != nullptr && field->type.is_primitive()) {
      auto datum = iceberg::FromSingleValue(field->type, bytes);
      if (datum.ok()) value = DatumJson(&field->type, *datum);
    }
    out[std::to_string(id)] = std::move(value);
  }
  return out;
}

template <typename T>
void SetIf(Json& out, const char* key, const std::optional<T>& value) {
  if (value) out[key] = *value;
}

Json EntryJson(const iceberg::ManifestEntry& entry, const iceberg::ManifestHeaderTypes* types) {
  const iceberg::DataFile& f = entry.file;
  Json partition = Json::object();
  for (size_t i = 0; i < f.partition.size(); ++i) {
    const bool typed = types != nullptr && i < types->partition_type.fields.size();
    const std::string name = typed ? types->partition_type.fields[i].name : std::to_string(i);
    partition[name] = DatumJson(typed ? &types->partition_type.fields[i].type : nullptr, f.partition[i]);
  }
  Json file = {{"content", static_cast<int>(f.content)}, {"file_path", f.file_path},
               {"file_format", f.file_format},           {"partition", partition},
               {"record_count", f.record_count},         {"file_size_in_bytes", f.file_size_in_bytes}};
  const iceberg::Schema* schema = types != nullptr ? &types->schema : nullptr;
  if (!f.column_sizes.empty()) file["column_sizes"] = CountsJson(f.column_sizes);
  if (!f.value_counts.empty()) file["value_counts"] = CountsJson(f.value_counts);
  if (!f.null_value_counts.empty()) file["null_value_counts"] = CountsJson(f.null_value_counts);
  if (!f.nan_value_counts.empty()) file["nan_value_counts"] = CountsJson(f.nan_value_counts);
  if (!f.lower_bounds.empty()) file["lower_bounds"] = BoundsJson(f.lower_bounds, schema);
  if (!f.upper_bounds.empty()) file["upper_bounds"] = BoundsJson(f.upper_bounds, schema);
  if (f.key_metadata) file["key_metadata"] = HexEncode(*f.key_metadata);
  if (!f.split_offsets.empty()) file["split_offsets"] = f.split_offsets;
  if (!f.equality_ids.empty()) file["equality_ids"] = f.equality_ids;
  SetIf(file, "sort_order_id", f.sort_order_id);
  SetIf(file, "referenced_data_file", f.referenced_data_file);
  SetIf(file, "first_row_id", f.first_row_id);
  SetIf(file, "content_offset", f.content_offset);
  SetIf(file, "content_size_in_bytes", f.content_size_in_bytes);
  Json out = {{"status", StatusName(entry.status)}};
  SetIf(out, "snapshot_id", entry.snapshot_id);
  SetIf(out, "sequence_number", entry.sequence_number);
  SetIf(out, "file_sequence_number", entry.file_sequence_number);
  out["data_file"] = std::move(file);
  return out;
}

Json ManifestFileJson(const iceberg::ManifestFile& m) {
  Json partitions = Json::array();
  for (const iceberg::PartitionFieldSummary& summary : m.partitions) {
    Json item = {{"contains_null", summary.contains_null}};
    SetIf(item, "contains_nan", summary.contains_nan);
    if (summary.lower_bound) item["lower_bound"] = HexEncode(*summary.lower_bound);
    if (summary.upper_bound) item["upper_bound"] = HexEncode(*summary.upper_bound);
    partitions.push_back(std::move(item));
  }
  Json out = {{"manifest_path", m.manifest_path},
              {"manifest_length", m.manifest_length},
              {"partition_spec_id", m.partition_spec_id},
              {"content", static_cast<int>(m.content)},
              {"sequence_number", m.sequence_number},
              {"min_sequence_number", m.min_sequence_number},
              {"added_snapshot_id", m.added_snapshot_id},
              {"added_files_count", m.added_files_count},
              {"existing_files_count", m.existing_files_count},
              {"deleted_files_count", m.deleted_files_count},
              {"added_rows_count", m.added_rows_count},
              {"existing_rows_count", m.existing_rows_count},
              {"deleted_rows_count", m.deleted_rows_count},
              {"partitions", partitions}};
  if (m.key_metadata) out["key_metadata"] = HexEncode(*m.key_metadata);
  SetIf(out, "first_row_id", m.first_row_id);
  return out;
}

void PrintJson(const Json& value) { Print(value.dump(-1, ' ', false, Json::error_handler_t::replace)); }

// A manifest's header names its partition spec; a manifest list's its snapshot.
Status ShowIceberg(const std::string& path, const std::string& bytes, const CommandState& state) {
  auto reader = iceberg::avro::FileReader::Open(bytes);
  if (!reader.ok()) return Error(ErrorCode::kInvalidArgument, path + ": " + reader.status().message());
  const bool is_manifest = reader->FindMetadata("partition-spec") != nullptr ||
                           reader->FindMetadata("partition-spec-id") != nullptr;
  const bool is_list = !is_manifest && reader->FindMetadata("snapshot-id") != nullptr;
  if (!is_manifest && !is_list) {
    return Error(
        ErrorCode::kInvalidArgument,
        path + ": neither a manifest (no partition-spec in its header) nor a manifest list (no snapshot-id)");
  }
  auto limited = [&](size_t index) { return state.limit != 0 && index >= state.limit; };
  if (is_list) {
    auto manifests = iceberg::ReadManifestList(bytes, path);
    if (!manifests.ok()) return manifests.status();
    PrintJson({{"file", path}, {"kind", "manifest list"}, {"manifests", manifests->size()}});
    if (state.schema_only) return Status::Ok();
    for (size_t i = 0; i < manifests->size() && !limited(i); ++i)
      PrintJson(ManifestFileJson((*manifests)[i]));
    return Status::Ok();
  }
  iceberg::ManifestFile listed;
  listed.manifest_path = path;
  auto contents = iceberg::ReadManifest(bytes, listed, /*inherit=*/false);
  if (!contents.ok()) return contents.status();
  auto types = iceberg::ReadManifestHeaderTypes(*contents);
  Json head = {{"file", path},
               {"kind", "manifest"},
               {"format_version", contents->format_version},
               {"content", contents->content == iceberg::ManifestContent::kData ? "data" : "deletes"},
               {"partition_spec_id", contents->partition_spec_id},
               {"entries", contents->entries.size()}};
  if (!types.ok()) head["types"] = "unknown: " + types.status().message();
  PrintJson(head);
  if (state.schema_only) return Status::Ok();
  for (size_t i = 0; i < contents->entries.size() && !limited(i); ++i) {
    PrintJson(EntryJson(contents->entries[i], types.ok() ? &*types : nullptr));
  }
  return Status::Ok();
}

Status ShowFile(const CommandState& state) {
  SERAC_ASSIGN_OR_RETURN(std::string bytes, ReadInputFile(state.file, limits::kCliShownFileBytesMax,
                                                          "limits::kCliShownFileBytesMax", "file"));
  if (std::string_view(bytes).starts_with(kAvroMagic)) {
    return state.iceberg_view ? ShowIceberg(state.file, bytes, state) : ShowAvro(state.file, bytes, state);
  }
  return Error(ErrorCode::kInvalidArgument,
               state.file + ": not a file serac can show (Avro object container files are)");
}

}  // namespace

void RegisterFileCommands(CLI::App& app, CommandState& state) {
  CLI::App* group = app.add_subcommand("file", "Look inside a table's files (no server needed)");
  group->require_subcommand(1);
  CLI::App* show = group->add_subcommand("show", "Print a file's header and records as JSON lines");
  show->add_option("FILE", state.file, "Local file (an Avro manifest or manifest list)")->required();
  show->add_flag("--schema-only", state.schema_only, "Print the header line only");
  show->add_flag(
      "--iceberg", state.iceberg_view,
      "Read a manifest or manifest list as Iceberg does: typed entries, partition values and bounds");
  show->add_option("--limit", state.limit, "Print at most this many records (0: all)");
  show->callback([&state] { state.action = [&state] { return ShowFile(state); }; });
}

}  // namespace serac::cli
