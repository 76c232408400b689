// Fuzzes row filters: the REST spec's JSON expressions (first byte 'j') and the text form users
// type (anything else), then binding to a schema of every primitive type and evaluation against
// files with partitions and metrics of those types. Beyond crashes: an expression serac reads, its
// text form reads back to the same text.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "iceberg/expression/expression.h"

namespace {

namespace ice = serac::iceberg;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "fuzz oracle: %s\n", what);
  std::abort();
}

const ice::TableMetadata& Table() {
  static const ice::TableMetadata table = [] {
    auto creation = ice::TableCreation::Parse(R"J({"name": "t", "schema": {"type": "struct", "schema-id": 0,
      "fields": [{"id": 1, "name": "id", "required": true, "type": "long"},
                 {"id": 2, "name": "s", "required": false, "type": "string"},
                 {"id": 3, "name": "ts", "required": false, "type": "timestamptz"},
                 {"id": 4, "name": "d", "required": false, "type": "decimal(38, 9)"},
                 {"id": 5, "name": "f", "required": false, "type": "double"},
                 {"id": 6, "name": "day", "required": false, "type": "date"},
                 {"id": 7, "name": "n", "required": false, "type": "int"},
                 {"id": 8, "name": "u", "required": false, "type": "uuid"},
                 {"id": 9, "name": "b", "required": false, "type": "binary"},
                 {"id": 10, "name": "ok", "required": false, "type": "boolean"},
                 {"id": 11, "name": "t", "required": false, "type": "time"},
                 {"id": 12, "name": "ns", "required": false, "type": "timestamp_ns"}]},
      "partition-spec": {"spec-id": 0, "fields": [
        {"source-id": 2, "field-id": 1000, "name": "s", "transform": "truncate[3]"},
        {"source-id": 3, "field-id": 1001, "name": "ts_hour", "transform": "hour"},
        {"source-id": 1, "field-id": 1002, "name": "id_bucket", "transform": "bucket[7]"},
        {"source-id": 6, "field-id": 1003, "name": "day_year", "transform": "year"},
        {"source-id": 7, "field-id": 1004, "name": "n", "transform": "identity"}]},
      "properties": {"format-version": "3"}})J");
    if (!creation.ok()) Fail("the fuzz table does not parse");
    auto metadata = creation->NewMetadata("file:///t", "6f0b6c8c-0000-4000-8000-000000000001", 1);
    if (!metadata.ok()) Fail("the fuzz table does not build");
    return std::move(metadata).value();
  }();
  return table;
}

std::string Single(const ice::Type& type, const ice::Datum& value) {
  auto bytes = ice::ToSingleValue(type, value);
  return bytes.ok() ? *bytes : std::string();
}

// Files whose partitions and metrics come from the input's bytes.
std::vector<ice::DataFile> Files(std::string_view input) {
  std::vector<ice::DataFile> files;
  const ice::Schema schema = Table().CurrentSchema();
  for (int variant = 0; variant < 4; ++variant) {
    ice::DataFile file;
    file.record_count = variant == 3 ? 0 : 10;
    const auto byte = [&](size_t i) -> int64_t {
      return input.empty() ? 0 : static_cast<int8_t>(input[(i * 7 + variant) % input.size()]);
    };
    if (variant != 2) {
      file.partition = {ice::Datum(std::string(input.substr(0, std::min<size_t>(3, input.size())))),
                        ice::Datum(int32_t(byte(1) * 1000)), ice::Datum(int32_t(byte(2) & 7)),
                        variant == 1 ? ice::Datum() : ice::Datum(int32_t(byte(3))),
                        ice::Datum(int32_t(byte(4)))};
    }
    for (const ice::NestedField& field : schema.fields) {
      file.value_counts.emplace_back(field.id, 10);
      file.null_value_counts.emplace_back(field.id, (byte(static_cast<size_t>(field.id)) & 3) == 0 ? 10 : 0);
      file.nan_value_counts.emplace_back(field.id, byte(static_cast<size_t>(field.id) + 1) & 1);
      // Bounds are the input's bytes read in the column's single-value form (often malformed).
      const size_t at = static_cast<size_t>(field.id) % (input.size() + 1);
      file.lower_bounds.emplace_back(field.id, std::string(input.substr(at, 8)));
      file.upper_bounds.emplace_back(field.id, std::string(input.substr(at / 2, 8)));
    }
    file.lower_bounds.emplace_back(1, Single(ice::Type{ice::TypeId::kLong}, ice::Datum(byte(5))));
    files.push_back(std::move(file));
  }
  return files;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const bool json = !input.empty() && input[0] == 'j';
  if (!input.empty()) input.remove_prefix(1);
  auto parsed = json ? ice::ParseExpressionJson(input) : ice::ParseFilterText(input);
  if (!parsed.ok()) return 0;
  const std::string text = parsed->ToString();
  auto again = ice::ParseFilterText(text);
  if (!again.ok()) Fail("the text form of an expression does not parse");
  if (again->ToString() != text) Fail("the text form of an expression changed on a round trip");
  for (bool case_sensitive : {true, false}) {
    auto bound = ice::BindExpression(*parsed, Table().CurrentSchema(), case_sensitive);
    if (!bound.ok()) continue;
    const ice::FileFilter filter(std::move(bound).value(), Table());
    for (const ice::DataFile& file : Files(input)) (void)filter.Evaluate(file);
  }
  return 0;
}
