// Fuzzes how `serac sync` reads PostgreSQL's values: COPY's binary rows (CopyBinaryRows: every
// binary form it decodes, numeric and money included, and the text path) into a row builder, and
// the first byte's choice of text reads (pg_values.h: COPY text lines split, each field read as
// every Iceberg type a column maps to). Input: a selector byte, then length-prefixed buffers (two
// bytes, big-endian) as PQgetCopyData hands them over. No crash, no read past a buffer; a row the
// decoder accepts has exactly one value per column.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "sync/pg_binary.h"
#include "sync/pg_values.h"

namespace {

namespace sync = serac::sync;
namespace iceberg = serac::iceberg;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "fuzz oracle: %s\n", what);
  std::abort();
}

iceberg::Type Of(iceberg::TypeId id, int32_t precision = 0, int32_t scale = 0) {
  iceberg::Type type;
  type.id = id;
  type.precision = precision;
  type.scale = scale;
  return type;
}

// One column of every kind CopyBinaryRows reads, and one read from its text (an array).
std::vector<sync::LoadColumn> Columns() {
  using iceberg::TypeId;
  iceberg::Type list = Of(TypeId::kList);
  iceberg::NestedField element;
  element.id = 100;
  element.name = "element";
  element.type = Of(TypeId::kInt);
  list.fields.push_back(element);
  const std::vector<std::pair<std::string, iceberg::Type>> columns = {
      {"bool", Of(TypeId::kBoolean)},
      {"int2", Of(TypeId::kInt)},
      {"int4", Of(TypeId::kLong)},
      {"int8", Of(TypeId::kLong)},
      {"float4", Of(TypeId::kDouble)},
      {"float8", Of(TypeId::kDouble)},
      {"date", Of(TypeId::kDate)},
      {"time", Of(TypeId::kTime)},
      {"timestamp", Of(TypeId::kTimestamp)},
      {"timestamptz", Of(TypeId::kTimestampTz)},
      {"numeric", Of(TypeId::kDecimal, 20, 4)},
      {"money", Of(TypeId::kDecimal, 19, 2)},
      {"uuid", Of(TypeId::kUuid)},
      {"bytea", Of(TypeId::kBinary)},
      {"text", Of(TypeId::kString)},
      {"_int4", list},
  };
  std::vector<sync::LoadColumn> load;
  for (size_t i = 0; i < columns.size(); ++i) {
    sync::LoadColumn column;
    column.name = "c" + std::to_string(i);
    column.type.name = columns[i].first;
    if (columns[i].first == "_int4") {
      column.type.category = 'A';
      column.type.element_name = "int4";
    }
    column.field = i;
    column.field_type = columns[i].second;
    load.push_back(std::move(column));
  }
  return load;
}

iceberg::Schema SchemaOf(const std::vector<sync::LoadColumn>& columns) {
  iceberg::Schema schema;
  for (const sync::LoadColumn& column : columns) {
    iceberg::NestedField field;
    field.id = static_cast<int32_t>(column.field) + 1;
    field.name = column.name;
    field.type = column.field_type;
    schema.fields.push_back(std::move(field));
  }
  return schema;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<sync::LoadColumn> kColumns = Columns();
  static const iceberg::Schema kSchema = SchemaOf(kColumns);
  std::string_view input(reinterpret_cast<const char*>(data), size);
  if (input.empty()) return 0;
  const uint8_t selector = static_cast<uint8_t>(input[0]);
  input.remove_prefix(1);
  if (selector & 1) {
    // Text: COPY lines, each field read as the column's type of its position.
    std::vector<std::optional<std::string>> fields;
    if (sync::SplitCopyLine(input, fields).ok()) {
      for (size_t i = 0; i < fields.size() && i < kColumns.size(); ++i) {
        std::optional<std::string_view> text;
        if (fields[i]) text = *fields[i];
        (void)sync::ValueFromText(text, kColumns[i].field_type);
      }
    }
    return 0;
  }
  auto rows = serac::parquet::RowBatchBuilder::Make(kSchema);
  if (!rows.ok()) Fail("no row builder");
  sync::CopyBinaryRows decoder(kColumns);
  (void)decoder.SelectList();
  int64_t accepted = 0;
  while (input.size() >= 2) {
    const size_t length = (static_cast<uint8_t>(input[0]) << 8) | static_cast<uint8_t>(input[1]);
    input.remove_prefix(2);
    const std::string_view buffer = input.substr(0, length);
    input.remove_prefix(buffer.size());
    bool row_done = false;
    if (!decoder.Read(buffer, *rows, row_done).ok()) break;
    if (row_done) ++accepted;
    if (rows->rows() != accepted) Fail("a row accepted without being ended, or ended twice");
  }
  return 0;
}
