#include "iceberg/puffin/puffin.h"

#include <roaring/roaring.h>

#include <nlohmann/json.hpp>

#include "common/hash.h"
#include "common/limits.h"

namespace serac::iceberg {

namespace {

using Json = nlohmann::json;

constexpr std::string_view kPuffinMagic("PFA1", 4);
constexpr std::string_view kDeletionVectorMagic("\xD1\xD3\x39\x64", 4);

Status Invalid(std::string message) { return Error(ErrorCode::kInvalidArgument, std::move(message)); }

void AppendBigEndian32(std::string& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xFF));
}
void AppendLittleEndian32(std::string& out, uint32_t value) {
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<char>((value >> shift) & 0xFF));
}
void AppendLittleEndian64(std::string& out, uint64_t value) {
  for (int shift = 0; shift < 64; shift += 8) out.push_back(static_cast<char>((value >> shift) & 0xFF));
}
uint32_t BigEndian32(std::string_view bytes) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}
uint64_t LittleEndian(std::string_view bytes, size_t size) {
  uint64_t value = 0;
  for (size_t i = 0; i < size; ++i) value |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  return value;
}

struct BitmapFree {
  void operator()(roaring_bitmap_t* bitmap) const { roaring_bitmap_free(bitmap); }
};
using Bitmap = std::unique_ptr<roaring_bitmap_t, BitmapFree>;

}  // namespace

struct DeletionVector::Bitmaps {
  std::map<uint32_t, Bitmap> by_key;  // high 32 bits → the low 32 bits present
};

DeletionVector::DeletionVector() : bitmaps_(std::make_unique<Bitmaps>()) {}
DeletionVector::DeletionVector(DeletionVector&&) noexcept = default;
DeletionVector& DeletionVector::operator=(DeletionVector&&) noexcept = default;
DeletionVector::~DeletionVector() = default;

Status DeletionVector::Add(int64_t position) {
  if (position < 0) return Invalid("a row position must not be negative: " + std::to_string(position));
  const auto key = static_cast<uint32_t>(static_cast<uint64_t>(position) >> 32);
  Bitmap& bitmap = bitmaps_->by_key[key];
  if (!bitmap) bitmap.reset(roaring_bitmap_create());
  roaring_bitmap_add(bitmap.get(), static_cast<uint32_t>(position & 0xFFFFFFFF));
  return Status::Ok();
}

bool DeletionVector::Contains(int64_t position) const {
  if (position < 0) return false;
  auto it = bitmaps_->by_key.find(static_cast<uint32_t>(static_cast<uint64_t>(position) >> 32));
  return it != bitmaps_->by_key.end() &&
         roaring_bitmap_contains(it->second.get(), static_cast<uint32_t>(position & 0xFFFFFFFF));
}

uint64_t DeletionVector::cardinality() const {
  uint64_t total = 0;
  for (const auto& [key, bitmap] : bitmaps_->by_key) total += roaring_bitmap_get_cardinality(bitmap.get());
  return total;
}

void DeletionVector::Merge(const DeletionVector& other) {
  for (const auto& [key, bitmap] : other.bitmaps_->by_key) {
    Bitmap& mine = bitmaps_->by_key[key];
    if (!mine) mine.reset(roaring_bitmap_create());
    roaring_bitmap_or_inplace(mine.get(), bitmap.get());
  }
}

std::vector<int64_t> DeletionVector::Positions() const {
  std::vector<int64_t> positions;
  positions.reserve(cardinality());
  for (const auto& [key, bitmap] : bitmaps_->by_key) {
    std::vector<uint32_t> low(roaring_bitmap_get_cardinality(bitmap.get()));
    roaring_bitmap_to_uint32_array(bitmap.get(), low.data());
    for (uint32_t value : low)
      positions.push_back(static_cast<int64_t>((static_cast<uint64_t>(key) << 32) | value));
  }
  return positions;
}

std::string DeletionVector::Serialize() const {
  // Magic, then the portable 64-bit form: the count of 32-bit bitmaps, then each key and bitmap in
  // ascending key order (run containers where they are smaller, as Java's runOptimize makes them).
  std::string vector(kDeletionVectorMagic);
  uint64_t nonempty = 0;
  for (const auto& [key, bitmap] : bitmaps_->by_key)
    nonempty += roaring_bitmap_get_cardinality(bitmap.get()) > 0;
  AppendLittleEndian64(vector, nonempty);
  for (const auto& [key, bitmap] : bitmaps_->by_key) {
    if (roaring_bitmap_get_cardinality(bitmap.get()) == 0) continue;
    roaring_bitmap_run_optimize(bitmap.get());
    AppendLittleEndian32(vector, key);
    const size_t size = roaring_bitmap_portable_size_in_bytes(bitmap.get());
    const size_t at = vector.size();
    vector.resize(at + size);
    roaring_bitmap_portable_serialize(bitmap.get(), vector.data() + at);
  }
  std::string blob;
  AppendBigEndian32(blob, static_cast<uint32_t>(vector.size()));
  blob += vector;
  AppendBigEndian32(blob, Crc32Update(0, vector.data(), vector.size()));
  return blob;
}

Result<DeletionVector> DeletionVector::Deserialize(std::string_view blob) {
  if (blob.size() < 4 + 4 + 8 + 4)
    return Invalid("a deletion vector blob of " + std::to_string(blob.size()) + " bytes");
  const uint32_t length = BigEndian32(blob);
  if (static_cast<uint64_t>(length) + 8 != blob.size()) {
    return Invalid("a deletion vector's length field says " + std::to_string(length) +
                   " bytes; the blob has " + std::to_string(blob.size() - 8));
  }
  const std::string_view vector = blob.substr(4, length);
  if (BigEndian32(blob.substr(4 + length)) != Crc32Update(0, vector.data(), vector.size())) {
    return Invalid("a deletion vector's CRC-32 does not match");
  }
  if (!vector.starts_with(kDeletionVectorMagic)) return Invalid("not a deletion vector (magic D1 D3 39 64)");
  std::string_view rest = vector.substr(4);
  const uint64_t count = LittleEndian(rest, 8);
  rest.remove_prefix(8);
  // Every bitmap takes at least a key and a cookie.
  if (count > rest.size() / 8)
    return Invalid("a deletion vector claims " + std::to_string(count) + " bitmaps");
  DeletionVector out;
  int64_t previous_key = -1;
  for (uint64_t i = 0; i < count; ++i) {
    if (rest.size() < 4) return Invalid("a deletion vector ends inside a key");
    const auto key = static_cast<uint32_t>(LittleEndian(rest, 4));
    rest.remove_prefix(4);
    if (static_cast<int64_t>(key) <= previous_key) return Invalid("deletion vector keys are not ascending");
    if (key > 0x7FFFFFFF) return Invalid("a deletion vector position past 2^63");
    previous_key = key;
    Bitmap bitmap(roaring_bitmap_portable_deserialize_safe(rest.data(), rest.size()));
    if (!bitmap) return Invalid("a deletion vector holds a malformed Roaring bitmap");
    const size_t used = roaring_bitmap_portable_size_in_bytes(bitmap.get());
    if (used > rest.size()) return Invalid("a deletion vector ends inside a bitmap");
    rest.remove_prefix(used);
    if (roaring_bitmap_get_cardinality(bitmap.get()) > 0) out.bitmaps_->by_key[key] = std::move(bitmap);
  }
  if (!rest.empty()) return Invalid("a deletion vector has bytes after its last bitmap");
  return out;
}

// ---- Puffin ----

PuffinWriter::PuffinWriter() : file_(kPuffinMagic) {}

const PuffinBlob& PuffinWriter::Add(PuffinBlob blob, std::string_view bytes) {
  blob.offset = static_cast<int64_t>(file_.size());
  blob.length = static_cast<int64_t>(bytes.size());
  file_.append(bytes);
  blobs_.push_back(std::move(blob));
  return blobs_.back();
}

std::string PuffinWriter::Finish(std::map<std::string, std::string> properties) {
  Json blobs = Json::array();
  for (const PuffinBlob& blob : blobs_) {
    Json item = {{"type", blob.type},
                 {"fields", blob.fields},
                 {"snapshot-id", blob.snapshot_id},
                 {"sequence-number", blob.sequence_number},
                 {"offset", blob.offset},
                 {"length", blob.length}};
    if (!blob.compression_codec.empty()) item["compression-codec"] = blob.compression_codec;
    if (!blob.properties.empty()) item["properties"] = blob.properties;
    blobs.push_back(std::move(item));
  }
  properties.emplace("created-by", "serac");
  const std::string payload =
      Json{{"blobs", blobs}, {"properties", properties}}.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string out = std::move(file_);
  out += kPuffinMagic;
  out += payload;
  AppendLittleEndian32(out, static_cast<uint32_t>(payload.size()));
  out.append(4, '\0');  // flags: the payload is not compressed
  out += kPuffinMagic;
  return out;
}

Result<std::vector<PuffinBlob>> ReadPuffinFooter(std::string_view file) {
  constexpr size_t kTail = 4 + 4 + 4;  // payload size, flags, magic
  if (file.size() < 4 + 4 + kTail || !file.starts_with(kPuffinMagic) || !file.ends_with(kPuffinMagic)) {
    return Invalid("not a Puffin file (magic PFA1 at both ends)");
  }
  const uint64_t payload_size = LittleEndian(file.substr(file.size() - kTail), 4);
  const std::string_view flags = file.substr(file.size() - 8, 4);
  if (payload_size > limits::kPuffinFooterBytesMax) {
    return Invalid("a Puffin footer larger than limits::kPuffinFooterBytesMax");
  }
  if (payload_size + kTail + 4 + 4 > file.size()) return Invalid("a Puffin footer larger than the file");
  if (static_cast<uint8_t>(flags[0]) & 1)
    return Error(ErrorCode::kNotImplemented, "a compressed Puffin footer");
  const size_t footer_start = file.size() - kTail - payload_size - 4;
  if (file.substr(footer_start, 4) != kPuffinMagic)
    return Invalid("the Puffin footer does not start with its magic");
  const Json payload = Json::parse(file.substr(footer_start + 4, payload_size), nullptr, false);
  auto listed = payload.is_object() ? payload.find("blobs") : payload.end();
  if (!payload.is_object() || listed == payload.end() || !listed->is_array()) {
    return Invalid("the Puffin footer is not a FileMetadata object with blobs");
  }
  std::vector<PuffinBlob> blobs;
  for (const Json& item : *listed) {
    PuffinBlob blob;
    if (!item.is_object()) return Invalid("a Puffin blob is not an object");
    // Members are looked up with find: a const Json's operator[] on a missing key is undefined.
    auto member = [&](const char* key) -> const Json* {
      auto it = item.find(key);
      return it == item.end() ? nullptr : &*it;
    };
    const Json* type = member("type");
    const Json* offset = member("offset");
    const Json* length = member("length");
    if (type == nullptr || !type->is_string() || offset == nullptr || !offset->is_number_integer() ||
        length == nullptr || !length->is_number_integer()) {
      return Invalid("a Puffin blob needs type, offset and length");
    }
    blob.type = type->get<std::string>();
    blob.offset = offset->get<int64_t>();
    blob.length = length->get<int64_t>();
    if (blob.offset < 4 || blob.length < 0 || static_cast<uint64_t>(blob.offset) > footer_start ||
        static_cast<uint64_t>(blob.length) > footer_start - static_cast<uint64_t>(blob.offset)) {
      return Invalid("a Puffin blob outside the file's blob area");
    }
    if (const Json* fields = member("fields"); fields != nullptr && fields->is_array()) {
      for (const Json& field : *fields) {
        if (field.is_number_integer()) blob.fields.push_back(field.get<int32_t>());
      }
    }
    if (const Json* id = member("snapshot-id"); id != nullptr && id->is_number_integer()) {
      blob.snapshot_id = id->get<int64_t>();
    }
    if (const Json* sequence = member("sequence-number");
        sequence != nullptr && sequence->is_number_integer()) {
      blob.sequence_number = sequence->get<int64_t>();
    }
    if (const Json* codec = member("compression-codec"); codec != nullptr && codec->is_string()) {
      blob.compression_codec = codec->get<std::string>();
    }
    if (const Json* properties = member("properties"); properties != nullptr && properties->is_object()) {
      for (const auto& [key, value] : properties->items()) {
        if (value.is_string()) blob.properties[key] = value.get<std::string>();
      }
    }
    blobs.push_back(std::move(blob));
  }
  return blobs;
}

}  // namespace serac::iceberg
