// Avro's binary primitives: zig-zag varints, little-endian floats, length-prefixed bytes. The
// readers take the bytes left and advance past what they read; each checks that what it reads is
// there and well formed (a varint of at most 10 bytes, an int within 32 bits, a boolean 0 or 1).
// Inline: manifests decode millions of these a second.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "common/status.h"

namespace serac::iceberg::avro::encoding {

inline void AppendLong(std::string& out, int64_t value) {
  uint64_t zigzag = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
  while (zigzag >= 0x80) {
    out.push_back(static_cast<char>((zigzag & 0x7F) | 0x80));
    zigzag >>= 7;
  }
  out.push_back(static_cast<char>(zigzag));
}

inline void AppendFloat(std::string& out, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
}

inline void AppendDouble(std::string& out, double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
}

inline void AppendBytes(std::string& out, std::string_view bytes) {
  AppendLong(out, static_cast<int64_t>(bytes.size()));
  out.append(bytes);
}

inline Status Truncated() { return Error(ErrorCode::kInvalidArgument, "Avro: data ends inside a value"); }

inline Result<int64_t> ReadLong(std::string_view& bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < 10; ++i) {
    if (i >= bytes.size()) return Truncated();
    const auto byte = static_cast<uint8_t>(bytes[i]);
    if (i == 9 && byte > 1) break;  // more than 64 bits
    value |= static_cast<uint64_t>(byte & 0x7F) << (7 * i);
    if ((byte & 0x80) == 0) {
      bytes.remove_prefix(i + 1);
      return static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1);
    }
  }
  return Error(ErrorCode::kInvalidArgument, "Avro: a varint longer than 64 bits");
}

// The same without a Result: false on any problem (the caller then asks ReadLong for the message).
// One-byte values, most field ids and counts, take the first branch.
[[gnu::always_inline]] inline bool TryReadLong(std::string_view& bytes, int64_t& out) {
  if (!bytes.empty()) {
    const auto first = static_cast<uint8_t>(bytes[0]);
    if (first < 0x80) {
      bytes.remove_prefix(1);
      out = static_cast<int64_t>(first >> 1) ^ -static_cast<int64_t>(first & 1);
      return true;
    }
  }
  uint64_t value = 0;
  for (size_t i = 0; i < 10 && i < bytes.size(); ++i) {
    const auto byte = static_cast<uint8_t>(bytes[i]);
    if (i == 9 && byte > 1) return false;  // more than 64 bits
    value |= static_cast<uint64_t>(byte & 0x7F) << (7 * i);
    if ((byte & 0x80) == 0) {
      bytes.remove_prefix(i + 1);
      out = static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1);
      return true;
    }
  }
  return false;
}

[[gnu::always_inline]] inline bool TryReadInt(std::string_view& bytes, int32_t& out) {
  int64_t value;
  if (!TryReadLong(bytes, value) || value < INT32_MIN || value > INT32_MAX) return false;
  out = static_cast<int32_t>(value);
  return true;
}

inline Result<int32_t> ReadInt(std::string_view& bytes) {
  SERAC_ASSIGN_OR_RETURN(int64_t value, ReadLong(bytes));
  if (value < INT32_MIN || value > INT32_MAX)
    return Error(ErrorCode::kInvalidArgument, "Avro: int out of range");
  return static_cast<int32_t>(value);
}

inline Result<bool> ReadBoolean(std::string_view& bytes) {
  if (bytes.empty()) return Truncated();
  const auto byte = static_cast<uint8_t>(bytes[0]);
  if (byte > 1) return Error(ErrorCode::kInvalidArgument, "Avro: a boolean that is neither 0 nor 1");
  bytes.remove_prefix(1);
  return byte == 1;
}

inline Result<float> ReadFloat(std::string_view& bytes) {
  if (bytes.size() < 4) return Truncated();
  uint32_t bits = 0;
  for (int i = 0; i < 4; ++i) bits |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  bytes.remove_prefix(4);
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

inline Result<double> ReadDouble(std::string_view& bytes) {
  if (bytes.size() < 8) return Truncated();
  uint64_t bits = 0;
  for (int i = 0; i < 8; ++i) bits |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  bytes.remove_prefix(8);
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

inline Result<std::string_view> ReadRaw(std::string_view& bytes, size_t size) {
  if (bytes.size() < size) return Truncated();
  std::string_view out = bytes.substr(0, size);
  bytes.remove_prefix(size);
  return out;
}

inline Result<std::string_view> ReadBytes(std::string_view& bytes) {
  SERAC_ASSIGN_OR_RETURN(int64_t size, ReadLong(bytes));
  if (size < 0) return Error(ErrorCode::kInvalidArgument, "Avro: negative length");
  return ReadRaw(bytes, static_cast<size_t>(size));
}

}  // namespace serac::iceberg::avro::encoding
