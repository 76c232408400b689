// Avro object container files: "Obj" 1, the header metadata map, a 16-byte sync marker, then blocks
// of (value count, byte size, values compressed with the file's codec, sync marker).
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <memory>

#include "common/hash.h"
#include "common/limits.h"
#include "common/random.h"
#include "common/zstd.h"
#include "iceberg/avro/avro.h"
#include "iceberg/avro/avro_encoding_internal.h"

namespace serac::iceberg::avro {

namespace {

constexpr std::string_view kMagic("Obj\x01", 4);
constexpr size_t kSyncMarkerBytes = 16;
constexpr int kDeflateLevel = 6;  // java.util.zip's default, which Java Avro's deflate codec uses
constexpr int kZstdLevel = 3;     // zstd's default

Status Invalid(std::string message) {
  return Error(ErrorCode::kInvalidArgument, "Avro file: " + std::move(message));
}

std::optional<Codec> CodecNamed(std::string_view name) {
  if (name.empty() || name == "null") return Codec::kNull;
  if (name == "deflate") return Codec::kDeflate;
  if (name == "snappy") return Codec::kSnappy;
  if (name == "zstandard") return Codec::kZstd;
  return std::nullopt;
}

// ---- Compression ----

Result<std::string> Deflate(std::string_view input) {
  z_stream stream{};
  if (deflateInit2(&stream, kDeflateLevel, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Error(ErrorCode::kInternal, "zlib: deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, static_cast<uLong>(input.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  stream.avail_in = static_cast<uInt>(input.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (result != Z_STREAM_END) return Error(ErrorCode::kInternal, "zlib: deflate did not finish");
  return out;
}

Status TooLarge() {
  return Invalid("a block inflates beyond limits::kAvroBlockBytesMax (" +
                 std::to_string(limits::kAvroBlockBytesMax) + " bytes)");
}

Status Inflate(std::string_view input, std::string& out) {
  z_stream stream{};
  if (inflateInit2(&stream, -15) != Z_OK) return Error(ErrorCode::kInternal, "zlib: inflateInit2 failed");
  std::unique_ptr<z_stream, int (*)(z_streamp)> guard(&stream, inflateEnd);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  stream.avail_in = static_cast<uInt>(input.size());
  // Straight into `out`, grown as it fills (its capacity is kept from the previous block).
  size_t filled = 0;
  out.resize(std::max<size_t>(out.capacity(), 64 * 1024));
  while (true) {
    if (filled == out.size()) {
      if (out.size() > limits::kAvroBlockBytesMax) return TooLarge();
      out.resize(out.size() * 2);
    }
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + filled);
    stream.avail_out = static_cast<uInt>(out.size() - filled);
    const int result = inflate(&stream, Z_NO_FLUSH);
    if (result != Z_OK && result != Z_STREAM_END) return Invalid("a deflate block does not inflate");
    const size_t produced = out.size() - filled - stream.avail_out;
    filled += produced;
    if (filled > limits::kAvroBlockBytesMax) return TooLarge();
    if (result == Z_STREAM_END) {
      out.resize(filled);
      return Status::Ok();
    }
    if (stream.avail_in == 0 && stream.avail_out != 0) return Invalid("a deflate block ends early");
  }
}

Status ZstdDecompress(std::string_view input, std::string& out) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> context(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!context) return Error(ErrorCode::kInternal, "zstd: no memory for a context");
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  out.clear();
  char chunk[64 * 1024];
  size_t result = 1;
  while (in.pos < in.size || result != 0) {
    ZSTD_outBuffer buffer{chunk, sizeof(chunk), 0};
    result = ZSTD_decompressStream(context.get(), &buffer, &in);
    if (ZSTD_isError(result))
      return Invalid(std::string("a zstandard block does not decompress: ") + ZSTD_getErrorName(result));
    out.append(chunk, buffer.pos);
    if (out.size() > limits::kAvroBlockBytesMax) return TooLarge();
    if (in.pos == in.size && buffer.pos == 0 && result != 0) return Invalid("a zstandard block ends early");
  }
  return Status::Ok();
}

uint32_t Crc32Of(std::string_view bytes) { return Crc32Update(0, bytes.data(), bytes.size()); }

Result<std::string> Compress(Codec codec, std::string_view block) {
  switch (codec) {
    case Codec::kNull:
      return std::string(block);
    case Codec::kDeflate:
      return Deflate(block);
    case Codec::kSnappy: {
      std::string out;
      snappy::Compress(block.data(), block.size(), &out);
      const uint32_t crc = Crc32Of(block);  // Avro's snappy codec ends a block with the CRC-32 of its bytes
      for (int shift : {24, 16, 8, 0}) out.push_back(static_cast<char>((crc >> shift) & 0xFF));
      return out;
    }
    case Codec::kZstd: {
      std::string out = zstd::Compress(block, kZstdLevel);
      if (out.empty()) return Error(ErrorCode::kInternal, "zstd: no memory for a context");
      return out;
    }
  }
  return Invalid("unknown codec");
}

Status Decompress(Codec codec, std::string_view block, std::string& out) {
  switch (codec) {
    case Codec::kNull:
      out.assign(block);
      return Status::Ok();
    case Codec::kDeflate:
      return Inflate(block, out);
    case Codec::kSnappy: {
      if (block.size() < 4) return Invalid("a snappy block without its checksum");
      const std::string_view compressed = block.substr(0, block.size() - 4);
      size_t size = 0;
      if (!snappy::GetUncompressedLength(compressed.data(), compressed.size(), &size)) {
        return Invalid("a snappy block does not decompress");
      }
      if (size > limits::kAvroBlockBytesMax) return TooLarge();
      out.resize(size);
      if (!snappy::RawUncompress(compressed.data(), compressed.size(), out.data())) {
        return Invalid("a snappy block does not decompress");
      }
      uint32_t expected = 0;
      for (size_t i = 0; i < 4; ++i)
        expected = (expected << 8) | static_cast<uint8_t>(block[compressed.size() + i]);
      if (Crc32Of(out) != expected) return Invalid("a snappy block fails its CRC-32");
      return Status::Ok();
    }
    case Codec::kZstd:
      return ZstdDecompress(block, out);
  }
  return Invalid("unknown codec");
}

}  // namespace

std::string_view CodecName(Codec codec) {
  switch (codec) {
    case Codec::kNull:
      return "null";
    case Codec::kDeflate:
      return "deflate";
    case Codec::kSnappy:
      return "snappy";
    case Codec::kZstd:
      return "zstandard";
  }
  return "null";
}

// ---- Writing ----

FileWriter::FileWriter(SchemaPtr schema, FileWriterOptions options, std::string sync_marker)
    : schema_(std::move(schema)), options_(std::move(options)), sync_marker_(std::move(sync_marker)) {}

Result<FileWriter> FileWriter::Make(SchemaPtr schema, FileWriterOptions options) {
  if (schema == nullptr) return Invalid("no schema");
  FileWriter writer(std::move(schema), std::move(options), RandomBytes(kSyncMarkerBytes));
  std::string& out = writer.file_;
  out.append(kMagic);
  const auto& metadata = writer.options_.metadata;
  encoding::AppendLong(out, static_cast<int64_t>(metadata.size() + 2));
  encoding::AppendBytes(out, "avro.schema");
  encoding::AppendBytes(out, SchemaToJson(*writer.schema_));
  encoding::AppendBytes(out, "avro.codec");
  encoding::AppendBytes(out, CodecName(writer.options_.codec));
  for (const auto& [key, value] : metadata) {
    if (key.starts_with("avro.")) return Invalid("metadata key " + key + " is reserved");
    encoding::AppendBytes(out, key);
    encoding::AppendBytes(out, value);
  }
  out.push_back(0);  // end of the metadata map
  out.append(writer.sync_marker_);
  return writer;
}

Status FileWriter::Append(const Value& value) {
  SERAC_RETURN_IF_ERROR(Encode(*schema_, value, block_));
  ++block_values_;
  ++values_;
  if (block_.size() >= options_.block_bytes) return EndBlock();
  return Status::Ok();
}

Status FileWriter::AppendEncoded(std::string_view encoded) {
  block_.append(encoded);
  ++block_values_;
  ++values_;
  if (block_.size() >= options_.block_bytes) return EndBlock();
  return Status::Ok();
}

Status FileWriter::EndBlock() {
  if (block_values_ == 0) return Status::Ok();
  SERAC_ASSIGN_OR_RETURN(std::string compressed, Compress(options_.codec, block_));
  encoding::AppendLong(file_, static_cast<int64_t>(block_values_));
  encoding::AppendBytes(file_, compressed);
  file_.append(sync_marker_);
  block_.clear();
  block_values_ = 0;
  return Status::Ok();
}

Result<std::string> FileWriter::Finish() {
  SERAC_RETURN_IF_ERROR(EndBlock());
  return std::move(file_);
}

// ---- Reading ----

Result<FileReader> FileReader::Open(std::string_view file) {
  if (!file.starts_with(kMagic)) return Invalid("not an Avro object container file (no Obj\\x01 magic)");
  FileReader reader;
  std::string_view rest = file.substr(kMagic.size());
  uint64_t header_bytes = 0;
  while (true) {
    SERAC_ASSIGN_OR_RETURN(int64_t count, encoding::ReadLong(rest));
    if (count == 0) break;
    if (count < 0) {
      if (count == INT64_MIN) return Invalid("metadata block count out of range");
      count = -count;
      SERAC_RETURN_IF_ERROR(encoding::ReadLong(rest).status());  // the block's byte size
    }
    if (static_cast<uint64_t>(count) > rest.size() / 2)
      return Invalid("metadata claims more entries than it has bytes");
    for (int64_t i = 0; i < count; ++i) {
      SERAC_ASSIGN_OR_RETURN(std::string_view key, encoding::ReadBytes(rest));
      SERAC_ASSIGN_OR_RETURN(std::string_view value, encoding::ReadBytes(rest));
      header_bytes += key.size() + value.size();
      if (header_bytes > limits::kAvroHeaderBytesMax) {
        return Invalid("header metadata larger than limits::kAvroHeaderBytesMax");
      }
      reader.metadata_[std::string(key)] = std::string(value);
    }
  }
  SERAC_ASSIGN_OR_RETURN(std::string_view sync, encoding::ReadRaw(rest, kSyncMarkerBytes));
  reader.sync_marker_ = std::string(sync);
  const std::string* schema_json = reader.FindMetadata("avro.schema");
  if (schema_json == nullptr) return Invalid("the header has no avro.schema");
  SERAC_ASSIGN_OR_RETURN(reader.schema_, ParseSchema(*schema_json));
  const std::string* codec_name = reader.FindMetadata("avro.codec");
  std::optional<Codec> codec = CodecNamed(codec_name == nullptr ? "null" : *codec_name);
  if (!codec) return Invalid("unknown codec " + *codec_name);
  reader.codec_ = *codec;
  reader.rest_ = rest;
  return reader;
}

const std::string* FileReader::FindMetadata(std::string_view key) const {
  auto it = metadata_.find(std::string(key));
  return it == metadata_.end() ? nullptr : &it->second;
}

Result<bool> FileReader::NextBlock(uint64_t& count, std::string_view& encoded) {
  if (rest_.empty()) return false;
  SERAC_ASSIGN_OR_RETURN(int64_t values, encoding::ReadLong(rest_));
  SERAC_ASSIGN_OR_RETURN(std::string_view block, encoding::ReadBytes(rest_));
  SERAC_ASSIGN_OR_RETURN(std::string_view sync, encoding::ReadRaw(rest_, kSyncMarkerBytes));
  if (values < 0) return Invalid("a block with a negative value count");
  if (sync != sync_marker_) return Invalid("a block does not end with the file's sync marker");
  SERAC_RETURN_IF_ERROR(Decompress(codec_, block, block_buffer_));
  count = static_cast<uint64_t>(values);
  encoded = block_buffer_;
  return true;
}

Result<std::vector<Value>> FileReader::ReadAll(const Resolver* reader) {
  std::vector<Value> values;
  uint64_t count = 0;
  std::string_view encoded;
  // Every value takes at least a byte unless the schema makes empty ones (null, an empty record):
  // those may number limits::kAvroEmptyItemsMax in the whole file, not per block.
  uint64_t empty_values_left = limits::kAvroEmptyItemsMax;
  while (true) {
    SERAC_ASSIGN_OR_RETURN(bool more, NextBlock(count, encoded));
    if (!more) return values;
    if (count > encoded.size()) {
      if (count - encoded.size() > empty_values_left) {
        return Invalid("blocks claim more values than they hold (limits::kAvroEmptyItemsMax)");
      }
      empty_values_left -= count - encoded.size();
    }
    for (uint64_t i = 0; i < count; ++i) {
      Result<Value> value = reader != nullptr ? reader->Decode(encoded) : Decode(*schema_, encoded);
      if (!value.ok()) return value.status();
      values.push_back(std::move(value).value());
    }
    if (!encoded.empty()) return Invalid("a block holds bytes after its last value");
  }
}

}  // namespace serac::iceberg::avro
