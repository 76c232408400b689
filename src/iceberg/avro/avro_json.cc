// Values in the Avro specification's JSON encoding, for people and for comparing with other Avro
// implementations in tests.
#include <cmath>
#include <cstdio>

#include "common/json_reads.h"
#include "iceberg/avro/avro.h"

namespace serac::iceberg::avro {

namespace {

// Bytes as a JSON string of the code points 0-255, one per byte.
std::string BytesAsText(std::string_view bytes) {
  std::string text;
  text.reserve(bytes.size());
  for (char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x80) {
      text.push_back(static_cast<char>(byte));
    } else {
      text.push_back(static_cast<char>(0xC0 | (byte >> 6)));
      text.push_back(static_cast<char>(0x80 | (byte & 0x3F)));
    }
  }
  return text;
}

std::string Number(double value) {
  if (std::isnan(value)) return "\"NaN\"";
  if (std::isinf(value)) return value > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  return Json(value).dump();
}

// The name a union branch is written under.
std::string BranchName(const Schema& schema) {
  const bool named =
      schema.type == Type::kRecord || schema.type == Type::kEnum || schema.type == Type::kFixed;
  return named ? schema.name : std::string(TypeName(schema.type));
}

void Write(const Schema& schema, const Value& value, std::string& out) {
  switch (schema.type) {
    case Type::kNull:
      out += "null";
      return;
    case Type::kBoolean:
      out += std::get_if<bool>(&value.data) != nullptr && std::get<bool>(value.data) ? "true" : "false";
      return;
    case Type::kInt:
      out += std::to_string(std::get_if<int32_t>(&value.data) ? std::get<int32_t>(value.data) : 0);
      return;
    case Type::kLong:
      out += std::to_string(std::get_if<int64_t>(&value.data) ? std::get<int64_t>(value.data) : 0);
      return;
    case Type::kFloat:
      out += Number(std::get_if<float>(&value.data) ? std::get<float>(value.data) : 0.0f);
      return;
    case Type::kDouble:
      out += Number(std::get_if<double>(&value.data) ? std::get<double>(value.data) : 0.0);
      return;
    case Type::kString: {
      const std::string* text = std::get_if<std::string>(&value.data);
      AppendJsonString(out, text ? *text : "");
      return;
    }
    case Type::kBytes:
    case Type::kFixed: {
      const std::string* bytes = std::get_if<std::string>(&value.data);
      AppendJsonString(out, BytesAsText(bytes ? *bytes : ""));
      return;
    }
    case Type::kEnum: {
      const int32_t* index = std::get_if<int32_t>(&value.data);
      const bool valid =
          index != nullptr && *index >= 0 && static_cast<size_t>(*index) < schema.symbols.size();
      AppendJsonString(out, valid ? schema.symbols[*index] : "");
      return;
    }
    case Type::kRecord: {
      const auto* fields = std::get_if<std::vector<Value>>(&value.data);
      out += '{';
      for (size_t i = 0; i < schema.fields.size(); ++i) {
        if (i > 0) out += ',';
        AppendJsonString(out, schema.fields[i].name);
        out += ':';
        if (fields != nullptr && i < fields->size()) {
          Write(*schema.fields[i].type, (*fields)[i], out);
        } else {
          out += "null";
        }
      }
      out += '}';
      return;
    }
    case Type::kArray: {
      const auto* items = std::get_if<std::vector<Value>>(&value.data);
      out += '[';
      if (items != nullptr) {
        for (size_t i = 0; i < items->size(); ++i) {
          if (i > 0) out += ',';
          Write(*schema.items, (*items)[i], out);
        }
      }
      out += ']';
      return;
    }
    case Type::kMap: {
      const auto* entries = std::get_if<Value::MapEntries>(&value.data);
      out += '{';
      if (entries != nullptr) {
        for (size_t i = 0; i < entries->size(); ++i) {
          if (i > 0) out += ',';
          AppendJsonString(out, (*entries)[i].first);
          out += ':';
          Write(*schema.values, (*entries)[i].second, out);
        }
      }
      out += '}';
      return;
    }
    case Type::kUnion: {
      if (value.branch >= schema.branches.size()) {
        out += "null";
        return;
      }
      const Schema& branch = *schema.branches[value.branch];
      if (branch.type == Type::kNull) {
        out += "null";
        return;
      }
      out += '{';
      AppendJsonString(out, BranchName(branch));
      out += ':';
      Write(branch, value, out);
      out += '}';
      return;
    }
  }
}

}  // namespace

std::string ValueToJson(const Schema& schema, const Value& value) {
  std::string out;
  Write(schema, value, out);
  return out;
}

}  // namespace serac::iceberg::avro
