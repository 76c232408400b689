// Avro's binary encoding of values, decoding with every length and count checked against the bytes
// there, and writer/reader schema resolution compiled once into a plan.
#include <cstring>
#include <limits>

#include "common/json_reads.h"
#include "common/limits.h"
#include "iceberg/avro/avro.h"
#include "iceberg/avro/avro_encoding_internal.h"

namespace serac::iceberg::avro {

namespace {

Status Invalid(std::string message) {
  return Error(ErrorCode::kInvalidArgument, "Avro: " + std::move(message));
}

// ---- Encoding ----

Status Mismatch(const Schema& schema) {
  return Invalid("value does not have the shape of " + std::string(TypeName(schema.type)));
}

template <typename T>
const T* As(const Value& value) {
  return std::get_if<T>(&value.data);
}

Status EncodeValue(const Schema& schema, const Value& value, std::string& out) {
  switch (schema.type) {
    case Type::kNull:
      return value.is_null() ? Status::Ok() : Mismatch(schema);
    case Type::kBoolean:
      if (const bool* b = As<bool>(value)) {
        out.push_back(*b ? 1 : 0);
        return Status::Ok();
      }
      return Mismatch(schema);
    case Type::kInt:
      if (const int32_t* i = As<int32_t>(value)) {
        encoding::AppendLong(out, *i);
        return Status::Ok();
      }
      return Mismatch(schema);
    case Type::kLong:
      if (const int64_t* l = As<int64_t>(value)) {
        encoding::AppendLong(out, *l);
        return Status::Ok();
      }
      return Mismatch(schema);
    case Type::kFloat:
      if (const float* f = As<float>(value)) {
        encoding::AppendFloat(out, *f);
        return Status::Ok();
      }
      return Mismatch(schema);
    case Type::kDouble:
      if (const double* d = As<double>(value)) {
        encoding::AppendDouble(out, *d);
        return Status::Ok();
      }
      return Mismatch(schema);
    case Type::kBytes:
    case Type::kString:
      if (const std::string* s = As<std::string>(value)) {
        encoding::AppendBytes(out, *s);
        return Status::Ok();
      }
      return Mismatch(schema);
    case Type::kFixed:
      if (const std::string* s = As<std::string>(value);
          s != nullptr && s->size() == static_cast<size_t>(schema.fixed_size)) {
        out.append(*s);
        return Status::Ok();
      }
      return Mismatch(schema);
    case Type::kEnum:
      if (const int32_t* i = As<int32_t>(value);
          i != nullptr && *i >= 0 && static_cast<size_t>(*i) < schema.symbols.size()) {
        encoding::AppendLong(out, *i);
        return Status::Ok();
      }
      return Mismatch(schema);
    case Type::kRecord: {
      const auto* fields = As<std::vector<Value>>(value);
      if (fields == nullptr || fields->size() != schema.fields.size()) return Mismatch(schema);
      for (size_t i = 0; i < fields->size(); ++i) {
        SERAC_RETURN_IF_ERROR(EncodeValue(*schema.fields[i].type, (*fields)[i], out));
      }
      return Status::Ok();
    }
    case Type::kArray: {
      const auto* items = As<std::vector<Value>>(value);
      if (items == nullptr) return Mismatch(schema);
      if (!items->empty()) {
        encoding::AppendLong(out, static_cast<int64_t>(items->size()));
        for (const Value& item : *items) SERAC_RETURN_IF_ERROR(EncodeValue(*schema.items, item, out));
      }
      out.push_back(0);
      return Status::Ok();
    }
    case Type::kMap: {
      const auto* entries = As<Value::MapEntries>(value);
      if (entries == nullptr) return Mismatch(schema);
      if (!entries->empty()) {
        encoding::AppendLong(out, static_cast<int64_t>(entries->size()));
        for (const auto& [key, item] : *entries) {
          encoding::AppendBytes(out, key);
          SERAC_RETURN_IF_ERROR(EncodeValue(*schema.values, item, out));
        }
      }
      out.push_back(0);
      return Status::Ok();
    }
    case Type::kUnion: {
      if (value.branch >= schema.branches.size()) return Invalid("union branch out of range");
      encoding::AppendLong(out, value.branch);
      // A branch is never itself a union, so its encoding does not look at `branch` again.
      return EncodeValue(*schema.branches[value.branch], value, out);
    }
  }
  return Mismatch(schema);
}

// ---- Decoding ----

// Fewest bytes one value of the schema takes: how many items an array or map block can claim
// before its count is a lie.
uint64_t MinEncodedBytes(const Schema& schema) {
  switch (schema.type) {
    case Type::kNull:
      return 0;
    case Type::kFloat:
      return 4;
    case Type::kDouble:
      return 8;
    case Type::kFixed:
      return static_cast<uint64_t>(schema.fixed_size);
    case Type::kRecord: {
      uint64_t total = 0;
      for (const Field& field : schema.fields) total += MinEncodedBytes(*field.type);
      return total;
    }
    default:
      return 1;
  }
}

// What one decode may still spend on values that take no bytes (nulls, empty records): the one
// way a few input bytes could otherwise claim an unbounded number of values.
struct Budget {
  uint64_t empty_items_left = limits::kAvroEmptyItemsMax;
};

// The item count of the next array or map block (a negative count is followed by the block's
// byte size, which is read and not needed). 0 ends the array or map.
Result<uint64_t> BlockItems(std::string_view& bytes, uint64_t item_min_bytes, Budget& budget) {
  SERAC_ASSIGN_OR_RETURN(int64_t count, encoding::ReadLong(bytes));
  if (count < 0) {
    if (count == std::numeric_limits<int64_t>::min()) return Invalid("block count out of range");
    count = -count;
    SERAC_ASSIGN_OR_RETURN(int64_t block_bytes, encoding::ReadLong(bytes));
    if (block_bytes < 0) return Invalid("negative block size");
  }
  const uint64_t items = static_cast<uint64_t>(count);
  if (item_min_bytes == 0) {
    if (items > budget.empty_items_left) {
      return Invalid("more empty values than limits::kAvroEmptyItemsMax (" +
                     std::to_string(limits::kAvroEmptyItemsMax) + ")");
    }
    budget.empty_items_left -= items;
  } else if (items > bytes.size() / item_min_bytes) {
    return Invalid("a block claims " + std::to_string(items) + " items in " + std::to_string(bytes.size()) +
                   " bytes");
  }
  return items;
}

Result<Value> DecodeValue(const Schema& schema, std::string_view& bytes, Budget& budget) {
  switch (schema.type) {
    case Type::kNull:
      return Value::Null();
    case Type::kBoolean: {
      SERAC_ASSIGN_OR_RETURN(bool b, encoding::ReadBoolean(bytes));
      return Value::Boolean(b);
    }
    case Type::kInt: {
      SERAC_ASSIGN_OR_RETURN(int32_t i, encoding::ReadInt(bytes));
      return Value::Int(i);
    }
    case Type::kLong: {
      SERAC_ASSIGN_OR_RETURN(int64_t l, encoding::ReadLong(bytes));
      return Value::Long(l);
    }
    case Type::kFloat: {
      SERAC_ASSIGN_OR_RETURN(float f, encoding::ReadFloat(bytes));
      return Value::Float(f);
    }
    case Type::kDouble: {
      SERAC_ASSIGN_OR_RETURN(double d, encoding::ReadDouble(bytes));
      return Value::Double(d);
    }
    case Type::kBytes:
    case Type::kString: {
      SERAC_ASSIGN_OR_RETURN(std::string_view s, encoding::ReadBytes(bytes));
      return Value::Bytes(std::string(s));
    }
    case Type::kFixed: {
      SERAC_ASSIGN_OR_RETURN(std::string_view s,
                             encoding::ReadRaw(bytes, static_cast<size_t>(schema.fixed_size)));
      return Value::Bytes(std::string(s));
    }
    case Type::kEnum: {
      SERAC_ASSIGN_OR_RETURN(int32_t index, encoding::ReadInt(bytes));
      if (index < 0 || static_cast<size_t>(index) >= schema.symbols.size())
        return Invalid("enum index out of range");
      return Value::Int(index);
    }
    case Type::kRecord: {
      std::vector<Value> fields;
      fields.reserve(schema.fields.size());
      for (const Field& field : schema.fields) {
        SERAC_ASSIGN_OR_RETURN(Value value, DecodeValue(*field.type, bytes, budget));
        fields.push_back(std::move(value));
      }
      return Value::List(std::move(fields));
    }
    case Type::kArray: {
      std::vector<Value> items;
      const uint64_t item_min = MinEncodedBytes(*schema.items);
      while (true) {
        SERAC_ASSIGN_OR_RETURN(uint64_t count, BlockItems(bytes, item_min, budget));
        if (count == 0) break;
        for (uint64_t i = 0; i < count; ++i) {
          SERAC_ASSIGN_OR_RETURN(Value item, DecodeValue(*schema.items, bytes, budget));
          items.push_back(std::move(item));
        }
      }
      return Value::List(std::move(items));
    }
    case Type::kMap: {
      Value::MapEntries entries;
      const uint64_t entry_min = 1 + MinEncodedBytes(*schema.values);
      while (true) {
        SERAC_ASSIGN_OR_RETURN(uint64_t count, BlockItems(bytes, entry_min, budget));
        if (count == 0) break;
        for (uint64_t i = 0; i < count; ++i) {
          SERAC_ASSIGN_OR_RETURN(std::string_view key, encoding::ReadBytes(bytes));
          SERAC_ASSIGN_OR_RETURN(Value item, DecodeValue(*schema.values, bytes, budget));
          entries.emplace_back(std::string(key), std::move(item));
        }
      }
      return Value::Map(std::move(entries));
    }
    case Type::kUnion: {
      SERAC_ASSIGN_OR_RETURN(int64_t branch, encoding::ReadLong(bytes));
      if (branch < 0 || static_cast<uint64_t>(branch) >= schema.branches.size()) {
        return Invalid("union branch " + std::to_string(branch) + " out of range");
      }
      SERAC_ASSIGN_OR_RETURN(Value value, DecodeValue(*schema.branches[branch], bytes, budget));
      return Value::InBranch(static_cast<uint32_t>(branch), std::move(value));
    }
  }
  return Invalid("unknown type");
}

// ---- Defaults: a field's JSON default as a value of its schema ----

Result<Value> DefaultValue(const Schema& schema, const Json& json) {
  auto wrong = [&] { return Invalid("default value does not fit " + std::string(TypeName(schema.type))); };
  switch (schema.type) {
    case Type::kNull:
      if (!json.is_null()) return wrong();
      return Value::Null();
    case Type::kBoolean:
      if (!json.is_boolean()) return wrong();
      return Value::Boolean(json.get<bool>());
    case Type::kInt:
      if (!json.is_number_integer() || json.get<int64_t>() < INT32_MIN || json.get<int64_t>() > INT32_MAX) {
        return wrong();
      }
      return Value::Int(static_cast<int32_t>(json.get<int64_t>()));
    case Type::kLong:
      if (!json.is_number_integer()) return wrong();
      return Value::Long(json.get<int64_t>());
    case Type::kFloat:
      if (!json.is_number()) return wrong();
      return Value::Float(json.get<float>());
    case Type::kDouble:
      if (!json.is_number()) return wrong();
      return Value::Double(json.get<double>());
    case Type::kString:
      if (!json.is_string()) return wrong();
      return Value::Bytes(json.get<std::string>());
    case Type::kBytes:
    case Type::kFixed: {
      // Avro writes bytes defaults as strings whose code points 0-255 are the bytes.
      if (!json.is_string()) return wrong();
      std::string text = json.get<std::string>();
      std::string out;
      for (size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) {
          out.push_back(static_cast<char>(c));
        } else if ((c == 0xC2 || c == 0xC3) && i + 1 < text.size()) {
          out.push_back(
              static_cast<char>(((c & 0x03) << 6) | (static_cast<unsigned char>(text[++i]) & 0x3F)));
        } else {
          return wrong();
        }
      }
      if (schema.type == Type::kFixed && out.size() != static_cast<size_t>(schema.fixed_size)) return wrong();
      return Value::Bytes(std::move(out));
    }
    case Type::kEnum: {
      if (!json.is_string()) return wrong();
      for (size_t i = 0; i < schema.symbols.size(); ++i) {
        if (schema.symbols[i] == json.get<std::string>()) return Value::Int(static_cast<int32_t>(i));
      }
      return wrong();
    }
    case Type::kRecord: {
      if (!json.is_object()) return wrong();
      std::vector<Value> fields;
      for (const Field& field : schema.fields) {
        auto member = json.find(field.name);
        if (member != json.end()) {
          SERAC_ASSIGN_OR_RETURN(Value value, DefaultValue(*field.type, *member));
          fields.push_back(std::move(value));
        } else if (field.default_json) {
          SERAC_ASSIGN_OR_RETURN(Json nested, ParseJson(*field.default_json));
          SERAC_ASSIGN_OR_RETURN(Value value, DefaultValue(*field.type, nested));
          fields.push_back(std::move(value));
        } else {
          return wrong();
        }
      }
      return Value::List(std::move(fields));
    }
    case Type::kArray: {
      if (!json.is_array()) return wrong();
      std::vector<Value> items;
      for (const Json& item : json) {
        SERAC_ASSIGN_OR_RETURN(Value value, DefaultValue(*schema.items, item));
        items.push_back(std::move(value));
      }
      return Value::List(std::move(items));
    }
    case Type::kMap: {
      if (!json.is_object()) return wrong();
      Value::MapEntries entries;
      for (const auto& [key, item] : json.items()) {
        SERAC_ASSIGN_OR_RETURN(Value value, DefaultValue(*schema.values, item));
        entries.emplace_back(key, std::move(value));
      }
      return Value::Map(std::move(entries));
    }
    case Type::kUnion: {
      // A union's default is a value of its first branch.
      SERAC_ASSIGN_OR_RETURN(Value value, DefaultValue(*schema.branches.front(), json));
      return Value::InBranch(0, std::move(value));
    }
  }
  return wrong();
}

}  // namespace

Status Encode(const Schema& schema, const Value& value, std::string& out) {
  return EncodeValue(schema, value, out);
}

Result<Value> Decode(const Schema& schema, std::string_view& bytes) {
  Budget budget;
  return DecodeValue(schema, bytes, budget);
}

// ---- Resolution ----

struct Resolver::Plan {
  enum class Kind : uint8_t { kPrimitive, kRecord, kArray, kMap, kWriterUnion, kEnum, kFixed };
  Kind kind = Kind::kPrimitive;
  Type writer_type = Type::kNull;
  Type reader_type = Type::kNull;
  std::optional<uint32_t> reader_branch;  // the reader is a union: the branch this value goes in

  // kRecord: one step per writer field, in the writer's order.
  struct FieldStep {
    int reader_index = -1;             // -1: the reader has no such field, skip it
    std::shared_ptr<const Plan> plan;  // reader_index >= 0
    SchemaPtr writer_type;             // reader_index < 0
  };
  std::vector<FieldStep> steps;
  std::vector<std::pair<size_t, Value>> defaults;  // reader fields the writer lacks
  size_t reader_fields = 0;

  std::shared_ptr<const Plan> element;  // kArray items, kMap values
  uint64_t element_min_bytes = 1;       // of the writer's element

  // kWriterUnion: per writer branch, its plan, or why it cannot be read.
  std::vector<std::shared_ptr<const Plan>> branch_plans;
  std::vector<std::string> branch_errors;

  std::vector<int32_t> enum_map;  // kEnum: writer symbol → reader symbol, -1 = none
  int32_t fixed_size = 0;         // kFixed
};

namespace {

using PlanPtr = std::shared_ptr<const Resolver::Plan>;
using Plan = Resolver::Plan;

std::string_view UnqualifiedName(std::string_view full) {
  const size_t dot = full.rfind('.');
  return dot == std::string_view::npos ? full : full.substr(dot + 1);
}

bool Promotes(Type writer, Type reader) {
  switch (writer) {
    case Type::kInt:
      return reader == Type::kLong || reader == Type::kFloat || reader == Type::kDouble;
    case Type::kLong:
      return reader == Type::kFloat || reader == Type::kDouble;
    case Type::kFloat:
      return reader == Type::kDouble;
    case Type::kString:
      return reader == Type::kBytes;
    case Type::kBytes:
      return reader == Type::kString;
    default:
      return false;
  }
}

class PlanBuilder {
 public:
  explicit PlanBuilder(FieldMatch match) : match_(match) {}

  Result<PlanPtr> Build(const Schema& writer, const Schema& reader, uint32_t depth) {
    if (depth > limits::kAvroSchemaDepthMax) return Invalid("schemas nested too deeply to resolve");
    if (writer.type == Type::kUnion) return WriterUnion(writer, reader, depth);
    if (reader.type == Type::kUnion) {
      // The first reader branch that matches exactly, else the first the writer promotes to.
      for (bool promote : {false, true}) {
        for (size_t i = 0; i < reader.branches.size(); ++i) {
          if (!Matches(writer, *reader.branches[i], promote)) continue;
          SERAC_ASSIGN_OR_RETURN(PlanPtr inner, Build(writer, *reader.branches[i], depth + 1));
          auto plan = std::make_shared<Plan>(*inner);
          plan->reader_branch = static_cast<uint32_t>(i);
          return PlanPtr(std::move(plan));
        }
      }
      return Invalid("no branch of the reader's union reads the writer's " +
                     std::string(TypeName(writer.type)));
    }
    if (!Matches(writer, reader, true)) {
      return Invalid("the writer's " + std::string(TypeName(writer.type)) + " cannot be read as " +
                     std::string(TypeName(reader.type)));
    }
    auto plan = std::make_shared<Plan>();
    plan->writer_type = writer.type;
    plan->reader_type = reader.type;
    switch (writer.type) {
      case Type::kRecord:
        SERAC_RETURN_IF_ERROR(Record(writer, reader, depth, *plan));
        break;
      case Type::kArray: {
        plan->kind = Plan::Kind::kArray;
        SERAC_ASSIGN_OR_RETURN(plan->element, Build(*writer.items, *reader.items, depth + 1));
        plan->element_min_bytes = MinEncodedBytes(*writer.items);
        break;
      }
      case Type::kMap: {
        plan->kind = Plan::Kind::kMap;
        SERAC_ASSIGN_OR_RETURN(plan->element, Build(*writer.values, *reader.values, depth + 1));
        plan->element_min_bytes = 1 + MinEncodedBytes(*writer.values);
        break;
      }
      case Type::kEnum:
        plan->kind = Plan::Kind::kEnum;
        for (const std::string& symbol : writer.symbols) {
          int32_t mapped = -1;
          for (size_t i = 0; i < reader.symbols.size(); ++i) {
            if (reader.symbols[i] == symbol) mapped = static_cast<int32_t>(i);
          }
          if (mapped < 0 && reader.enum_default) {
            for (size_t i = 0; i < reader.symbols.size(); ++i) {
              if (reader.symbols[i] == *reader.enum_default) mapped = static_cast<int32_t>(i);
            }
          }
          plan->enum_map.push_back(mapped);
        }
        break;
      case Type::kFixed:
        plan->kind = Plan::Kind::kFixed;
        plan->fixed_size = writer.fixed_size;
        break;
      default:
        plan->kind = Plan::Kind::kPrimitive;
        break;
    }
    return PlanPtr(std::move(plan));
  }

 private:
  bool Matches(const Schema& writer, const Schema& reader, bool promote) const {
    if (writer.type != reader.type) return promote && Promotes(writer.type, reader.type);
    switch (writer.type) {
      case Type::kRecord:
        return match_ == FieldMatch::kByFieldId ||
               UnqualifiedName(writer.name) == UnqualifiedName(reader.name);
      case Type::kEnum:
        return UnqualifiedName(writer.name) == UnqualifiedName(reader.name);
      case Type::kFixed:
        return writer.fixed_size == reader.fixed_size &&
               (match_ == FieldMatch::kByFieldId ||
                UnqualifiedName(writer.name) == UnqualifiedName(reader.name));
      default:
        return true;
    }
  }

  Result<PlanPtr> WriterUnion(const Schema& writer, const Schema& reader, uint32_t depth) {
    auto plan = std::make_shared<Plan>();
    plan->kind = Plan::Kind::kWriterUnion;
    plan->writer_type = Type::kUnion;
    plan->reader_type = reader.type;
    for (const SchemaPtr& branch : writer.branches) {
      Result<PlanPtr> branch_plan = Build(*branch, reader, depth + 1);
      plan->branch_plans.push_back(branch_plan.ok() ? *branch_plan : nullptr);
      plan->branch_errors.push_back(branch_plan.ok() ? "" : branch_plan.status().message());
    }
    return PlanPtr(std::move(plan));
  }

  // The writer's field a reader field reads: same field id (by-id matching, when both have one),
  // else the same name or one of the reader field's aliases.
  int WriterFieldFor(const Schema& writer, const Field& reader_field) const {
    if (match_ == FieldMatch::kByFieldId && reader_field.field_id) {
      for (size_t i = 0; i < writer.fields.size(); ++i) {
        if (writer.fields[i].field_id == reader_field.field_id) return static_cast<int>(i);
      }
    }
    // By name, then by the reader's aliases: a field's own name wins over another's alias.
    for (size_t i = 0; i < writer.fields.size(); ++i) {
      const Field& candidate = writer.fields[i];
      if (match_ == FieldMatch::kByFieldId && reader_field.field_id && candidate.field_id) continue;
      if (candidate.name == reader_field.name) return static_cast<int>(i);
    }
    for (const std::string& alias : reader_field.aliases) {
      for (size_t i = 0; i < writer.fields.size(); ++i) {
        const Field& candidate = writer.fields[i];
        if (match_ == FieldMatch::kByFieldId && reader_field.field_id && candidate.field_id) continue;
        if (candidate.name == alias) return static_cast<int>(i);
      }
    }
    return -1;
  }

  Status Record(const Schema& writer, const Schema& reader, uint32_t depth, Plan& plan) {
    plan.kind = Plan::Kind::kRecord;
    plan.reader_fields = reader.fields.size();
    plan.steps.resize(writer.fields.size());
    for (size_t i = 0; i < writer.fields.size(); ++i) plan.steps[i].writer_type = writer.fields[i].type;
    for (size_t r = 0; r < reader.fields.size(); ++r) {
      const Field& reader_field = reader.fields[r];
      const int w = WriterFieldFor(writer, reader_field);
      if (w >= 0) {
        if (plan.steps[w].reader_index >= 0)
          return Invalid("two reader fields read writer field " + writer.fields[w].name);
        plan.steps[w].reader_index = static_cast<int>(r);
        SERAC_ASSIGN_OR_RETURN(plan.steps[w].plan,
                               Build(*writer.fields[w].type, *reader_field.type, depth + 1));
        continue;
      }
      if (reader_field.default_json) {
        SERAC_ASSIGN_OR_RETURN(Json json, ParseJson(*reader_field.default_json));
        SERAC_ASSIGN_OR_RETURN(Value value, DefaultValue(*reader_field.type, json));
        plan.defaults.emplace_back(r, std::move(value));
      } else if (match_ == FieldMatch::kByFieldId && reader_field.type->type == Type::kUnion &&
                 reader_field.type->branches.front()->type == Type::kNull) {
        plan.defaults.emplace_back(r, Value::InBranch(0, Value::Null()));  // an optional column added later
      } else {
        return Invalid("field " + reader_field.name + " is not in the data and has no default");
      }
    }
    return Status::Ok();
  }

  FieldMatch match_;
};

Result<Value> ReadWithPlan(const Plan& plan, std::string_view& bytes, Budget& budget);

Result<Value> ReadPrimitive(const Plan& plan, std::string_view& bytes) {
  switch (plan.writer_type) {
    case Type::kNull:
      return Value::Null();
    case Type::kBoolean: {
      SERAC_ASSIGN_OR_RETURN(bool b, encoding::ReadBoolean(bytes));
      return Value::Boolean(b);
    }
    case Type::kInt: {
      SERAC_ASSIGN_OR_RETURN(int32_t i, encoding::ReadInt(bytes));
      if (plan.reader_type == Type::kLong) return Value::Long(i);
      if (plan.reader_type == Type::kFloat) return Value::Float(static_cast<float>(i));
      if (plan.reader_type == Type::kDouble) return Value::Double(i);
      return Value::Int(i);
    }
    case Type::kLong: {
      SERAC_ASSIGN_OR_RETURN(int64_t l, encoding::ReadLong(bytes));
      if (plan.reader_type == Type::kFloat) return Value::Float(static_cast<float>(l));
      if (plan.reader_type == Type::kDouble) return Value::Double(static_cast<double>(l));
      return Value::Long(l);
    }
    case Type::kFloat: {
      SERAC_ASSIGN_OR_RETURN(float f, encoding::ReadFloat(bytes));
      if (plan.reader_type == Type::kDouble) return Value::Double(f);
      return Value::Float(f);
    }
    case Type::kDouble: {
      SERAC_ASSIGN_OR_RETURN(double d, encoding::ReadDouble(bytes));
      return Value::Double(d);
    }
    case Type::kBytes:
    case Type::kString: {
      SERAC_ASSIGN_OR_RETURN(std::string_view s, encoding::ReadBytes(bytes));
      return Value::Bytes(std::string(s));
    }
    default:
      return Invalid("unexpected primitive");
  }
}

Result<Value> ReadUnwrapped(const Plan& plan, std::string_view& bytes, Budget& budget) {
  switch (plan.kind) {
    case Plan::Kind::kPrimitive:
      return ReadPrimitive(plan, bytes);
    case Plan::Kind::kFixed: {
      SERAC_ASSIGN_OR_RETURN(std::string_view s,
                             encoding::ReadRaw(bytes, static_cast<size_t>(plan.fixed_size)));
      return Value::Bytes(std::string(s));
    }
    case Plan::Kind::kEnum: {
      SERAC_ASSIGN_OR_RETURN(int32_t index, encoding::ReadInt(bytes));
      if (index < 0 || static_cast<size_t>(index) >= plan.enum_map.size())
        return Invalid("enum index out of range");
      if (plan.enum_map[index] < 0) return Invalid("enum symbol unknown to the reader and no default");
      return Value::Int(plan.enum_map[index]);
    }
    case Plan::Kind::kRecord: {
      std::vector<Value> fields(plan.reader_fields);
      for (const Plan::FieldStep& step : plan.steps) {
        if (step.reader_index < 0) {
          SERAC_RETURN_IF_ERROR(DecodeValue(*step.writer_type, bytes, budget).status());
          continue;
        }
        SERAC_ASSIGN_OR_RETURN(fields[step.reader_index], ReadWithPlan(*step.plan, bytes, budget));
      }
      for (const auto& [index, value] : plan.defaults) fields[index] = value;
      return Value::List(std::move(fields));
    }
    case Plan::Kind::kArray: {
      std::vector<Value> items;
      while (true) {
        SERAC_ASSIGN_OR_RETURN(uint64_t count, BlockItems(bytes, plan.element_min_bytes, budget));
        if (count == 0) break;
        for (uint64_t i = 0; i < count; ++i) {
          SERAC_ASSIGN_OR_RETURN(Value item, ReadWithPlan(*plan.element, bytes, budget));
          items.push_back(std::move(item));
        }
      }
      return Value::List(std::move(items));
    }
    case Plan::Kind::kMap: {
      Value::MapEntries entries;
      while (true) {
        SERAC_ASSIGN_OR_RETURN(uint64_t count, BlockItems(bytes, plan.element_min_bytes, budget));
        if (count == 0) break;
        for (uint64_t i = 0; i < count; ++i) {
          SERAC_ASSIGN_OR_RETURN(std::string_view key, encoding::ReadBytes(bytes));
          SERAC_ASSIGN_OR_RETURN(Value item, ReadWithPlan(*plan.element, bytes, budget));
          entries.emplace_back(std::string(key), std::move(item));
        }
      }
      return Value::Map(std::move(entries));
    }
    case Plan::Kind::kWriterUnion: {
      SERAC_ASSIGN_OR_RETURN(int64_t branch, encoding::ReadLong(bytes));
      if (branch < 0 || static_cast<uint64_t>(branch) >= plan.branch_plans.size()) {
        return Invalid("union branch " + std::to_string(branch) + " out of range");
      }
      if (plan.branch_plans[branch] == nullptr) return Invalid(plan.branch_errors[branch]);
      return ReadWithPlan(*plan.branch_plans[branch], bytes, budget);
    }
  }
  return Invalid("unknown plan");
}

Result<Value> ReadWithPlan(const Plan& plan, std::string_view& bytes, Budget& budget) {
  SERAC_ASSIGN_OR_RETURN(Value value, ReadUnwrapped(plan, bytes, budget));
  if (plan.reader_branch) value.branch = *plan.reader_branch;
  return value;
}

}  // namespace

Result<Resolver> Resolver::Make(SchemaPtr writer, SchemaPtr reader, FieldMatch match) {
  if (writer == nullptr || reader == nullptr) return Invalid("resolver needs both schemas");
  PlanBuilder builder(match);
  SERAC_ASSIGN_OR_RETURN(PlanPtr plan, builder.Build(*writer, *reader, 0));
  return Resolver(std::move(plan));
}

Result<Value> Resolver::Decode(std::string_view& bytes) const {
  Budget budget;
  return ReadWithPlan(*plan_, bytes, budget);
}

}  // namespace serac::iceberg::avro
