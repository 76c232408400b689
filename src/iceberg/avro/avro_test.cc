#include "iceberg/avro/avro.h"

#include <gtest/gtest.h>

#include <string>

#include "iceberg/avro/avro_encoding_internal.h"

namespace serac::iceberg::avro {
namespace {

SchemaPtr MustParse(std::string_view json) {
  auto schema = ParseSchema(json);
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  return schema.ok() ? *schema : Primitive(Type::kNull);
}

std::string Encoded(const Schema& schema, const Value& value) {
  std::string out;
  Status encoded = Encode(schema, value, out);
  EXPECT_TRUE(encoded.ok()) << encoded.ToString();
  return out;
}

// A manifest-entry-like schema: Iceberg's attributes, an optional long, a map as an array of
// key/value records, a nested record, a fixed and a decimal.
constexpr char kEntrySchema[] = R"({"type": "record", "name": "manifest_entry", "fields": [
  {"name": "status", "type": "int", "field-id": 0},
  {"name": "snapshot_id", "type": ["null", "long"], "default": null, "field-id": 1},
  {"name": "data_file", "field-id": 2, "type": {"type": "record", "name": "r2", "fields": [
    {"name": "file_path", "type": "string", "field-id": 100, "doc": "Location URI with FS scheme"},
    {"name": "record_count", "type": "long", "field-id": 103},
    {"name": "column_sizes", "type": ["null", {"type": "array", "logicalType": "map", "items": {
       "type": "record", "name": "k117_v118", "fields": [
         {"name": "key", "type": "int", "field-id": 117},
         {"name": "value", "type": "long", "field-id": 118}]}}], "default": null, "field-id": 108},
    {"name": "key_metadata", "type": ["null", "bytes"], "default": null, "field-id": 131},
    {"name": "uuid", "type": {"type": "fixed", "name": "uuid_fixed", "size": 16, "logicalType": "uuid"}, "field-id": 140},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}, "field-id": 141},
    {"name": "tags", "type": {"type": "array", "items": "string", "element-id": 142}, "field-id": 143},
    {"name": "props", "type": {"type": "map", "values": "double", "key-id": 144, "value-id": 145}, "field-id": 146}
  ]}}]})";

Value SampleEntry() {
  Value column_sizes = Value::InBranch(1, Value::List({Value::List({Value::Int(1), Value::Long(4096)}),
                                                       Value::List({Value::Int(2), Value::Long(77)})}));
  Value data_file = Value::List({
      Value::Bytes("s3://wh/t/data/00000-0.parquet"),
      Value::Long(1234),
      column_sizes,
      Value::InBranch(0, Value::Null()),
      Value::Bytes(std::string(16, '\x5a')),
      Value::Bytes(std::string("\x01\xe2", 2)),
      Value::List({Value::Bytes("a"), Value::Bytes("")}),
      Value::Map({{"x", Value::Double(1.5)}, {"y", Value::Double(-0.25)}}),
  });
  return Value::List({Value::Int(1), Value::InBranch(1, Value::Long(987654321012)), data_file});
}

TEST(AvroEncoding, VarintsAreZigZagAndBounded) {
  std::string out;
  encoding::AppendLong(out, 0);
  encoding::AppendLong(out, -1);
  encoding::AppendLong(out, 1);
  encoding::AppendLong(out, -64);
  encoding::AppendLong(out, 64);
  EXPECT_EQ(out, std::string("\x00\x01\x02\x7f\x80\x01", 6));
  for (int64_t value : {INT64_MIN, INT64_MAX, int64_t{-1234567890123}, int64_t{0}}) {
    std::string bytes;
    encoding::AppendLong(bytes, value);
    std::string_view view(bytes);
    EXPECT_EQ(*encoding::ReadLong(view), value);
    EXPECT_TRUE(view.empty());
  }
  std::string_view eleven_bytes("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
  EXPECT_FALSE(encoding::ReadLong(eleven_bytes).ok());
  std::string_view cut("\x80", 1);
  EXPECT_FALSE(encoding::ReadLong(cut).ok());
  std::string big;
  encoding::AppendLong(big, int64_t{1} << 40);
  std::string_view big_view(big);
  EXPECT_FALSE(encoding::ReadInt(big_view).ok());  // an int must fit 32 bits
}

TEST(AvroSchema, IcebergAttributesAndLogicalTypesSurviveARoundTrip) {
  SchemaPtr schema = MustParse(kEntrySchema);
  ASSERT_EQ(schema->type, Type::kRecord);
  EXPECT_EQ(schema->fields[1].field_id, 1);
  EXPECT_EQ(schema->fields[1].default_json, "null");
  const Schema& data_file = *schema->fields[2].type;
  EXPECT_EQ(data_file.name, "r2");
  EXPECT_EQ(data_file.fields[0].doc, "Location URI with FS scheme");
  const Schema* sizes = data_file.fields[2].type->OptionalOf();
  ASSERT_NE(sizes, nullptr);
  EXPECT_EQ(sizes->logical_type, "map");
  EXPECT_EQ(sizes->items->fields[0].field_id, 117);
  EXPECT_EQ(data_file.fields[4].type->logical_type, "uuid");
  EXPECT_EQ(data_file.fields[5].type->precision, 10);
  EXPECT_EQ(data_file.fields[5].type->scale, 2);
  EXPECT_EQ(data_file.fields[6].type->element_id, 142);
  EXPECT_EQ(data_file.fields[7].type->key_id, 144);
  EXPECT_EQ(data_file.fields[7].type->value_id, 145);

  // Written back and read again, nothing is lost.
  const std::string written = SchemaToJson(*schema);
  SchemaPtr again = MustParse(written);
  EXPECT_EQ(SchemaToJson(*again), written);
  for (const char* kept : {"\"field-id\":117", "\"logicalType\":\"map\"", "\"element-id\":142",
                           "\"key-id\":144", "\"logicalType\":\"decimal\"", "\"precision\":10"}) {
    EXPECT_NE(written.find(kept), std::string::npos) << kept << " missing from " << written;
  }
}

TEST(AvroSchema, NamedTypesAreReferencedByNameAndNamespace) {
  SchemaPtr schema = MustParse(R"({"type": "record", "name": "a.Outer", "fields": [
    {"name": "first", "type": {"type": "fixed", "name": "Hash", "size": 4}},
    {"name": "second", "type": "Hash"},
    {"name": "third", "type": "a.Hash"}]})");
  EXPECT_EQ(schema->fields[1].type, schema->fields[0].type);
  EXPECT_EQ(schema->fields[2].type->name, "a.Hash");
  const std::string written = SchemaToJson(*schema);
  EXPECT_NE(written.find("\"type\":\"a.Hash\""), std::string::npos) << written;
}

TEST(AvroSchema, BadSchemasAreRefusedWithTheReason) {
  for (
      const char* bad : {
          R"("nope")",
          R"({"type": "record", "name": "r", "fields": [{"name": "x"}]})",
          R"({"type": "record", "name": "r", "fields": [{"name": "x", "type": "int"}, {"name": "x", "type": "int"}]})",
          R"({"type": "record", "name": "node", "fields": [{"name": "next", "type": ["null", "node"]}]})",
          R"(["int", "int"])",
          R"([["int"]])",
          R"({"type": "fixed", "name": "f", "size": -1})",
          R"({"type": "fixed", "name": "f", "size": 99999999999})",
          R"({"type": "enum", "name": "e", "symbols": ["A", "A"]})",
          R"({"type": "enum", "name": "e", "symbols": ["A"], "default": "B"})",
          R"({"type": "record", "name": "1bad", "fields": []})",
          R"({"type": "array"})",
          R"({"type": "record", "name": "r", "fields": [{"name": "x", "type": "int", "field-id": "1"}]})",
          "[",
      }) {
    auto schema = ParseSchema(bad);
    EXPECT_FALSE(schema.ok()) << bad;
    if (!schema.ok()) {
      EXPECT_EQ(schema.status().code(), ErrorCode::kInvalidArgument) << bad;
    }
  }
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += R"({"type": "array", "items": )";
  deep += "\"int\"" + std::string(200, '}');
  EXPECT_FALSE(ParseSchema(deep).ok());  // limits::kAvroSchemaDepthMax
}

TEST(AvroValues, EveryTypeRoundTrips) {
  SchemaPtr schema = MustParse(kEntrySchema);
  const Value entry = SampleEntry();
  const std::string bytes = Encoded(*schema, entry);
  std::string_view view(bytes);
  auto decoded = Decode(*schema, view);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(view.empty());
  EXPECT_EQ(*decoded, entry);

  SchemaPtr scalars = MustParse(R"({"type": "record", "name": "s", "fields": [
    {"name": "b", "type": "boolean"}, {"name": "f", "type": "float"}, {"name": "d", "type": "double"},
    {"name": "e", "type": {"type": "enum", "name": "color", "symbols": ["RED", "GREEN"]}},
    {"name": "n", "type": "null"}]})");
  const Value value = Value::List(
      {Value::Boolean(true), Value::Float(0.5f), Value::Double(-2.75), Value::Int(1), Value::Null()});
  const std::string scalar_bytes = Encoded(*scalars, value);
  std::string_view scalar_view(scalar_bytes);
  EXPECT_EQ(*Decode(*scalars, scalar_view), value);
}

TEST(AvroValues, AValueOfTheWrongShapeIsNotEncoded) {
  SchemaPtr schema = MustParse(kEntrySchema);
  std::string out;
  EXPECT_FALSE(Encode(*schema, Value::Int(1), out).ok());
  EXPECT_FALSE(Encode(*schema, Value::List({Value::Int(1)}), out).ok());
  SchemaPtr fixed = MustParse(R"({"type": "fixed", "name": "f", "size": 2})");
  EXPECT_FALSE(Encode(*fixed, Value::Bytes("abc"), out).ok());
  SchemaPtr optional = MustParse(R"(["null", "long"])");
  EXPECT_FALSE(Encode(*optional, Value::InBranch(2, Value::Long(1)), out).ok());
}

TEST(AvroValues, LiesAboutLengthsAndCountsAreErrorsNotAllocations) {
  SchemaPtr strings = MustParse(R"({"type": "array", "items": "string"})");
  std::string huge_count;
  encoding::AppendLong(huge_count, int64_t{1} << 40);  // a trillion strings in a few bytes
  std::string_view view(huge_count);
  EXPECT_FALSE(Decode(*strings, view).ok());

  SchemaPtr nulls = MustParse(R"({"type": "array", "items": "null"})");
  std::string many_nulls;
  encoding::AppendLong(many_nulls, int64_t{1} << 40);
  many_nulls.push_back(0);
  std::string_view nulls_view(many_nulls);
  EXPECT_FALSE(Decode(*nulls, nulls_view).ok());  // limits::kAvroEmptyItemsMax

  SchemaPtr bytes = Primitive(Type::kBytes);
  std::string long_string;
  encoding::AppendLong(long_string, 1000);
  long_string += "short";
  std::string_view string_view(long_string);
  EXPECT_FALSE(Decode(*bytes, string_view).ok());

  SchemaPtr union_schema = MustParse(R"(["null", "int"])");
  std::string branch;
  encoding::AppendLong(branch, 7);
  std::string_view branch_view(branch);
  EXPECT_FALSE(Decode(*union_schema, branch_view).ok());
}

TEST(AvroResolution, ByNamePromotesSkipsAndFillsDefaults) {
  SchemaPtr writer = MustParse(R"({"type": "record", "name": "r", "fields": [
    {"name": "a", "type": "int"}, {"name": "dropped", "type": "string"}, {"name": "b", "type": "float"},
    {"name": "s", "type": "string"}]})");
  SchemaPtr reader = MustParse(R"({"type": "record", "name": "r", "fields": [
    {"name": "b", "type": "double"}, {"name": "a_long", "aliases": ["a"], "type": "long"},
    {"name": "s", "type": "bytes"}, {"name": "added", "type": "string", "default": "x"},
    {"name": "maybe", "type": ["null", "int"], "default": null}]})");
  const std::string bytes = Encoded(
      *writer, Value::List({Value::Int(7), Value::Bytes("gone"), Value::Float(1.5f), Value::Bytes("s")}));
  auto resolver = Resolver::Make(writer, reader);
  ASSERT_TRUE(resolver.ok()) << resolver.status().ToString();
  std::string_view view(bytes);
  auto value = resolver->Decode(view);
  ASSERT_TRUE(value.ok()) << value.status().ToString();
  EXPECT_TRUE(view.empty());
  EXPECT_EQ(*value, Value::List({Value::Double(1.5), Value::Long(7), Value::Bytes("s"), Value::Bytes("x"),
                                 Value::InBranch(0, Value::Null())}));

  SchemaPtr needs_default =
      MustParse(R"({"type": "record", "name": "r", "fields": [{"name": "z", "type": "int"}]})");
  EXPECT_FALSE(Resolver::Make(writer, needs_default).ok());
  SchemaPtr narrower =
      MustParse(R"({"type": "record", "name": "r", "fields": [{"name": "b", "type": "int"}]})");
  EXPECT_FALSE(Resolver::Make(writer, narrower).ok());  // float does not narrow to int
}

TEST(AvroResolution, ByFieldIdIgnoresNamesAndFillsNewOptionalColumnsWithNull) {
  SchemaPtr writer = MustParse(R"({"type": "record", "name": "r2", "fields": [
    {"name": "path", "type": "string", "field-id": 100},
    {"name": "count", "type": "int", "field-id": 103}]})");
  SchemaPtr reader = MustParse(R"({"type": "record", "name": "data_file", "fields": [
    {"name": "record_count", "type": "long", "field-id": 103},
    {"name": "file_path", "type": "string", "field-id": 100},
    {"name": "first_row_id", "type": ["null", "long"], "field-id": 142}]})");
  auto resolver = Resolver::Make(writer, reader, FieldMatch::kByFieldId);
  ASSERT_TRUE(resolver.ok()) << resolver.status().ToString();
  const std::string bytes = Encoded(*writer, Value::List({Value::Bytes("p"), Value::Int(5)}));
  std::string_view view(bytes);
  EXPECT_EQ(*resolver->Decode(view),
            Value::List({Value::Long(5), Value::Bytes("p"), Value::InBranch(0, Value::Null())}));
  EXPECT_FALSE(Resolver::Make(writer, reader, FieldMatch::kByName).ok());  // names differ
}

TEST(AvroResolution, UnionsAndEnumsResolveBranchBySymbol) {
  SchemaPtr writer =
      MustParse(R"(["null", "int", {"type": "enum", "name": "e", "symbols": ["A", "B", "C"]}])");
  SchemaPtr reader = MustParse(
      R"(["null", "long", {"type": "enum", "name": "e", "symbols": ["C", "A", "OTHER"], "default": "OTHER"}])");
  auto resolver = Resolver::Make(writer, reader);
  ASSERT_TRUE(resolver.ok()) << resolver.status().ToString();
  auto read = [&](const Value& written) {
    const std::string bytes = Encoded(*writer, written);
    std::string_view view(bytes);
    auto value = resolver->Decode(view);
    EXPECT_TRUE(value.ok()) << value.status().ToString();
    return value.ok() ? *value : Value{};
  };
  EXPECT_EQ(read(Value::InBranch(1, Value::Int(3))), Value::InBranch(1, Value::Long(3)));
  EXPECT_EQ(read(Value::InBranch(2, Value::Int(0))), Value::InBranch(2, Value::Int(1)));  // A
  EXPECT_EQ(read(Value::InBranch(2, Value::Int(1))), Value::InBranch(2, Value::Int(2)));  // B → default OTHER
  EXPECT_EQ(read(Value::InBranch(0, Value::Null())), Value::InBranch(0, Value::Null()));

  // A plain writer type read into an optional reader field.
  auto widened = Resolver::Make(Primitive(Type::kInt), Optional(Primitive(Type::kLong)));
  ASSERT_TRUE(widened.ok());
  const std::string bytes = Encoded(*Primitive(Type::kInt), Value::Int(-9));
  std::string_view view(bytes);
  EXPECT_EQ(*widened->Decode(view), Value::InBranch(1, Value::Long(-9)));
}

class AvroFileTest : public ::testing::TestWithParam<Codec> {};

TEST_P(AvroFileTest, ValuesAndHeaderMetadataRoundTripAcrossBlocks) {
  SchemaPtr schema = MustParse(kEntrySchema);
  FileWriterOptions options;
  options.codec = GetParam();
  options.block_bytes = 256;  // several blocks
  options.metadata = {{"format-version", "2"}, {"content", "data"}};
  auto writer = FileWriter::Make(schema, options);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  std::vector<Value> written;
  for (int i = 0; i < 50; ++i) {
    Value entry = SampleEntry();
    std::get<std::vector<Value>>(entry.data)[0] = Value::Int(i % 3);
    ASSERT_TRUE(writer->Append(entry).ok());
    written.push_back(entry);
  }
  auto file = writer->Finish();
  ASSERT_TRUE(file.ok()) << file.status().ToString();

  auto reader = FileReader::Open(*file);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ(reader->codec(), GetParam());
  ASSERT_NE(reader->FindMetadata("format-version"), nullptr);
  EXPECT_EQ(*reader->FindMetadata("format-version"), "2");
  EXPECT_EQ(*reader->FindMetadata("content"), "data");
  EXPECT_EQ(SchemaToJson(*reader->schema()), SchemaToJson(*schema));
  auto values = reader->ReadAll();
  ASSERT_TRUE(values.ok()) << values.status().ToString();
  EXPECT_EQ(*values, written);
}

INSTANTIATE_TEST_SUITE_P(Codecs, AvroFileTest,
                         ::testing::Values(Codec::kNull, Codec::kDeflate, Codec::kSnappy, Codec::kZstd),
                         [](const auto& info) { return std::string(CodecName(info.param)); });

TEST(AvroFile, DamageIsFoundAndNamed) {
  SchemaPtr schema = Primitive(Type::kLong);
  FileWriterOptions options;
  options.codec = Codec::kSnappy;
  auto writer = FileWriter::Make(schema, options);
  ASSERT_TRUE(writer.ok());
  for (int64_t i = 0; i < 100; ++i) ASSERT_TRUE(writer->Append(Value::Long(i)).ok());
  std::string file = *writer->Finish();

  EXPECT_FALSE(FileReader::Open("PAR1").ok());
  EXPECT_FALSE(FileReader::Open(std::string_view(file).substr(0, 10)).ok());

  std::string bad_sync = file;
  bad_sync.back() ^= 1;
  auto reader = FileReader::Open(bad_sync);
  ASSERT_TRUE(reader.ok());
  EXPECT_FALSE(reader->ReadAll().ok());

  std::string bad_crc = file;
  bad_crc[bad_crc.size() - 17] ^= 1;  // the last byte of the CRC-32 before the sync marker
  auto crc_reader = FileReader::Open(bad_crc);
  ASSERT_TRUE(crc_reader.ok());
  auto crc_values = crc_reader->ReadAll();
  ASSERT_FALSE(crc_values.ok());
  EXPECT_NE(crc_values.status().message().find("CRC-32"), std::string::npos)
      << crc_values.status().ToString();

  FileWriterOptions reserved;
  reserved.metadata = {{"avro.codec", "x"}};
  EXPECT_FALSE(FileWriter::Make(schema, reserved).ok());
}

TEST(AvroFile, AnEmptyFileHasAHeaderAndNoValues) {
  auto writer = FileWriter::Make(Primitive(Type::kString), {});
  ASSERT_TRUE(writer.ok());
  auto file = writer->Finish();
  ASSERT_TRUE(file.ok());
  auto reader = FileReader::Open(*file);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_TRUE(reader->ReadAll()->empty());
}

}  // namespace
}  // namespace serac::iceberg::avro
