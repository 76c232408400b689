// Table properties about writing, and the manifest metrics of a Parquet file from its footer, as
// Java Iceberg's ParquetUtil.footerMetrics computes them: value counts (nulls included), null counts
// and compressed sizes summed over row groups, bounds from each row group's statistics turned into
// the single-value form and truncated as the column's metrics mode says. Bounds are kept only when
// every row group with values has them, and never for columns inside lists or maps.
#include <arrow/io/memory.h>
#include <parquet/statistics.h>

#include <algorithm>
#include <charconv>

#include "common/encoding.h"
#include "iceberg/schema/partition.h"
#include "parquet/parquet_internal.h"

namespace serac::parquet {

namespace {

Status BadProperty(const std::string& key, const std::string& value, std::string_view why) {
  return Error(ErrorCode::kInvalidArgument,
               "table property " + key + " = \"" + value + "\": " + std::string(why));
}

Result<int64_t> PositiveLong(const std::string& key, const std::string& value) {
  int64_t number = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (error != std::errc() || end != value.data() + value.size() || number <= 0) {
    return BadProperty(key, value, "not a positive integer");
  }
  return number;
}

// The first `length` code points of UTF-8 text.
std::string_view PrefixCodePoints(std::string_view text, int32_t length, bool& truncated) {
  int32_t points = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<uint8_t>(text[i]) & 0xC0) != 0x80) {
      if (points == length) {
        truncated = true;
        return text.substr(0, i);
      }
      ++points;
    }
  }
  truncated = false;
  return text;
}

void AppendUtf8(std::string& out, uint32_t point) {
  if (point < 0x80) {
    out.push_back(static_cast<char>(point));
  } else if (point < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (point >> 6)));
    out.push_back(static_cast<char>(0x80 | (point & 0x3F)));
  } else if (point < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (point >> 12)));
    out.push_back(static_cast<char>(0x80 | ((point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (point & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (point >> 18)));
    out.push_back(static_cast<char>(0x80 | ((point >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (point & 0x3F)));
  }
}

// Decodes UTF-8 into code points (input that is not UTF-8 is taken byte by byte).
std::vector<uint32_t> CodePoints(std::string_view text) {
  std::vector<uint32_t> points;
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<uint8_t>(text[i]);
    const size_t size = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (size == 1 || i + size > text.size()) {
      points.push_back(lead);
      ++i;
      continue;
    }
    uint32_t point = lead & (0xFF >> (size + 1));
    for (size_t k = 1; k < size; ++k) point = (point << 6) | (static_cast<uint8_t>(text[i + k]) & 0x3F);
    points.push_back(point);
    i += size;
  }
  return points;
}

// An upper bound of every string that starts with the first `length` code points of `text`:
// those code points with the last one that can be incremented incremented (Java's
// UnicodeUtil.truncateStringMax). None when no code point can be.
std::optional<std::string> TruncateStringUpper(std::string_view text, int32_t length) {
  bool truncated = false;
  PrefixCodePoints(text, length, truncated);
  if (!truncated) return std::string(text);
  std::vector<uint32_t> points = CodePoints(text);
  points.resize(static_cast<size_t>(length));
  for (size_t i = points.size(); i-- > 0;) {
    uint32_t next = points[i] + 1;
    if (next >= 0xD800 && next <= 0xDFFF) next = 0xE000;  // surrogates are not code points
    if (next <= 0x10FFFF) {
      std::string out;
      for (size_t k = 0; k < i; ++k) AppendUtf8(out, points[k]);
      AppendUtf8(out, next);
      return out;
    }
  }
  return std::nullopt;
}

std::optional<std::string> TruncateBinaryUpper(std::string_view bytes, int32_t length) {
  if (bytes.size() <= static_cast<size_t>(length)) return std::string(bytes);
  std::string out(bytes.substr(0, static_cast<size_t>(length)));
  while (!out.empty()) {
    if (static_cast<uint8_t>(out.back()) != 0xFF) {
      out.back() = static_cast<char>(static_cast<uint8_t>(out.back()) + 1);
      return out;
    }
    out.pop_back();
  }
  return std::nullopt;
}

// A Parquet plain-encoded statistic of a column as the Iceberg single-value form of `type`.
std::optional<std::string> ToSingleValueForm(const std::string& encoded, ::parquet::Type::type physical,
                                             const iceberg::Type& type) {
  if (type.id == iceberg::TypeId::kDecimal) {
    // INT32 and INT64 hold the unscaled value little-endian; FIXED_LEN_BYTE_ARRAY big-endian.
    std::string big;
    if (physical == ::parquet::Type::INT32 || physical == ::parquet::Type::INT64) {
      big.assign(encoded.rbegin(), encoded.rend());
    } else {
      big = encoded;
    }
    if (big.empty()) return std::nullopt;
    return std::string(iceberg::TrimTwosComplement(big));
  }
  return encoded;
}

struct ColumnTotals {
  int32_t field_id = 0;
  const iceberg::Type* type = nullptr;
  bool repeated = false;
  MetricsMode mode;
  int64_t values = 0;
  int64_t nulls = 0;
  bool nulls_known = true;
  int64_t size = 0;
  bool bounds_known = true;
  std::optional<iceberg::Datum> lower;
  std::optional<iceberg::Datum> upper;
};

// Every leaf column's dotted name by field id.
void CollectNames(const std::vector<iceberg::NestedField>& fields, const std::string& prefix,
                  std::map<int32_t, std::string>& out) {
  for (const iceberg::NestedField& field : fields) {
    const std::string name = prefix.empty() ? field.name : prefix + "." + field.name;
    out[field.id] = name;
    CollectNames(field.type.fields, name, out);
  }
}

}  // namespace

Result<MetricsMode> MetricsMode::Parse(std::string_view text) {
  MetricsMode mode;
  const std::string lower = AsciiLower(text);
  if (lower == "none") {
    mode.kind = Kind::kNone;
  } else if (lower == "counts") {
    mode.kind = Kind::kCounts;
  } else if (lower == "full") {
    mode.kind = Kind::kFull;
  } else if (lower.starts_with("truncate(") && lower.ends_with(")")) {
    const std::string digits = lower.substr(9, lower.size() - 10);
    int32_t length = 0;
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), length);
    if (error != std::errc() || end != digits.data() + digits.size() || length <= 0) {
      return Error(ErrorCode::kInvalidArgument,
                   "metrics mode " + std::string(text) + ": the length must be positive");
    }
    mode.kind = Kind::kTruncate;
    mode.length = length;
  } else {
    return Error(ErrorCode::kInvalidArgument,
                 "metrics mode " + std::string(text) + " is not none, counts, truncate(N) or full");
  }
  return mode;
}

Result<WriteOptions> WriteOptions::FromTableProperties(const std::map<std::string, std::string>& properties) {
  WriteOptions options;
  for (const auto& [key, value] : properties) {
    if (key == "write.target-file-size-bytes") {
      SERAC_ASSIGN_OR_RETURN(options.target_file_size_bytes, PositiveLong(key, value));
    } else if (key == "write.parquet.compression-codec") {
      const std::string codec = AsciiLower(value);
      if (codec != "zstd" && codec != "snappy" && codec != "gzip" && codec != "lz4" && codec != "brotli" &&
          codec != "uncompressed") {
        return BadProperty(key, value, "not zstd, snappy, gzip, lz4, brotli or uncompressed");
      }
      options.compression_codec = codec;
    } else if (key == "write.parquet.compression-level") {
      int32_t level = 0;
      auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), level);
      if (error != std::errc() || end != value.data() + value.size())
        return BadProperty(key, value, "not an integer");
      options.compression_level = level;
    } else if (key == "write.parquet.row-group-size-bytes") {
      SERAC_ASSIGN_OR_RETURN(options.row_group_size_bytes, PositiveLong(key, value));
    } else if (key == "write.parquet.page-size-bytes") {
      SERAC_ASSIGN_OR_RETURN(options.page_size_bytes, PositiveLong(key, value));
    } else if (key == "write.metadata.metrics.default") {
      auto mode = MetricsMode::Parse(value);
      if (!mode.ok()) return BadProperty(key, value, mode.status().message());
      options.default_metrics = *mode;
      options.default_metrics_explicit = true;
    } else if (key.starts_with("write.metadata.metrics.column.")) {
      auto mode = MetricsMode::Parse(value);
      if (!mode.ok()) return BadProperty(key, value, mode.status().message());
      options.column_metrics[key.substr(std::string_view("write.metadata.metrics.column.").size())] = *mode;
    } else if (key == "write.metadata.metrics.max-inferred-column-defaults") {
      SERAC_ASSIGN_OR_RETURN(int64_t columns, PositiveLong(key, value));
      options.max_inferred_column_defaults = static_cast<int32_t>(std::min<int64_t>(columns, INT32_MAX));
    }
  }
  return options;
}

iceberg::DataFile MetricsFromFooter(const ::parquet::FileMetaData& footer, const iceberg::Schema& schema,
                                    const WriteOptions& options, const iceberg::ColumnCounts& nan_counts) {
  iceberg::DataFile file;
  file.record_count = footer.num_rows();
  std::map<int32_t, std::string> names;
  CollectNames(schema.fields, "", names);

  const ::parquet::SchemaDescriptor& parquet_schema = *footer.schema();
  std::vector<ColumnTotals> columns(static_cast<size_t>(parquet_schema.num_columns()));
  for (int i = 0; i < parquet_schema.num_columns(); ++i) {
    const ::parquet::ColumnDescriptor* descriptor = parquet_schema.Column(i);
    ColumnTotals& column = columns[static_cast<size_t>(i)];
    column.field_id = descriptor->schema_node()->field_id();
    const iceberg::NestedField* field = schema.FindField(column.field_id);
    column.type = field != nullptr ? &field->type : nullptr;
    column.repeated = descriptor->max_repetition_level() > 0;
    auto named = names.find(column.field_id);
    auto explicit_mode =
        named != names.end() ? options.column_metrics.find(named->second) : options.column_metrics.end();
    if (explicit_mode != options.column_metrics.end()) {
      column.mode = explicit_mode->second;
    } else if (!options.default_metrics_explicit && i >= options.max_inferred_column_defaults) {
      column.mode.kind = MetricsMode::Kind::kNone;
    } else {
      column.mode = options.default_metrics;
    }
  }

  for (int g = 0; g < footer.num_row_groups(); ++g) {
    std::unique_ptr<::parquet::RowGroupMetaData> group = footer.RowGroup(g);
    file.split_offsets.push_back(group->file_offset());
    for (int i = 0; i < group->num_columns(); ++i) {
      std::unique_ptr<::parquet::ColumnChunkMetaData> chunk = group->ColumnChunk(i);
      ColumnTotals& column = columns[static_cast<size_t>(i)];
      column.values += chunk->num_values();
      column.size += chunk->total_compressed_size();
      std::shared_ptr<::parquet::Statistics> stats = chunk->is_stats_set() ? chunk->statistics() : nullptr;
      if (stats != nullptr && stats->HasNullCount()) {
        column.nulls += stats->null_count();
      } else {
        column.nulls_known = false;
      }
      const bool has_values = stats == nullptr || stats->num_values() > 0;
      if (!has_values) continue;
      if (stats == nullptr || !stats->HasMinMax() || column.type == nullptr) {
        column.bounds_known = false;
        continue;
      }
      const ::parquet::Type::type physical = chunk->type();
      auto lower_bytes = ToSingleValueForm(stats->EncodeMin(), physical, *column.type);
      auto upper_bytes = ToSingleValueForm(stats->EncodeMax(), physical, *column.type);
      auto lower = lower_bytes ? iceberg::FromSingleValue(*column.type, *lower_bytes)
                               : Result<iceberg::Datum>(Status());
      auto upper = upper_bytes ? iceberg::FromSingleValue(*column.type, *upper_bytes)
                               : Result<iceberg::Datum>(Status());
      if (!lower_bytes || !upper_bytes || !lower.ok() || !upper.ok() || iceberg::IsNull(*lower)) {
        column.bounds_known = false;
        continue;
      }
      if (!column.lower || iceberg::CompareDatums(*column.type, *lower, *column.lower) < 0)
        column.lower = *lower;
      if (!column.upper || iceberg::CompareDatums(*column.type, *upper, *column.upper) > 0)
        column.upper = *upper;
    }
  }

  for (const ColumnTotals& column : columns) {
    if (column.mode.kind == MetricsMode::Kind::kNone) continue;
    file.column_sizes.emplace_back(column.field_id, column.size);
    file.value_counts.emplace_back(column.field_id, column.values);
    if (column.nulls_known) file.null_value_counts.emplace_back(column.field_id, column.nulls);
    if (column.mode.kind == MetricsMode::Kind::kCounts || column.repeated || !column.bounds_known ||
        !column.lower || !column.upper || column.type == nullptr) {
      continue;
    }
    auto lower = iceberg::ToSingleValue(*column.type, *column.lower);
    auto upper = iceberg::ToSingleValue(*column.type, *column.upper);
    if (!lower.ok() || !upper.ok()) continue;
    std::optional<std::string> lower_bound = *lower;
    std::optional<std::string> upper_bound = *upper;
    if (column.mode.kind == MetricsMode::Kind::kTruncate) {
      if (column.type->id == iceberg::TypeId::kString) {
        bool truncated = false;
        lower_bound = std::string(PrefixCodePoints(*lower, column.mode.length, truncated));
        upper_bound = TruncateStringUpper(*upper, column.mode.length);
      } else if (column.type->id == iceberg::TypeId::kBinary) {
        lower_bound = lower->substr(0, std::min(lower->size(), static_cast<size_t>(column.mode.length)));
        upper_bound = TruncateBinaryUpper(*upper, column.mode.length);
      }
    }
    if (lower_bound) file.lower_bounds.emplace_back(column.field_id, std::move(*lower_bound));
    if (upper_bound) file.upper_bounds.emplace_back(column.field_id, std::move(*upper_bound));
  }
  for (const auto& [id, count] : nan_counts) {
    auto named =
        std::find_if(columns.begin(), columns.end(), [&](const ColumnTotals& c) { return c.field_id == id; });
    if (named != columns.end() && named->mode.kind != MetricsMode::Kind::kNone) {
      file.nan_value_counts.emplace_back(id, count);
    }
  }
  auto by_id = [](const auto& a, const auto& b) { return a.first < b.first; };
  std::sort(file.column_sizes.begin(), file.column_sizes.end(), by_id);
  std::sort(file.value_counts.begin(), file.value_counts.end(), by_id);
  std::sort(file.null_value_counts.begin(), file.null_value_counts.end(), by_id);
  std::sort(file.nan_value_counts.begin(), file.nan_value_counts.end(), by_id);
  std::sort(file.lower_bounds.begin(), file.lower_bounds.end(), by_id);
  std::sort(file.upper_bounds.begin(), file.upper_bounds.end(), by_id);
  return file;
}

Result<iceberg::DataFile> MetricsOfParquetFile(std::string_view bytes, const iceberg::Schema& schema,
                                               const WriteOptions& options) {
  auto buffer = std::make_shared<arrow::Buffer>(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                static_cast<int64_t>(bytes.size()));
  auto input = std::make_shared<arrow::io::BufferReader>(buffer);
  // Arrow's footer accessors throw on a malformed footer (row group and column chunk metadata are
  // decoded when first asked for), so the statistics are read inside the try too.
  try {
    std::shared_ptr<::parquet::FileMetaData> footer = ::parquet::ParquetFileReader::Open(input)->metadata();
    iceberg::DataFile file = MetricsFromFooter(*footer, schema, options, {});
    file.file_size_in_bytes = static_cast<int64_t>(bytes.size());
    return file;
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInvalidArgument, std::string("not a Parquet file: ") + e.what());
  }
}

}  // namespace serac::parquet
