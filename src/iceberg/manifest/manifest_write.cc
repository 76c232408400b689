// Writing manifests and manifest lists: entries encoded by hand in the order of the schema
// manifest_schema.cc builds (the header carries that schema), with the counters and partition
// summaries Java's ManifestWriter keeps.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "iceberg/avro/avro_encoding_internal.h"
#include "iceberg/manifest/manifest.h"
#include "iceberg/manifest/manifest_internal.h"

namespace serac::iceberg {

namespace enc = avro::encoding;

namespace {

Status Invalid(std::string message) { return Error(ErrorCode::kInvalidArgument, std::move(message)); }

// Java's default block size of v1 data files (block_size_in_bytes is required there and unused).
constexpr int64_t kV1BlockSizeBytes = 64 * 1024 * 1024;

void AppendNull(std::string& out) { enc::AppendLong(out, 0); }  // union branch 0: null
void AppendSome(std::string& out) { enc::AppendLong(out, 1); }  // union branch 1: the value

void AppendOptionalLong(std::string& out, const std::optional<int64_t>& value) {
  if (!value) return AppendNull(out);
  AppendSome(out);
  enc::AppendLong(out, *value);
}

void AppendOptionalBytes(std::string& out, const std::optional<std::string>& value) {
  if (!value) return AppendNull(out);
  AppendSome(out);
  enc::AppendBytes(out, *value);
}

// An optional map<int, long> as Java writes it: an array of {key, value} records, null when empty.
void AppendCounts(std::string& out, const ColumnCounts& counts) {
  if (counts.empty()) return AppendNull(out);
  AppendSome(out);
  enc::AppendLong(out, static_cast<int64_t>(counts.size()));
  for (const auto& [id, count] : counts) {
    enc::AppendLong(out, id);
    enc::AppendLong(out, count);
  }
  enc::AppendLong(out, 0);
}

void AppendBounds(std::string& out, const ColumnBounds& bounds) {
  if (bounds.empty()) return AppendNull(out);
  AppendSome(out);
  enc::AppendLong(out, static_cast<int64_t>(bounds.size()));
  for (const auto& [id, bound] : bounds) {
    enc::AppendLong(out, id);
    enc::AppendBytes(out, bound);
  }
  enc::AppendLong(out, 0);
}

template <typename Int>
void AppendOptionalList(std::string& out, const std::vector<Int>& items) {
  if (items.empty()) return AppendNull(out);
  AppendSome(out);
  enc::AppendLong(out, static_cast<int64_t>(items.size()));
  for (Int item : items) enc::AppendLong(out, item);
  enc::AppendLong(out, 0);
}

// One partition value in its field's Avro type (the non-null branch of the field's union).
Status AppendPartitionValue(std::string& out, const avro::Schema& type, const Datum& value,
                            const std::string& name) {
  if (IsNull(value)) {
    AppendNull(out);
    return Status::Ok();
  }
  auto wrong = [&] { return Invalid("partition field " + name + ": a value of the wrong kind"); };
  AppendSome(out);
  switch (type.type) {
    case avro::Type::kBoolean:
      if (const auto* b = std::get_if<bool>(&value)) {
        out.push_back(*b ? '\1' : '\0');
        return Status::Ok();
      }
      return wrong();
    case avro::Type::kInt:
      if (const auto* i = std::get_if<int32_t>(&value)) {
        enc::AppendLong(out, *i);
        return Status::Ok();
      }
      return wrong();
    case avro::Type::kLong:
      if (const auto* l = std::get_if<int64_t>(&value)) {
        enc::AppendLong(out, *l);
        return Status::Ok();
      }
      return wrong();
    case avro::Type::kFloat:
      if (const auto* f = std::get_if<float>(&value)) {
        enc::AppendFloat(out, *f);
        return Status::Ok();
      }
      return wrong();
    case avro::Type::kDouble:
      if (const auto* d = std::get_if<double>(&value)) {
        enc::AppendDouble(out, *d);
        return Status::Ok();
      }
      return wrong();
    case avro::Type::kString:
    case avro::Type::kBytes:
      if (const auto* s = std::get_if<std::string>(&value)) {
        enc::AppendBytes(out, *s);
        return Status::Ok();
      }
      return wrong();
    case avro::Type::kFixed: {
      const auto* s = std::get_if<std::string>(&value);
      if (s == nullptr) return wrong();
      const auto size = static_cast<size_t>(type.fixed_size);
      if (type.logical_type == "decimal") {
        // A Datum holds a decimal in its minimal form (what every reader gives back).
        const bool minimal = !s->empty() && TrimTwosComplement(*s).size() == s->size();
        if (!minimal || s->size() > size) return wrong();
        // Sign-extend the unscaled value to the fixed size.
        const char fill = (static_cast<uint8_t>((*s)[0]) & 0x80) ? '\xFF' : '\0';
        out.append(size - s->size(), fill);
        out.append(*s);
        return Status::Ok();
      }
      if (s->size() != size) return wrong();
      out.append(*s);
      return Status::Ok();
    }
    default:
      return wrong();
  }
}

// The partition summary of one field across a manifest's entries (Java's PartitionSummary).
struct FieldSummaryBuilder {
  const Type* type = nullptr;
  bool contains_null = false;
  bool contains_nan = false;
  std::optional<Datum> lower;
  std::optional<Datum> upper;

  void Update(const Datum& value) {
    if (IsNull(value)) {
      contains_null = true;
    } else if (IsNaN(value)) {
      contains_nan = true;
    } else {
      if (!lower || CompareDatums(*type, value, *lower) < 0) lower = value;
      if (!upper || CompareDatums(*type, value, *upper) > 0) upper = value;
    }
  }

  PartitionFieldSummary Build() const {
    PartitionFieldSummary summary;
    summary.contains_null = contains_null;
    summary.contains_nan = contains_nan;
    if (lower) {
      auto bytes = ToSingleValue(*type, *lower);
      if (bytes.ok()) summary.lower_bound = std::move(bytes).value();
    }
    if (upper) {
      auto bytes = ToSingleValue(*type, *upper);
      if (bytes.ok()) summary.upper_bound = std::move(bytes).value();
    }
    return summary;
  }
};

std::string ContentName(ManifestContent content) {
  return content == ManifestContent::kData ? "data" : "deletes";
}

}  // namespace

struct ManifestWriter::State {
  ManifestWriterOptions options;
  int32_t spec_id = 0;
  Type partition_type;
  std::vector<std::string> partition_names;
  std::vector<avro::SchemaPtr> partition_avro;  // each field's non-null type
  std::vector<FieldSummaryBuilder> summaries;
  std::optional<avro::FileWriter> file;
  std::string scratch;
  ManifestFile manifest;
  std::optional<int64_t> min_sequence_number;
};

ManifestWriter::ManifestWriter(std::unique_ptr<State> state) : state_(std::move(state)) {}
ManifestWriter::ManifestWriter(ManifestWriter&&) noexcept = default;
ManifestWriter& ManifestWriter::operator=(ManifestWriter&&) noexcept = default;
ManifestWriter::~ManifestWriter() = default;

uint64_t ManifestWriter::approximate_size() const { return state_->file->approximate_size(); }

Result<ManifestWriter> ManifestWriter::Make(const Schema& schema, const PartitionSpec& spec,
                                            ManifestWriterOptions options) {
  if (options.format_version < 1 || options.format_version > 3) {
    return Invalid("manifest format version " + std::to_string(options.format_version) + " is not 1, 2 or 3");
  }
  if (options.format_version == 1 && options.content != ManifestContent::kData) {
    return Invalid("a format v1 table has no delete manifests");
  }
  auto state = std::make_unique<State>();
  state->options = options;
  state->spec_id = spec.spec_id;
  SERAC_ASSIGN_OR_RETURN(state->partition_type, PartitionType(spec, schema));
  avro::SchemaPtr entry_schema = ManifestEntrySchema(options.format_version, state->partition_type);
  const avro::Schema& data_file = *entry_schema->fields[entry_schema->FieldIndex("data_file")].type;
  const avro::Schema& partition = *data_file.fields[data_file.FieldIndex("partition")].type;
  for (size_t i = 0; i < partition.fields.size(); ++i) {
    const avro::Schema* value_type = partition.fields[i].type->OptionalOf();
    state->partition_avro.push_back(
        value_type != nullptr ? std::shared_ptr<const avro::Schema>(partition.fields[i].type, value_type)
                              : partition.fields[i].type);
    state->partition_names.push_back(state->partition_type.fields[i].name);
  }
  state->summaries.resize(state->partition_type.fields.size());
  for (size_t i = 0; i < state->summaries.size(); ++i)
    state->summaries[i].type = &state->partition_type.fields[i].type;

  avro::FileWriterOptions file_options;
  file_options.codec = options.codec;
  file_options.metadata = {
      {"schema", SchemaToJson(schema)},
      {"schema-id", std::to_string(schema.schema_id)},
      {"partition-spec", PartitionFieldsJson(spec)},
      {"partition-spec-id", std::to_string(spec.spec_id)},
      {"format-version", std::to_string(options.format_version)},
  };
  if (options.format_version >= 2)
    file_options.metadata.emplace_back("content", ContentName(options.content));
  SERAC_ASSIGN_OR_RETURN(avro::FileWriter file,
                         avro::FileWriter::Make(entry_schema, std::move(file_options)));
  state->file.emplace(std::move(file));
  state->manifest.partition_spec_id = spec.spec_id;
  state->manifest.content = options.content;
  state->manifest.added_snapshot_id = options.snapshot_id;
  return ManifestWriter(std::move(state));
}

Status ManifestWriter::Add(const ManifestEntry& entry) {
  State& s = *state_;
  const int version = s.options.format_version;
  const DataFile& file = entry.file;
  const bool delete_file = file.content != FileContent::kData;
  if (delete_file != (s.options.content == ManifestContent::kDeletes)) {
    return Invalid(std::string(delete_file ? "a delete file" : "a data file") + " in a manifest of " +
                   ContentName(s.options.content) + " files: " + file.file_path);
  }
  if (entry.status != EntryStatus::kAdded && version >= 2 &&
      (!entry.sequence_number || !entry.file_sequence_number)) {
    return Invalid("an existing or deleted entry needs its sequence numbers: " + file.file_path);
  }
  if (file.partition.size() != s.partition_avro.size()) {
    return Invalid("partition of " + file.file_path + " has " + std::to_string(file.partition.size()) +
                   " values; the spec has " + std::to_string(s.partition_avro.size()) + " fields");
  }
  std::string& out = s.scratch;
  out.clear();
  enc::AppendLong(out, static_cast<int32_t>(entry.status));
  if (version == 1) {
    AppendOptionalLong(out, entry.snapshot_id.value_or(s.options.snapshot_id));
  } else {
    AppendOptionalLong(out, entry.snapshot_id);
    AppendOptionalLong(out, entry.sequence_number);
    AppendOptionalLong(out, entry.file_sequence_number);
  }
  // data_file
  if (version >= 2) enc::AppendLong(out, static_cast<int32_t>(file.content));
  enc::AppendBytes(out, file.file_path);
  enc::AppendBytes(out, file.file_format);
  for (size_t i = 0; i < file.partition.size(); ++i) {
    SERAC_RETURN_IF_ERROR(
        AppendPartitionValue(out, *s.partition_avro[i], file.partition[i], s.partition_names[i]));
  }
  enc::AppendLong(out, file.record_count);
  enc::AppendLong(out, file.file_size_in_bytes);
  if (version == 1) enc::AppendLong(out, kV1BlockSizeBytes);
  AppendCounts(out, file.column_sizes);
  AppendCounts(out, file.value_counts);
  AppendCounts(out, file.null_value_counts);
  AppendCounts(out, file.nan_value_counts);
  AppendBounds(out, file.lower_bounds);
  AppendBounds(out, file.upper_bounds);
  AppendOptionalBytes(out, file.key_metadata);
  AppendOptionalList(out, file.split_offsets);
  if (version >= 2) AppendOptionalList(out, file.equality_ids);
  AppendOptionalLong(out, file.sort_order_id ? std::optional<int64_t>(*file.sort_order_id) : std::nullopt);
  if (version == 2) AppendOptionalBytes(out, file.referenced_data_file);
  if (version >= 3) {
    AppendOptionalLong(out, file.first_row_id);
    AppendOptionalBytes(out, file.referenced_data_file);
    AppendOptionalLong(out, file.content_offset);
    AppendOptionalLong(out, file.content_size_in_bytes);
  }
  SERAC_RETURN_IF_ERROR(s.file->AppendEncoded(out));
  ++entries_;

  for (size_t i = 0; i < file.partition.size(); ++i) s.summaries[i].Update(file.partition[i]);
  ManifestFile& m = s.manifest;
  switch (entry.status) {
    case EntryStatus::kAdded:
      ++m.added_files_count;
      m.added_rows_count += file.record_count;
      break;
    case EntryStatus::kExisting:
      ++m.existing_files_count;
      m.existing_rows_count += file.record_count;
      break;
    case EntryStatus::kDeleted:
      ++m.deleted_files_count;
      m.deleted_rows_count += file.record_count;
      break;
  }
  if (entry.status != EntryStatus::kDeleted && entry.sequence_number) {
    s.min_sequence_number =
        std::min(s.min_sequence_number.value_or(*entry.sequence_number), *entry.sequence_number);
  }
  return Status::Ok();
}

Result<ManifestWriter::Written> ManifestWriter::Finish(std::string manifest_path) {
  State& s = *state_;
  Written written;
  SERAC_ASSIGN_OR_RETURN(written.bytes, s.file->Finish());
  written.manifest = s.manifest;
  written.manifest.manifest_path = std::move(manifest_path);
  written.manifest.manifest_length = static_cast<int64_t>(written.bytes.size());
  written.manifest.sequence_number = kUnassignedSequenceNumber;
  written.manifest.min_sequence_number = s.min_sequence_number.value_or(kUnassignedSequenceNumber);
  for (const FieldSummaryBuilder& summary : s.summaries)
    written.manifest.partitions.push_back(summary.Build());
  return written;
}

Result<WrittenManifestList> WriteManifestList(const std::vector<ManifestFile>& manifests,
                                              const ManifestListWriterOptions& options) {
  const int version = options.format_version;
  if (version < 1 || version > 3) {
    return Invalid("manifest list format version " + std::to_string(version) + " is not 1, 2 or 3");
  }
  avro::FileWriterOptions file_options;
  file_options.codec = options.codec;
  file_options.metadata = {
      {"snapshot-id", std::to_string(options.snapshot_id)},
      {"parent-snapshot-id",
       options.parent_snapshot_id ? std::to_string(*options.parent_snapshot_id) : std::string("null")},
  };
  if (version >= 2)
    file_options.metadata.emplace_back("sequence-number", std::to_string(options.sequence_number));
  if (version >= 3) file_options.metadata.emplace_back("first-row-id", std::to_string(options.first_row_id));
  file_options.metadata.emplace_back("format-version", std::to_string(version));
  SERAC_ASSIGN_OR_RETURN(avro::FileWriter file,
                         avro::FileWriter::Make(ManifestListSchema(version), file_options));

  WrittenManifestList result;
  int64_t next_row_id = options.first_row_id;
  std::string out;
  for (const ManifestFile& m : manifests) {
    if (version == 1 && m.content != ManifestContent::kData) {
      return Invalid("a format v1 table has no delete manifests: " + m.manifest_path);
    }
    auto resolve = [&](int64_t sequence_number) -> Result<int64_t> {
      if (sequence_number != kUnassignedSequenceNumber) return sequence_number;
      // Only this commit's own manifests may still be unassigned (Java checks the same).
      if (m.added_snapshot_id != options.snapshot_id) {
        return Invalid("manifest " + m.manifest_path + " of snapshot " + std::to_string(m.added_snapshot_id) +
                       " has no sequence number");
      }
      return options.sequence_number;
    };
    out.clear();
    enc::AppendBytes(out, m.manifest_path);
    enc::AppendLong(out, m.manifest_length);
    enc::AppendLong(out, m.partition_spec_id);
    auto append_summaries = [&] {
      if (m.partitions.empty()) {
        // Java writes an empty list for an unpartitioned spec.
        AppendSome(out);
        enc::AppendLong(out, 0);
        return;
      }
      AppendSome(out);
      enc::AppendLong(out, static_cast<int64_t>(m.partitions.size()));
      for (const PartitionFieldSummary& summary : m.partitions) {
        out.push_back(summary.contains_null ? '\1' : '\0');
        if (summary.contains_nan) {
          AppendSome(out);
          out.push_back(*summary.contains_nan ? '\1' : '\0');
        } else {
          AppendNull(out);
        }
        AppendOptionalBytes(out, summary.lower_bound);
        AppendOptionalBytes(out, summary.upper_bound);
      }
      enc::AppendLong(out, 0);
    };
    if (version == 1) {
      AppendOptionalLong(out, m.added_snapshot_id);
      AppendOptionalLong(out, m.added_files_count);
      AppendOptionalLong(out, m.existing_files_count);
      AppendOptionalLong(out, m.deleted_files_count);
      append_summaries();
      AppendOptionalLong(out, m.added_rows_count);
      AppendOptionalLong(out, m.existing_rows_count);
      AppendOptionalLong(out, m.deleted_rows_count);
      AppendOptionalBytes(out, m.key_metadata);
    } else {
      enc::AppendLong(out, static_cast<int32_t>(m.content));
      SERAC_ASSIGN_OR_RETURN(int64_t sequence_number, resolve(m.sequence_number));
      SERAC_ASSIGN_OR_RETURN(int64_t min_sequence_number, resolve(m.min_sequence_number));
      enc::AppendLong(out, sequence_number);
      enc::AppendLong(out, min_sequence_number);
      AppendOptionalLong(out, m.added_snapshot_id);
      enc::AppendLong(out, m.added_files_count);
      enc::AppendLong(out, m.existing_files_count);
      enc::AppendLong(out, m.deleted_files_count);
      enc::AppendLong(out, m.added_rows_count);
      enc::AppendLong(out, m.existing_rows_count);
      enc::AppendLong(out, m.deleted_rows_count);
      append_summaries();
      AppendOptionalBytes(out, m.key_metadata);
      if (version >= 3) {
        std::optional<int64_t> first_row_id = m.first_row_id;
        if (m.content == ManifestContent::kData && !first_row_id) {
          first_row_id = next_row_id;
          const int64_t rows = m.existing_rows_count + m.added_rows_count;
          next_row_id += rows;
          result.assigned_rows += rows;
        }
        AppendOptionalLong(out, m.content == ManifestContent::kData ? first_row_id : std::nullopt);
      }
    }
    SERAC_RETURN_IF_ERROR(file.AppendEncoded(out));
  }
  SERAC_ASSIGN_OR_RETURN(result.bytes, file.Finish());
  return result;
}

}  // namespace serac::iceberg
