// Apache Avro as Iceberg uses it: schemas with Iceberg's `field-id`, `element-id`, `key-id` and
// `value-id` attributes and logical types kept (Avro C drops them), the binary encoding, object
// container files with the null, deflate, snappy and zstd codecs and header key-value metadata,
// and writer/reader schema resolution as the Avro specification defines it, by name or, as
// Iceberg's readers do, by field id.
//
// Everything read is untrusted: every length, count and nesting level is checked against the bytes
// that are there and against limits::kAvro*, and bad input is kInvalidArgument naming what is wrong,
// never a crash or an unbounded allocation. Recursive schemas (a record that contains itself) are
// refused: Iceberg never writes one, and refusing them bounds every decode by the schema's depth.
//
// Thread-safety: schemas are immutable once parsed and may be shared; a FileWriter or FileReader is
// used by one thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/status.h"

namespace serac::iceberg::avro {

// ---- Schemas ----

enum class Type : uint8_t {
  kNull,
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kBytes,
  kString,
  kRecord,
  kEnum,
  kArray,
  kMap,
  kUnion,
  kFixed,
};
std::string_view TypeName(Type type);  // "null", "record", ...

struct Schema;
using SchemaPtr = std::shared_ptr<const Schema>;

struct Field {
  std::string name;
  SchemaPtr type;
  std::optional<std::string> default_json;  // the field's default, as JSON text
  std::vector<std::string> aliases;
  std::optional<int32_t> field_id;  // Iceberg's "field-id"
  std::string doc;
  // Attributes not listed above, each as JSON text, written back as they came.
  std::map<std::string, std::string> properties;
};

struct Schema {
  Type type = Type::kNull;
  std::string name;                  // record, enum, fixed: the full name ("namespace.name")
  std::vector<Field> fields;         // record
  std::vector<std::string> symbols;  // enum
  std::optional<std::string> enum_default;
  int32_t fixed_size = 0;             // fixed
  SchemaPtr items;                    // array
  SchemaPtr values;                   // map (keys are strings)
  std::vector<SchemaPtr> branches;    // union
  std::string logical_type;           // "decimal", "date", "timestamp-micros", "uuid", Iceberg's "map", ...
  int32_t precision = 0;              // decimal
  int32_t scale = 0;                  // decimal
  std::optional<int32_t> element_id;  // array: Iceberg's list element id
  std::optional<int32_t> key_id;      // map: Iceberg's key id
  std::optional<int32_t> value_id;    // map: Iceberg's value id
  std::map<std::string, std::string> properties;  // other attributes, as JSON text

  // Index of a record field by name, or -1.
  int FieldIndex(std::string_view field_name) const;
  // For a union of null and one other type (Iceberg's optional fields): that other type, else nullptr.
  const Schema* OptionalOf() const;
};

// Parses a schema in Avro's JSON form (a type name, an object, or a union array).
Result<SchemaPtr> ParseSchema(std::string_view json);
// The schema in Avro's JSON form, attributes included; a named type is written whole the first
// time and by its name after that.
std::string SchemaToJson(const Schema& schema);

// Convenience builders for writers that make their schema in code.
SchemaPtr Primitive(Type type, std::string logical_type = "");
SchemaPtr Optional(SchemaPtr type);  // ["null", type]

// ---- Values ----

// A value of some schema. Records and arrays hold their parts in `items` order, a map its entries;
// string, bytes and fixed hold their bytes in `bytes`; an enum holds its symbol's index as an int; a
// union holds the value of the branch `branch`.
struct Value {
  using MapEntries = std::vector<std::pair<std::string, Value>>;
  std::variant<std::monostate, bool, int32_t, int64_t, float, double, std::string, std::vector<Value>,
               MapEntries>
      data;
  uint32_t branch = 0;

  static Value Null() { return Value{}; }
  static Value Boolean(bool v) { return Value{v}; }
  static Value Int(int32_t v) { return Value{v}; }
  static Value Long(int64_t v) { return Value{v}; }
  static Value Float(float v) { return Value{v}; }
  static Value Double(double v) { return Value{v}; }
  static Value Bytes(std::string v) { return Value{std::move(v)}; }
  static Value List(std::vector<Value> v) { return Value{std::move(v)}; }  // a record or an array
  static Value Map(MapEntries v) { return Value{std::move(v)}; }
  static Value InBranch(uint32_t branch, Value v) {
    v.branch = branch;
    return v;
  }

  bool is_null() const { return std::holds_alternative<std::monostate>(data); }
  bool operator==(const Value&) const = default;
};

// The value in the Avro specification's JSON encoding (what avro-tools' tojson and fastavro's
// json_writer write): bytes and fixed as strings of the code points 0-255, a union as null or
// {"type name": value}, NaN and the infinities as strings. One line, no spaces.
std::string ValueToJson(const Schema& schema, const Value& value);

// Appends the binary encoding of `value` as `schema` says; kInvalidArgument when the value does not
// have the schema's shape.
Status Encode(const Schema& schema, const Value& value, std::string& out);
// Decodes one value written with `schema` from the front of `bytes`, which it advances.
Result<Value> Decode(const Schema& schema, std::string_view& bytes);

// How a reader's record fields find the writer's.
enum class FieldMatch : uint8_t {
  kByName,     // the Avro specification: names and the reader's aliases
  kByFieldId,  // Iceberg: field ids; a field without one is matched by name
};

// Reads values written with one schema as another (the Avro specification's resolution rules:
// promotions int → long → float → double, string ↔ bytes, union branches, enum symbols, reader
// fields the writer lacks filled from their defaults, or null when optional and matched by id;
// writer fields the reader lacks skipped). Made once per pair of schemas, then used per value.
class Resolver {
 public:
  static Result<Resolver> Make(SchemaPtr writer, SchemaPtr reader, FieldMatch match = FieldMatch::kByName);
  Result<Value> Decode(std::string_view& bytes) const;

  struct Plan;

 private:
  explicit Resolver(std::shared_ptr<const Plan> plan) : plan_(std::move(plan)) {}
  std::shared_ptr<const Plan> plan_;
};

// ---- Object container files ----

enum class Codec : uint8_t { kNull, kDeflate, kSnappy, kZstd };
std::string_view CodecName(Codec codec);  // "null", "deflate", "snappy", "zstandard"

struct FileWriterOptions {
  Codec codec = Codec::kDeflate;  // what Java Iceberg writes manifests with
  // Header key-value metadata besides avro.schema and avro.codec (Iceberg's "schema",
  // "partition-spec", "format-version", "content", ...).
  std::vector<std::pair<std::string, std::string>> metadata;
  uint64_t block_bytes = 64 * 1000;  // a block ends once its values reach this size (Java Avro's default)
};

// Writes a container file into memory: the header at once, a block whenever the values appended
// reach options.block_bytes, the last block at Finish.
class FileWriter {
 public:
  static Result<FileWriter> Make(SchemaPtr schema, FileWriterOptions options);

  Status Append(const Value& value);
  // Appends a value already in the schema's binary encoding (a writer that encodes by hand).
  Status AppendEncoded(std::string_view encoded);
  // Ends the last block; the file is then whole. The writer is spent afterwards.
  Result<std::string> Finish();

  uint64_t values_written() const { return values_; }
  // Bytes of the file so far, counting the values of the open block uncompressed.
  uint64_t approximate_size() const { return file_.size() + block_.size(); }

 private:
  FileWriter(SchemaPtr schema, FileWriterOptions options, std::string sync_marker);
  Status EndBlock();

  SchemaPtr schema_;
  FileWriterOptions options_;
  std::string sync_marker_;
  std::string file_;
  std::string block_;
  uint64_t block_values_ = 0;
  uint64_t values_ = 0;
};

// Reads a container file held in memory, block by block.
class FileReader {
 public:
  static Result<FileReader> Open(std::string_view file);

  const SchemaPtr& schema() const { return schema_; }
  Codec codec() const { return codec_; }
  // Every header entry, avro.schema and avro.codec included.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::string* FindMetadata(std::string_view key) const;

  // The next block's values, still encoded (decompressed): `count` values in `encoded`. False at
  // the end of the file.
  Result<bool> NextBlock(uint64_t& count, std::string_view& encoded);

  // Every remaining value, decoded with the file's schema, or resolved to `reader` when given.
  Result<std::vector<Value>> ReadAll(const Resolver* reader = nullptr);

 private:
  FileReader() = default;

  std::string_view rest_;  // what follows the header or the last block read
  SchemaPtr schema_;
  Codec codec_ = Codec::kNull;
  std::map<std::string, std::string> metadata_;
  std::string sync_marker_;
  std::string block_buffer_;  // the last block, decompressed
};

}  // namespace serac::iceberg::avro
