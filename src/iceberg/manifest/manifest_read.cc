// Reading manifests and manifest lists. The writer's schema (from the file's header) is compiled
// once into a plan that says, for each of its fields in order, where the value goes (matched by
// field id, else by name, as Java projects by id); then each entry is decoded straight into
// ManifestEntry or ManifestFile. Fields serac does not know are skipped; a known field whose Avro
// type cannot hold what the spec says is refused with its name.
#include <algorithm>
#include <array>
#include <charconv>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "common/encoding.h"
#include "iceberg/avro/avro_encoding_internal.h"
#include "iceberg/manifest/manifest.h"

namespace serac::iceberg {

namespace enc = avro::encoding;

namespace {

Status Invalid(std::string message) { return Error(ErrorCode::kInvalidArgument, std::move(message)); }

// Stores a read value where it belongs (a statement, unlike SERAC_ASSIGN_OR_RETURN, so it may stand
// between case labels).
template <typename Target, typename Value>
Status Assign(Target& target, Result<Value> result) {
  if (!result.ok()) return result.status();
  target = std::move(result).value();
  return Status::Ok();
}

// Where one field of the writer's records goes.
enum class Target : uint8_t {
  kSkip,
  // manifest_entry
  kStatus,
  kSnapshotId,
  kSequenceNumber,
  kFileSequenceNumber,
  kDataFile,
  // data_file
  kContent,
  kFilePath,
  kFileFormat,
  kPartition,
  kRecordCount,
  kFileSize,
  kColumnSizes,
  kValueCounts,
  kNullValueCounts,
  kNanValueCounts,
  kLowerBounds,
  kUpperBounds,
  kKeyMetadata,
  kSplitOffsets,
  kEqualityIds,
  kSortOrderId,
  kReferencedDataFile,
  kFirstRowId,
  kContentOffset,
  kContentSize,
  // manifest_file
  kManifestPath,
  kManifestLength,
  kSpecId,
  kManifestContent,
  kManifestSequenceNumber,
  kMinSequenceNumber,
  kAddedSnapshotId,
  kAddedFilesCount,
  kExistingFilesCount,
  kDeletedFilesCount,
  kAddedRowsCount,
  kExistingRowsCount,
  kDeletedRowsCount,
  kPartitionSummaries,
  kManifestKeyMetadata,
  kManifestFirstRowId,
};

struct KnownField {
  int32_t id;
  const char* name;
  Target target;
};

constexpr KnownField kEntryFields[] = {
    {0, "status", Target::kStatus},
    {1, "snapshot_id", Target::kSnapshotId},
    {3, "sequence_number", Target::kSequenceNumber},
    {4, "file_sequence_number", Target::kFileSequenceNumber},
    {2, "data_file", Target::kDataFile},
};

constexpr KnownField kDataFileFields[] = {
    {134, "content", Target::kContent},
    {100, "file_path", Target::kFilePath},
    {101, "file_format", Target::kFileFormat},
    {102, "partition", Target::kPartition},
    {103, "record_count", Target::kRecordCount},
    {104, "file_size_in_bytes", Target::kFileSize},
    {108, "column_sizes", Target::kColumnSizes},
    {109, "value_counts", Target::kValueCounts},
    {110, "null_value_counts", Target::kNullValueCounts},
    {137, "nan_value_counts", Target::kNanValueCounts},
    {125, "lower_bounds", Target::kLowerBounds},
    {128, "upper_bounds", Target::kUpperBounds},
    {131, "key_metadata", Target::kKeyMetadata},
    {132, "split_offsets", Target::kSplitOffsets},
    {135, "equality_ids", Target::kEqualityIds},
    {140, "sort_order_id", Target::kSortOrderId},
    {143, "referenced_data_file", Target::kReferencedDataFile},
    {142, "first_row_id", Target::kFirstRowId},
    {144, "content_offset", Target::kContentOffset},
    {145, "content_size_in_bytes", Target::kContentSize},
};

constexpr KnownField kManifestFileFields[] = {
    {500, "manifest_path", Target::kManifestPath},
    {501, "manifest_length", Target::kManifestLength},
    {502, "partition_spec_id", Target::kSpecId},
    {517, "content", Target::kManifestContent},
    {515, "sequence_number", Target::kManifestSequenceNumber},
    {516, "min_sequence_number", Target::kMinSequenceNumber},
    {503, "added_snapshot_id", Target::kAddedSnapshotId},
    {504, "added_files_count", Target::kAddedFilesCount},
    {505, "existing_files_count", Target::kExistingFilesCount},
    {506, "deleted_files_count", Target::kDeletedFilesCount},
    {512, "added_rows_count", Target::kAddedRowsCount},
    {513, "existing_rows_count", Target::kExistingRowsCount},
    {514, "deleted_rows_count", Target::kDeletedRowsCount},
    {507, "partitions", Target::kPartitionSummaries},
    {519, "key_metadata", Target::kManifestKeyMetadata},
    {520, "first_row_id", Target::kManifestFirstRowId},
};

template <size_t N>
Target FindTarget(const avro::Field& field, const KnownField (&known)[N]) {
  for (const KnownField& k : known) {
    if (field.field_id ? *field.field_id == k.id : field.name == k.name) return k.target;
  }
  return Target::kSkip;
}

// How the unchecked decode of an entry (Reader::FastEntry) reads a field: the writer's shapes Java,
// PyIceberg and serac write. Any other shape is read by the checked decode (kChecked).
enum class FastKind : uint8_t {
  kChecked,
  kInt,
  kLong,
  kText,       // string or bytes
  kLongMap,    // array<{key: int, value: long}>
  kBytesMap,   // array<{key: int, value: bytes}>
  kPartition,  // a record of optional ints, longs and strings (strings without a logical type)
};

struct Step {
  Target target = Target::kSkip;
  const avro::Schema* type = nullptr;  // the writer's type (a union for optional fields)
  std::string name;
  std::vector<Step> nested;  // data_file's fields
  // For the unchecked decode: the branch of a two-branch union that is null (-1 when the field is
  // not such a union), and how the value is read.
  int8_t null_branch = -1;
  FastKind fast = FastKind::kChecked;
};

// The unchecked decode's kind for a field whose value (the union's other branch) is `type`.
FastKind FastKindOf(Target target, const avro::Schema& type) {
  switch (target) {
    case Target::kStatus:
    case Target::kContent:
    case Target::kSortOrderId:
      return type.type == avro::Type::kInt ? FastKind::kInt : FastKind::kChecked;
    case Target::kSnapshotId:
    case Target::kSequenceNumber:
    case Target::kFileSequenceNumber:
    case Target::kRecordCount:
    case Target::kFileSize:
    case Target::kFirstRowId:
    case Target::kContentOffset:
    case Target::kContentSize:
      return type.type == avro::Type::kLong ? FastKind::kLong : FastKind::kChecked;
    case Target::kFilePath:
    case Target::kFileFormat:
    case Target::kKeyMetadata:
    case Target::kReferencedDataFile:
      return type.type == avro::Type::kString || type.type == avro::Type::kBytes ? FastKind::kText
                                                                                 : FastKind::kChecked;
    case Target::kColumnSizes:
    case Target::kValueCounts:
    case Target::kNullValueCounts:
    case Target::kNanValueCounts:
    case Target::kLowerBounds:
    case Target::kUpperBounds: {
      if (type.type != avro::Type::kArray || type.items->type != avro::Type::kRecord)
        return FastKind::kChecked;
      const std::vector<avro::Field>& fields = type.items->fields;
      if (fields.size() != 2 || fields[0].name != "key" || fields[0].type->type != avro::Type::kInt) {
        return FastKind::kChecked;
      }
      const bool counts = target != Target::kLowerBounds && target != Target::kUpperBounds;
      const avro::Type value = fields[1].type->type;
      if (counts) return value == avro::Type::kLong ? FastKind::kLongMap : FastKind::kChecked;
      return value == avro::Type::kBytes ? FastKind::kBytesMap : FastKind::kChecked;
    }
    case Target::kPartition: {
      if (type.type != avro::Type::kRecord) return FastKind::kChecked;
      for (const avro::Field& field : type.fields) {
        const avro::Schema& union_type = *field.type;
        if (union_type.type != avro::Type::kUnion || union_type.branches.size() != 2 ||
            union_type.branches[0]->type != avro::Type::kNull) {
          return FastKind::kChecked;
        }
        // An int or long is its Datum whatever its logical type (a date, a timestamp); a string
        // only without one (a uuid is converted).
        const avro::Schema& value = *union_type.branches[1];
        const bool number = value.type == avro::Type::kInt || value.type == avro::Type::kLong;
        const bool text = value.type == avro::Type::kString && value.logical_type.empty();
        if (!number && !text) return FastKind::kChecked;
      }
      return FastKind::kPartition;
    }
    default:
      return FastKind::kChecked;
  }
}

template <size_t N>
std::vector<Step> Compile(const avro::Schema& record, const KnownField (&known)[N]) {
  std::vector<Step> steps;
  for (const avro::Field& field : record.fields) {
    Step step;
    step.target = FindTarget(field, known);
    step.type = field.type.get();
    step.name = field.name;
    const avro::Schema* value = step.type;
    if (value->type == avro::Type::kUnion && value->branches.size() == 2) {
      for (int8_t branch = 0; branch < 2; ++branch) {
        if (value->branches[static_cast<size_t>(branch)]->type == avro::Type::kNull)
          step.null_branch = branch;
      }
      value =
          step.null_branch < 0 ? nullptr : value->branches[static_cast<size_t>(1 - step.null_branch)].get();
    }
    if (value != nullptr && value->type != avro::Type::kUnion && step.target != Target::kSkip) {
      step.fast = FastKindOf(step.target, *value);
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

// The decode of one file: its name for errors and the budget for values that take no bytes.
struct Reader {
  std::string_view path;

  Status Bad(const std::string& what) const { return Invalid(std::string(path) + ": " + what); }

  // Resolves a union to the branch written; nullptr for a null.
  Result<const avro::Schema*> Branch(const avro::Schema* type, std::string_view& bytes) const {
    if (type->type != avro::Type::kUnion) return type->type == avro::Type::kNull ? nullptr : type;
    while (type->type == avro::Type::kUnion) {
      SERAC_ASSIGN_OR_RETURN(int64_t branch, enc::ReadLong(bytes));
      if (branch < 0 || static_cast<uint64_t>(branch) >= type->branches.size())
        return Bad("union branch out of range");
      type = type->branches[static_cast<size_t>(branch)].get();
    }
    return type->type == avro::Type::kNull ? nullptr : type;
  }

  Result<int64_t> Long(const avro::Schema& type, std::string_view& bytes, const std::string& name) const {
    int64_t value;
    if (type.type == avro::Type::kLong && enc::TryReadLong(bytes, value)) return value;
    if (type.type == avro::Type::kLong) return enc::ReadLong(bytes);
    if (type.type == avro::Type::kInt) {
      SERAC_ASSIGN_OR_RETURN(int32_t value, enc::ReadInt(bytes));
      return value;
    }
    return Bad(name + " is " + std::string(avro::TypeName(type.type)) + ", not int or long");
  }

  Result<int32_t> Int(const avro::Schema& type, std::string_view& bytes, const std::string& name) const {
    if (type.type == avro::Type::kInt) return enc::ReadInt(bytes);
    return Bad(name + " is " + std::string(avro::TypeName(type.type)) + ", not int");
  }

  Result<std::string_view> Text(const avro::Schema& type, std::string_view& bytes,
                                const std::string& name) const {
    if (type.type == avro::Type::kString || type.type == avro::Type::kBytes) return enc::ReadBytes(bytes);
    if (type.type == avro::Type::kFixed) return enc::ReadRaw(bytes, static_cast<size_t>(type.fixed_size));
    return Bad(name + " is " + std::string(avro::TypeName(type.type)) + ", not string or bytes");
  }

  // The item count of the next array block; 0 ends the array.
  Result<uint64_t> Items(std::string_view& bytes) const {
    SERAC_ASSIGN_OR_RETURN(int64_t count, enc::ReadLong(bytes));
    if (count < 0) {
      if (count == INT64_MIN) return Bad("array block count out of range");
      count = -count;
      SERAC_ASSIGN_OR_RETURN(int64_t block_bytes, enc::ReadLong(bytes));
      if (block_bytes < 0) return Bad("negative array block size");
    }
    // Every item of the arrays read here takes at least one byte.
    if (static_cast<uint64_t>(count) > bytes.size())
      return Bad("an array block claims more items than bytes");
    return static_cast<uint64_t>(count);
  }

  // A map<int, long> or map<int, binary> as Iceberg writes it: an array of {key, value} records.
  template <typename Value, typename ReadValue>
  Status Map(const avro::Schema& type, std::string_view& bytes, const std::string& name,
             std::vector<std::pair<int32_t, Value>>& out, ReadValue read_value) const {
    if (type.type != avro::Type::kArray || type.items->type != avro::Type::kRecord ||
        type.items->fields.size() != 2) {
      return Bad(name + " is not an array of key-value records");
    }
    const avro::Schema& entry = *type.items;
    const int key_index = entry.FieldIndex("key") == 1 ? 1 : 0;
    const avro::Schema& key_type = *entry.fields[static_cast<size_t>(key_index)].type;
    const avro::Schema& value_type = *entry.fields[static_cast<size_t>(1 - key_index)].type;
    // Written into the slots already there, so a reused entry decodes without allocating. What
    // Java writes (a required int key before a required long or bytes value) is read by the
    // unchecked decode (FastMap); this one reads any other shape, and names what is wrong.
    size_t used = 0;
    while (true) {
      SERAC_ASSIGN_OR_RETURN(uint64_t count, Items(bytes));
      if (count == 0) break;
      for (uint64_t i = 0; i < count; ++i) {
        if (used == out.size()) out.emplace_back();
        std::pair<int32_t, Value>& slot = out[used++];
        for (int part = 0; part < 2; ++part) {
          if (part == key_index) {
            SERAC_RETURN_IF_ERROR(Assign(slot.first, Int(key_type, bytes, name)));
          } else {
            SERAC_ASSIGN_OR_RETURN(const avro::Schema* branch, Branch(&value_type, bytes));
            if (branch == nullptr) return Bad(name + " holds a null");
            SERAC_RETURN_IF_ERROR(read_value(*branch, bytes, slot.second));
          }
        }
      }
    }
    out.resize(used);
    return Status::Ok();
  }

  template <typename Int>
  Status List(const avro::Schema& type, std::string_view& bytes, const std::string& name,
              std::vector<Int>& out) const {
    if (type.type != avro::Type::kArray) return Bad(name + " is not an array");
    out.clear();
    while (true) {
      SERAC_ASSIGN_OR_RETURN(uint64_t count, Items(bytes));
      if (count == 0) break;
      if (out.empty()) out.reserve(count);
      for (uint64_t i = 0; i < count; ++i) {
        SERAC_ASSIGN_OR_RETURN(const avro::Schema* item, Branch(type.items.get(), bytes));
        if (item == nullptr) return Bad(name + " holds a null");
        SERAC_ASSIGN_OR_RETURN(int64_t value, Long(*item, bytes, name));
        out.push_back(static_cast<Int>(value));
      }
    }
    return Status::Ok();
  }

  Result<Datum> PartitionValue(const avro::Schema& type, std::string_view& bytes,
                               const std::string& name) const {
    switch (type.type) {
      case avro::Type::kBoolean: {
        SERAC_ASSIGN_OR_RETURN(bool b, enc::ReadBoolean(bytes));
        return Datum(b);
      }
      case avro::Type::kInt: {
        SERAC_ASSIGN_OR_RETURN(int32_t i, enc::ReadInt(bytes));
        return Datum(i);
      }
      case avro::Type::kLong: {
        SERAC_ASSIGN_OR_RETURN(int64_t l, enc::ReadLong(bytes));
        return Datum(l);
      }
      case avro::Type::kFloat: {
        SERAC_ASSIGN_OR_RETURN(float f, enc::ReadFloat(bytes));
        return Datum(f);
      }
      case avro::Type::kDouble: {
        SERAC_ASSIGN_OR_RETURN(double d, enc::ReadDouble(bytes));
        return Datum(d);
      }
      case avro::Type::kString:
      case avro::Type::kBytes:
      case avro::Type::kFixed: {
        SERAC_ASSIGN_OR_RETURN(std::string_view s, Text(type, bytes, name));
        if (type.logical_type.empty()) return Datum(std::string(s));
        if (type.logical_type == "uuid" && type.type == avro::Type::kString && s.size() == 36) {
          std::string hex(s);
          std::erase(hex, '-');
          auto raw = HexDecode(hex);
          if (raw && raw->size() == 16) return Datum(std::move(*raw));
        }
        if (type.logical_type == "decimal") {
          return Datum(std::string(TrimTwosComplement(s)));  // as the single-value form keeps it
        }
        return Datum(std::string(s));
      }
      default:
        return Bad("partition field " + name + " is " + std::string(avro::TypeName(type.type)));
    }
  }

  Status Partition(const avro::Schema& type, std::string_view& bytes, PartitionTuple& out) const {
    if (type.type != avro::Type::kRecord) return Bad("partition is not a record");
    out.resize(type.fields.size());
    for (size_t i = 0; i < type.fields.size(); ++i) {
      const avro::Field& field = type.fields[i];
      SERAC_ASSIGN_OR_RETURN(const avro::Schema* branch, Branch(field.type.get(), bytes));
      if (branch == nullptr) {
        out[i] = std::monostate{};
      } else {
        SERAC_RETURN_IF_ERROR(Assign(out[i], PartitionValue(*branch, bytes, field.name)));
      }
    }
    return Status::Ok();
  }

  Status Skip(const avro::Schema& type, std::string_view& bytes) const {
    auto skipped = avro::Decode(type, bytes);
    if (!skipped.ok()) return Bad(skipped.status().message());
    return Status::Ok();
  }

  // Clears what a previous entry left, keeping the buffers of the per-column maps (emptied at the
  // end of ReadDataFile when the entry does not have them).
  static void ResetForReuse(ManifestEntry& entry) {
    entry.status = EntryStatus::kAdded;
    entry.snapshot_id.reset();
    entry.sequence_number.reset();
    entry.file_sequence_number.reset();
    DataFile& f = entry.file;
    f.content = FileContent::kData;
    f.file_format = "PARQUET";
    f.record_count = 0;
    f.file_size_in_bytes = 0;
    f.key_metadata.reset();
    f.split_offsets.clear();
    f.equality_ids.clear();
    f.sort_order_id.reset();
    f.referenced_data_file.reset();
    f.first_row_id.reset();
    f.content_offset.reset();
    f.content_size_in_bytes.reset();
  }

  // Empties the per-column maps a data_file did not have (bit i of `maps_seen`: the i-th of the six).
  static void ClearMapsNotSeen(DataFile& file, uint32_t maps_seen) {
    ColumnCounts* counts[] = {&file.column_sizes, &file.value_counts, &file.null_value_counts,
                              &file.nan_value_counts};
    for (int i = 0; i < 4; ++i) {
      if ((maps_seen & (1u << i)) == 0) counts[i]->clear();
    }
    if ((maps_seen & (1u << 4)) == 0) file.lower_bounds.clear();
    if ((maps_seen & (1u << 5)) == 0) file.upper_bounds.clear();
  }

  Status ReadDataFile(const std::vector<Step>& steps, std::string_view& bytes, DataFile& file,
                      std::array<bool, 4>& seen) const {
    uint32_t maps_seen = 0;
    Status read = Status::Ok();
    for (const Step& step : steps) {
      read = ReadDataFileField(step, bytes, file, seen, maps_seen);
      if (!read.ok()) break;
    }
    ClearMapsNotSeen(file, maps_seen);
    return read;
  }

  Status ReadDataFileField(const Step& step, std::string_view& bytes, DataFile& file,
                           std::array<bool, 4>& seen, uint32_t& maps_seen) const {
    {
      if (step.target == Target::kSkip) return Skip(*step.type, bytes);
      SERAC_ASSIGN_OR_RETURN(const avro::Schema* type, Branch(step.type, bytes));
      if (type == nullptr) return Status::Ok();  // null: absent
      const avro::Schema& t = *type;
      switch (step.target) {
        case Target::kContent: {
          SERAC_ASSIGN_OR_RETURN(int32_t content, Int(t, bytes, step.name));
          if (content < 0 || content > 2)
            return Bad("content " + std::to_string(content) + " is not 0, 1 or 2");
          file.content = static_cast<FileContent>(content);
          break;
        }
        case Target::kFilePath: {
          SERAC_ASSIGN_OR_RETURN(std::string_view path_text, Text(t, bytes, step.name));
          file.file_path.assign(path_text);
          seen[0] = true;
          break;
        }
        case Target::kFileFormat: {
          SERAC_ASSIGN_OR_RETURN(std::string_view format, Text(t, bytes, step.name));
          file.file_format.assign(format);
          break;
        }
        case Target::kPartition:
          SERAC_RETURN_IF_ERROR(Partition(t, bytes, file.partition));
          seen[1] = true;
          break;
        case Target::kRecordCount:
          SERAC_RETURN_IF_ERROR(Assign(file.record_count, Long(t, bytes, step.name)));
          seen[2] = true;
          break;
        case Target::kFileSize:
          SERAC_RETURN_IF_ERROR(Assign(file.file_size_in_bytes, Long(t, bytes, step.name)));
          seen[3] = true;
          break;
        case Target::kColumnSizes:
        case Target::kValueCounts:
        case Target::kNullValueCounts:
        case Target::kNanValueCounts: {
          ColumnCounts& counts = step.target == Target::kColumnSizes       ? file.column_sizes
                                 : step.target == Target::kValueCounts     ? file.value_counts
                                 : step.target == Target::kNullValueCounts ? file.null_value_counts
                                                                           : file.nan_value_counts;
          maps_seen |= 1u << (static_cast<int>(step.target) - static_cast<int>(Target::kColumnSizes));
          SERAC_RETURN_IF_ERROR(
              Map(t, bytes, step.name, counts, [&](const avro::Schema& v, std::string_view& b, int64_t& out) {
                return Assign(out, Long(v, b, step.name));
              }));
          break;
        }
        case Target::kLowerBounds:
        case Target::kUpperBounds: {
          ColumnBounds& bounds = step.target == Target::kLowerBounds ? file.lower_bounds : file.upper_bounds;
          maps_seen |= step.target == Target::kLowerBounds ? 1u << 4 : 1u << 5;
          SERAC_RETURN_IF_ERROR(
              Map(t, bytes, step.name, bounds,
                  [&](const avro::Schema& v, std::string_view& b, std::string& out) -> Status {
                    SERAC_ASSIGN_OR_RETURN(std::string_view bound, Text(v, b, step.name));
                    out.assign(bound);
                    return Status::Ok();
                  }));
          break;
        }
        case Target::kKeyMetadata: {
          SERAC_ASSIGN_OR_RETURN(std::string_view key, Text(t, bytes, step.name));
          file.key_metadata = std::string(key);
          break;
        }
        case Target::kSplitOffsets:
          SERAC_RETURN_IF_ERROR(List(t, bytes, step.name, file.split_offsets));
          break;
        case Target::kEqualityIds:
          SERAC_RETURN_IF_ERROR(List(t, bytes, step.name, file.equality_ids));
          break;
        case Target::kSortOrderId:
          SERAC_RETURN_IF_ERROR(Assign(file.sort_order_id, Int(t, bytes, step.name)));
          break;
        case Target::kReferencedDataFile: {
          SERAC_ASSIGN_OR_RETURN(std::string_view referenced, Text(t, bytes, step.name));
          file.referenced_data_file = std::string(referenced);
          break;
        }
        case Target::kFirstRowId:
          SERAC_RETURN_IF_ERROR(Assign(file.first_row_id, Long(t, bytes, step.name)));
          break;
        case Target::kContentOffset:
          SERAC_RETURN_IF_ERROR(Assign(file.content_offset, Long(t, bytes, step.name)));
          break;
        case Target::kContentSize:
          SERAC_RETURN_IF_ERROR(Assign(file.content_size_in_bytes, Long(t, bytes, step.name)));
          break;
        default:
          SERAC_RETURN_IF_ERROR(Skip(t, bytes));
          break;
      }
    }
    return Status::Ok();
  }

  // ---- The unchecked decode ----
  // Reads an entry of the shapes every writer writes without building a Status or Result per value:
  // false when anything is not as expected (a shape, a value out of range, bytes that end early),
  // and the caller then decodes the same bytes with the checked decode, which names the problem.
  // Both decode the same fields into the same places.

  [[gnu::always_inline]] static bool FastBytes(std::string_view& bytes, std::string_view& out) {
    int64_t size;
    if (!enc::TryReadLong(bytes, size) || size < 0 || static_cast<uint64_t>(size) > bytes.size())
      return false;
    out = bytes.substr(0, static_cast<size_t>(size));
    bytes.remove_prefix(static_cast<size_t>(size));
    return true;
  }

  // The item count of an array block, as Items() reads it.
  static bool FastItems(std::string_view& bytes, uint64_t& count) {
    int64_t items;
    if (!enc::TryReadLong(bytes, items)) return false;
    if (items < 0) {
      int64_t block_bytes;
      if (items == INT64_MIN || !enc::TryReadLong(bytes, block_bytes) || block_bytes < 0) return false;
      items = -items;
    }
    if (static_cast<uint64_t>(items) > bytes.size()) return false;
    count = static_cast<uint64_t>(items);
    return true;
  }

  template <typename Value>
  static bool FastMap(std::string_view& bytes, std::vector<std::pair<int32_t, Value>>& out) {
    size_t used = 0;
    while (true) {
      uint64_t count;
      if (!FastItems(bytes, count)) return false;
      if (count == 0) break;
      for (uint64_t i = 0; i < count; ++i) {
        if (used == out.size()) out.emplace_back();
        std::pair<int32_t, Value>& slot = out[used++];
        if (!enc::TryReadInt(bytes, slot.first)) return false;
        if constexpr (std::is_same_v<Value, int64_t>) {
          if (!enc::TryReadLong(bytes, slot.second)) return false;
        } else {
          std::string_view value;
          if (!FastBytes(bytes, value)) return false;
          slot.second.assign(value);
        }
      }
    }
    out.resize(used);
    return true;
  }

  // One field of a manifest_entry or data_file record.
  bool FastField(const Step& step, std::string_view& bytes, ManifestEntry& entry, std::array<bool, 4>& seen,
                 uint32_t& maps_seen) const {
    DataFile& file = entry.file;
    if (step.null_branch >= 0) {
      if (bytes.empty() || (static_cast<uint8_t>(bytes[0]) & ~2u) != 0) return false;  // branch 0 or 1
      const int branch = static_cast<uint8_t>(bytes[0]) >> 1;
      bytes.remove_prefix(1);
      if (branch == step.null_branch) return true;  // null: absent
    }
    switch (step.fast) {
      case FastKind::kInt: {
        int32_t value;
        if (!enc::TryReadInt(bytes, value)) return false;
        if (step.target == Target::kSortOrderId) {
          file.sort_order_id = value;
        } else if (value < 0 || value > 2) {
          return false;
        } else if (step.target == Target::kStatus) {
          entry.status = static_cast<EntryStatus>(value);
        } else {
          file.content = static_cast<FileContent>(value);
        }
        return true;
      }
      case FastKind::kLong: {
        int64_t value;
        if (!enc::TryReadLong(bytes, value)) return false;
        switch (step.target) {
          case Target::kSnapshotId:
            entry.snapshot_id = value;
            break;
          case Target::kSequenceNumber:
            entry.sequence_number = value;
            break;
          case Target::kFileSequenceNumber:
            entry.file_sequence_number = value;
            break;
          case Target::kRecordCount:
            file.record_count = value;
            seen[2] = true;
            break;
          case Target::kFileSize:
            file.file_size_in_bytes = value;
            seen[3] = true;
            break;
          case Target::kFirstRowId:
            file.first_row_id = value;
            break;
          case Target::kContentOffset:
            file.content_offset = value;
            break;
          default:
            file.content_size_in_bytes = value;
            break;
        }
        return true;
      }
      case FastKind::kText: {
        std::string_view text;
        if (!FastBytes(bytes, text)) return false;
        if (step.target == Target::kFilePath) {
          file.file_path.assign(text);
          seen[0] = true;
        } else if (step.target == Target::kFileFormat) {
          file.file_format.assign(text);
        } else if (step.target == Target::kKeyMetadata) {
          file.key_metadata.emplace(text);
        } else {
          file.referenced_data_file.emplace(text);
        }
        return true;
      }
      case FastKind::kLongMap: {
        const int map = static_cast<int>(step.target) - static_cast<int>(Target::kColumnSizes);
        maps_seen |= 1u << map;
        ColumnCounts* counts[] = {&file.column_sizes, &file.value_counts, &file.null_value_counts,
                                  &file.nan_value_counts};
        return FastMap(bytes, *counts[map]);
      }
      case FastKind::kBytesMap: {
        const bool lower = step.target == Target::kLowerBounds;
        maps_seen |= lower ? 1u << 4 : 1u << 5;
        return FastMap(bytes, lower ? file.lower_bounds : file.upper_bounds);
      }
      case FastKind::kPartition: {
        // Every field is a union of null and an int, long or string (FastKindOf).
        const avro::Schema& record =
            *(step.null_branch >= 0 ? step.type->branches[static_cast<size_t>(1 - step.null_branch)].get()
                                    : step.type);
        file.partition.resize(record.fields.size());
        for (size_t i = 0; i < record.fields.size(); ++i) {
          if (bytes.empty() || (static_cast<uint8_t>(bytes[0]) & ~2u) != 0) return false;
          const bool null = bytes[0] == 0;
          bytes.remove_prefix(1);
          Datum& value = file.partition[i];
          if (null) {
            value = std::monostate{};
            continue;
          }
          switch (record.fields[i].type->branches[1]->type) {
            case avro::Type::kInt: {
              int32_t number;
              if (!enc::TryReadInt(bytes, number)) return false;
              value = number;
              break;
            }
            case avro::Type::kLong: {
              int64_t number;
              if (!enc::TryReadLong(bytes, number)) return false;
              value = number;
              break;
            }
            default: {
              std::string_view text;
              if (!FastBytes(bytes, text)) return false;
              if (std::string* kept = std::get_if<std::string>(&value)) {
                kept->assign(text);
              } else {
                value = std::string(text);
              }
              break;
            }
          }
        }
        seen[1] = true;
        return true;
      }
      case FastKind::kChecked:
        break;
    }
    return false;
  }

  bool FastEntry(const std::vector<Step>& steps, std::string_view& bytes, ManifestEntry& entry) const {
    ResetForReuse(entry);
    bool has_status = false;
    bool has_file = false;
    std::array<bool, 4> seen{};
    uint32_t maps_seen = 0;
    for (const Step& entry_step : steps) {
      if (entry_step.target == Target::kDataFile) {
        if (entry_step.type->type != avro::Type::kRecord) return false;
        for (const Step& step : entry_step.nested) {
          if (step.fast != FastKind::kChecked) {
            if (!FastField(step, bytes, entry, seen, maps_seen)) return false;
          } else if (!ReadDataFileField(step, bytes, entry.file, seen, maps_seen).ok()) {
            return false;
          }
        }
        has_file = true;
        continue;
      }
      if (entry_step.fast == FastKind::kChecked) return false;
      if (!FastField(entry_step, bytes, entry, seen, maps_seen)) return false;
      has_status = has_status || entry_step.target == Target::kStatus;
    }
    ClearMapsNotSeen(entry.file, maps_seen);
    return has_status && has_file && seen[0] && seen[1] && seen[2] && seen[3];
  }

  // ---- The checked decode ----

  Status ReadEntry(const std::vector<Step>& steps, std::string_view& bytes, ManifestEntry& entry) const {
    ResetForReuse(entry);
    bool has_status = false;
    bool has_file = false;
    std::array<bool, 4> seen{};  // file_path, partition, record_count, file_size_in_bytes
    for (const Step& step : steps) {
      if (step.target == Target::kSkip) {
        SERAC_RETURN_IF_ERROR(Skip(*step.type, bytes));
        continue;
      }
      SERAC_ASSIGN_OR_RETURN(const avro::Schema* type, Branch(step.type, bytes));
      if (type == nullptr) continue;
      switch (step.target) {
        case Target::kStatus: {
          SERAC_ASSIGN_OR_RETURN(int32_t status, Int(*type, bytes, step.name));
          if (status < 0 || status > 2) return Bad("status " + std::to_string(status) + " is not 0, 1 or 2");
          entry.status = static_cast<EntryStatus>(status);
          has_status = true;
          break;
        }
        case Target::kSnapshotId:
          SERAC_RETURN_IF_ERROR(Assign(entry.snapshot_id, Long(*type, bytes, step.name)));
          break;
        case Target::kSequenceNumber:
          SERAC_RETURN_IF_ERROR(Assign(entry.sequence_number, Long(*type, bytes, step.name)));
          break;
        case Target::kFileSequenceNumber:
          SERAC_RETURN_IF_ERROR(Assign(entry.file_sequence_number, Long(*type, bytes, step.name)));
          break;
        case Target::kDataFile:
          if (type->type != avro::Type::kRecord) return Bad("data_file is not a record");
          SERAC_RETURN_IF_ERROR(ReadDataFile(step.nested, bytes, entry.file, seen));
          has_file = true;
          break;
        default:
          SERAC_RETURN_IF_ERROR(Skip(*type, bytes));
          break;
      }
    }
    if (!has_status) return Bad("an entry without a status");
    if (!has_file) return Bad("an entry without a data_file");
    static const char* const kRequired[] = {"file_path", "partition", "record_count", "file_size_in_bytes"};
    for (size_t i = 0; i < seen.size(); ++i) {
      if (!seen[i]) return Bad("a data_file without " + std::string(kRequired[i]));
    }
    return Status::Ok();
  }

  Status ReadSummaries(const avro::Schema& type, std::string_view& bytes,
                       std::vector<PartitionFieldSummary>& out) const {
    if (type.type != avro::Type::kArray || type.items->type != avro::Type::kRecord) {
      return Bad("partitions is not an array of records");
    }
    const avro::Schema& record = *type.items;
    out.clear();
    while (true) {
      SERAC_ASSIGN_OR_RETURN(uint64_t count, Items(bytes));
      if (count == 0) break;
      for (uint64_t i = 0; i < count; ++i) {
        PartitionFieldSummary summary;
        for (const avro::Field& field : record.fields) {
          const int32_t id = field.field_id.value_or(-1);
          SERAC_ASSIGN_OR_RETURN(const avro::Schema* branch, Branch(field.type.get(), bytes));
          if (branch == nullptr) continue;
          if (id == 509 || (id < 0 && field.name == "contains_null")) {
            if (branch->type != avro::Type::kBoolean) return Bad("contains_null is not a boolean");
            SERAC_RETURN_IF_ERROR(Assign(summary.contains_null, enc::ReadBoolean(bytes)));
          } else if (id == 518 || (id < 0 && field.name == "contains_nan")) {
            if (branch->type != avro::Type::kBoolean) return Bad("contains_nan is not a boolean");
            SERAC_RETURN_IF_ERROR(Assign(summary.contains_nan, enc::ReadBoolean(bytes)));
          } else if (id == 510 || id == 511 ||
                     (id < 0 && (field.name == "lower_bound" || field.name == "upper_bound"))) {
            SERAC_ASSIGN_OR_RETURN(std::string_view bound, Text(*branch, bytes, field.name));
            const bool lower = id == 510 || (id < 0 && field.name == "lower_bound");
            (lower ? summary.lower_bound : summary.upper_bound) = std::string(bound);
          } else {
            SERAC_RETURN_IF_ERROR(Skip(*branch, bytes));
          }
        }
        out.push_back(std::move(summary));
      }
    }
    return Status::Ok();
  }

  Status ReadManifestFile(const std::vector<Step>& steps, std::string_view& bytes, ManifestFile& m,
                          bool& has_sequence_number) const {
    bool has_path = false;
    for (const Step& step : steps) {
      if (step.target == Target::kSkip) {
        SERAC_RETURN_IF_ERROR(Skip(*step.type, bytes));
        continue;
      }
      SERAC_ASSIGN_OR_RETURN(const avro::Schema* type, Branch(step.type, bytes));
      if (type == nullptr) continue;
      const avro::Schema& t = *type;
      switch (step.target) {
        case Target::kManifestPath: {
          SERAC_ASSIGN_OR_RETURN(std::string_view text, Text(t, bytes, step.name));
          m.manifest_path.assign(text);
          has_path = true;
          break;
        }
        case Target::kManifestLength:
          SERAC_RETURN_IF_ERROR(Assign(m.manifest_length, Long(t, bytes, step.name)));
          break;
        case Target::kSpecId:
          SERAC_RETURN_IF_ERROR(Assign(m.partition_spec_id, Int(t, bytes, step.name)));
          break;
        case Target::kManifestContent: {
          SERAC_ASSIGN_OR_RETURN(int32_t content, Int(t, bytes, step.name));
          if (content < 0 || content > 1)
            return Bad("manifest content " + std::to_string(content) + " is not 0 or 1");
          m.content = static_cast<ManifestContent>(content);
          break;
        }
        case Target::kManifestSequenceNumber:
          SERAC_RETURN_IF_ERROR(Assign(m.sequence_number, Long(t, bytes, step.name)));
          has_sequence_number = true;
          break;
        case Target::kMinSequenceNumber:
          SERAC_RETURN_IF_ERROR(Assign(m.min_sequence_number, Long(t, bytes, step.name)));
          break;
        case Target::kAddedSnapshotId:
          SERAC_RETURN_IF_ERROR(Assign(m.added_snapshot_id, Long(t, bytes, step.name)));
          break;
        case Target::kAddedFilesCount:
          SERAC_RETURN_IF_ERROR(Assign(m.added_files_count, Int(t, bytes, step.name)));
          break;
        case Target::kExistingFilesCount:
          SERAC_RETURN_IF_ERROR(Assign(m.existing_files_count, Int(t, bytes, step.name)));
          break;
        case Target::kDeletedFilesCount:
          SERAC_RETURN_IF_ERROR(Assign(m.deleted_files_count, Int(t, bytes, step.name)));
          break;
        case Target::kAddedRowsCount:
          SERAC_RETURN_IF_ERROR(Assign(m.added_rows_count, Long(t, bytes, step.name)));
          break;
        case Target::kExistingRowsCount:
          SERAC_RETURN_IF_ERROR(Assign(m.existing_rows_count, Long(t, bytes, step.name)));
          break;
        case Target::kDeletedRowsCount:
          SERAC_RETURN_IF_ERROR(Assign(m.deleted_rows_count, Long(t, bytes, step.name)));
          break;
        case Target::kPartitionSummaries:
          SERAC_RETURN_IF_ERROR(ReadSummaries(t, bytes, m.partitions));
          break;
        case Target::kManifestKeyMetadata: {
          SERAC_ASSIGN_OR_RETURN(std::string_view key, Text(t, bytes, step.name));
          m.key_metadata = std::string(key);
          break;
        }
        case Target::kManifestFirstRowId:
          SERAC_RETURN_IF_ERROR(Assign(m.first_row_id, Long(t, bytes, step.name)));
          break;
        default:
          SERAC_RETURN_IF_ERROR(Skip(t, bytes));
          break;
      }
    }
    if (!has_path) return Bad("a manifest_file without manifest_path");
    return Status::Ok();
  }
};

int ParseVersion(const std::string* text, int fallback) {
  if (text == nullptr) return fallback;
  int value = 0;
  auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size()) return -1;
  return value;
}

// Sets what an entry leaves null as Java's InheritableMetadataFactory and ManifestReader's id
// assigner do.
void Inherit(const ManifestFile& manifest, ManifestEntry& entry, std::optional<int64_t>& next_row_id) {
  if (!entry.snapshot_id) entry.snapshot_id = manifest.added_snapshot_id;
  // v1 manifests have sequence number 0 throughout; from v2 only ADDED entries inherit.
  const bool inherits = manifest.sequence_number == 0 || entry.status == EntryStatus::kAdded;
  if (manifest.sequence_number != kUnassignedSequenceNumber && inherits) {
    if (!entry.sequence_number) entry.sequence_number = manifest.sequence_number;
    if (!entry.file_sequence_number) entry.file_sequence_number = manifest.sequence_number;
  }
  if (entry.file.content != FileContent::kData) return;
  if (!next_row_id) {
    // A committed manifest without a first row id predates v3: its files have no row ids.
    entry.file.first_row_id.reset();
    return;
  }
  if (entry.status != EntryStatus::kDeleted && !entry.file.first_row_id) {
    entry.file.first_row_id = *next_row_id;
    *next_row_id += entry.file.record_count;
  }
}

}  // namespace

struct ManifestReader::State {
  std::string path;  // owned: the Reader's view points here
  ManifestFile manifest;
  bool inherit = true;
  std::optional<avro::FileReader> file;
  std::vector<Step> steps;
  ManifestContents header;
  std::optional<int64_t> next_row_id;
  uint64_t left_in_block = 0;
  std::string_view block;
  bool done = false;
};

ManifestReader::ManifestReader(std::unique_ptr<State> state) : state_(std::move(state)) {}
ManifestReader::ManifestReader(ManifestReader&&) noexcept = default;
ManifestReader& ManifestReader::operator=(ManifestReader&&) noexcept = default;
ManifestReader::~ManifestReader() = default;

const ManifestContents& ManifestReader::header() const { return state_->header; }

Result<ManifestReader> ManifestReader::Open(std::string_view bytes, const ManifestFile& manifest,
                                            bool inherit) {
  auto state = std::make_unique<State>();
  state->path = manifest.manifest_path;
  state->manifest = manifest;
  state->inherit = inherit;
  state->next_row_id = manifest.first_row_id;
  const Reader reader{state->path};
  auto file = avro::FileReader::Open(bytes);
  if (!file.ok()) return reader.Bad(file.status().message());
  ManifestContents& header = state->header;
  header.format_version = ParseVersion(file->FindMetadata("format-version"), 1);
  if (header.format_version < 1 || header.format_version > 3) {
    return reader.Bad("format-version is not 1, 2 or 3");
  }
  if (const std::string* content = file->FindMetadata("content")) {
    if (*content == "deletes") {
      header.content = ManifestContent::kDeletes;
    } else if (*content != "data") {
      return reader.Bad("content \"" + *content + "\" is neither data nor deletes");
    }
  }
  header.partition_spec_id =
      ParseVersion(file->FindMetadata("partition-spec-id"), manifest.partition_spec_id);
  if (const std::string* schema = file->FindMetadata("schema")) header.schema_json = *schema;
  if (const std::string* spec = file->FindMetadata("partition-spec")) header.partition_spec_json = *spec;

  const avro::Schema& entry_schema = *file->schema();
  if (entry_schema.type != avro::Type::kRecord) return reader.Bad("the schema is not a record");
  state->steps = Compile(entry_schema, kEntryFields);
  auto has = [](const std::vector<Step>& list, Target target) {
    return std::any_of(list.begin(), list.end(), [&](const Step& step) { return step.target == target; });
  };
  if (!has(state->steps, Target::kStatus) || !has(state->steps, Target::kDataFile)) {
    return reader.Bad("not a manifest: its records have no status and data_file");
  }
  for (Step& step : state->steps) {
    if (step.target != Target::kDataFile) continue;
    const avro::Schema* data_file =
        step.type->type == avro::Type::kUnion ? step.type->OptionalOf() : step.type;
    if (data_file == nullptr || data_file->type != avro::Type::kRecord)
      return reader.Bad("data_file is not a record");
    step.nested = Compile(*data_file, kDataFileFields);
  }
  state->file.emplace(std::move(file).value());
  return ManifestReader(std::move(state));
}

Result<bool> ManifestReader::Next(ManifestEntry& entry) {
  State& s = *state_;
  const Reader reader{s.path};
  while (s.left_in_block == 0) {
    if (s.done) return false;
    if (!s.block.empty()) return reader.Bad("a block has bytes after its last entry");
    auto more = s.file->NextBlock(s.left_in_block, s.block);
    if (!more.ok()) return reader.Bad(more.status().message());
    if (!*more) {
      s.done = true;
      return false;
    }
    // Every entry takes at least a byte (its status).
    if (s.left_in_block > s.block.size()) return reader.Bad("a block claims more entries than bytes");
  }
  --s.left_in_block;
  const std::string_view start = s.block;
  if (!reader.FastEntry(s.steps, s.block, entry)) {
    s.block = start;  // decoded again, checked, for the error (or a shape the fast decode leaves)
    SERAC_RETURN_IF_ERROR(reader.ReadEntry(s.steps, s.block, entry));
  }
  entry.file.spec_id = s.header.partition_spec_id;
  if (s.inherit) Inherit(s.manifest, entry, s.next_row_id);
  return true;
}

Result<ManifestContents> ReadManifest(std::string_view bytes, const ManifestFile& manifest, bool inherit) {
  SERAC_ASSIGN_OR_RETURN(ManifestReader reader, ManifestReader::Open(bytes, manifest, inherit));
  ManifestContents contents = reader.header();
  while (true) {
    ManifestEntry& entry = contents.entries.emplace_back();
    SERAC_ASSIGN_OR_RETURN(bool more, reader.Next(entry));
    if (!more) {
      contents.entries.pop_back();
      return contents;
    }
  }
}

Result<std::vector<ManifestFile>> ReadManifestList(std::string_view bytes, std::string_view path) {
  Reader reader{path};
  auto file = avro::FileReader::Open(bytes);
  if (!file.ok()) return reader.Bad(file.status().message());
  const avro::Schema& schema = *file->schema();
  if (schema.type != avro::Type::kRecord) return reader.Bad("the schema is not a record");
  const std::vector<Step> steps = Compile(schema, kManifestFileFields);
  if (std::none_of(steps.begin(), steps.end(),
                   [](const Step& step) { return step.target == Target::kManifestPath; })) {
    return reader.Bad("not a manifest list: its records have no manifest_path");
  }
  std::vector<ManifestFile> manifests;
  uint64_t count = 0;
  std::string_view block;
  while (true) {
    auto more = file->NextBlock(count, block);
    if (!more.ok()) return reader.Bad(more.status().message());
    if (!*more) break;
    if (count > block.size() + 1) return reader.Bad("a block claims more manifests than bytes");
    for (uint64_t i = 0; i < count; ++i) {
      ManifestFile& m = manifests.emplace_back();
      bool has_sequence_number = false;
      SERAC_RETURN_IF_ERROR(reader.ReadManifestFile(steps, block, m, has_sequence_number));
      if (!has_sequence_number) {
        m.sequence_number = 0;  // v1: everything is sequence number 0
        m.min_sequence_number = 0;
      }
    }
    if (!block.empty()) return reader.Bad("a block has bytes after its last manifest");
  }
  return manifests;
}

Result<ManifestHeaderTypes> ReadManifestHeaderTypes(const ManifestContents& contents) {
  ManifestHeaderTypes types;
  if (contents.schema_json.empty()) return Invalid("the manifest's header has no schema");
  SERAC_RETURN_IF_ERROR(Assign(types.schema, ParseSchema(contents.schema_json)));
  types.spec.spec_id = contents.partition_spec_id;
  const nlohmann::json fields = nlohmann::json::parse(contents.partition_spec_json, nullptr, false);
  if (!fields.is_array()) return Invalid("the manifest's partition-spec is not a JSON array");
  int32_t next_field_id = 1000;  // v1 specs without field ids, as Java numbers them
  for (const nlohmann::json& field : fields) {
    if (!field.is_object()) return Invalid("a partition-spec field is not an object");
    PartitionField out;
    auto name = field.find("name");
    auto transform = field.find("transform");
    auto source = field.find("source-id");
    if (name == field.end() || !name->is_string() || transform == field.end() || !transform->is_string() ||
        source == field.end() || !source->is_number_integer()) {
      return Invalid("a partition-spec field needs name, transform and source-id");
    }
    out.name = name->get<std::string>();
    out.transform = transform->get<std::string>();
    out.source_ids = {source->get<int32_t>()};
    auto id = field.find("field-id");
    out.field_id = id != field.end() && id->is_number_integer() ? id->get<int32_t>() : next_field_id;
    next_field_id = out.field_id + 1;
    types.spec.fields.push_back(std::move(out));
  }
  SERAC_RETURN_IF_ERROR(Assign(types.partition_type, PartitionType(types.spec, types.schema)));
  return types;
}

}  // namespace serac::iceberg
