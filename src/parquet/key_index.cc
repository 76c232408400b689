#include "parquet/key_index.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/encoding.h"
#include "common/hash.h"
#include "common/random.h"

namespace serac::parquet {

namespace {

// An index file: this header, the Bloom filter (64-bit words), the key offsets (entries + 1, into
// the key bytes), the positions (one per entry) and the key bytes, entries sorted by key bytes.
struct IndexHeader {
  char magic[8];
  uint32_t entries;
  uint32_t bloom_words;
  uint32_t bloom_hashes;
  uint32_t key_bytes;
  uint64_t data_file_records;  // the data file's record count: an index of another file is refused
};
static_assert(sizeof(IndexHeader) == 32);
// Version 2 keeps each key's Bloom bits in one 512-bit block (version 1 spread them over the whole
// filter); an index file of another version is unreadable, so it goes and its data file is read and
// indexed again.
constexpr char kMagic[8] = {'S', 'E', 'R', 'A', 'C', 'K', 'X', '2'};
constexpr uint32_t kBloomBitsPerKey = 10;
constexpr uint32_t kBloomHashes = 7;      // at most 7: each bit is 9 bits of one 64-bit hash
constexpr uint64_t kBloomBlockWords = 8;  // a block is one cache line
constexpr const char* kSuffix = ".kix";

// A hash fixed by common/hash.h (index files outlive the build that wrote them).
uint64_t KeyHash(std::string_view key) { return MixBits64(Fnv1a64(key)); }

// The Bloom filter's bits for a key (`hashes` at most 7), all in one block of 512 bits: a key
// costs one cache miss to set or test, not one per bit. `bits` is a multiple of 512. The block is
// the hash scaled to the filter's blocks by a multiply; each bit within it is 9 bits of a second hash.
template <typename Visit>
void ForEachBloomBit(uint64_t hash, uint64_t bits, uint32_t hashes, Visit visit) {
  const uint64_t blocks = bits / (kBloomBlockWords * 64);
  const auto block = static_cast<uint64_t>((static_cast<unsigned __int128>(hash) * blocks) >> 64);
  const uint64_t within = MixBits64(hash + 0x9E3779B97F4A7C15ull);
  for (uint32_t i = 0; i < hashes; ++i) visit(block * kBloomBlockWords * 64 + ((within >> (9 * i)) & 511));
}

uint64_t ExpectedSize(const IndexHeader& header) {
  return sizeof(IndexHeader) + 8ull * header.bloom_words + 4ull * (uint64_t{header.entries} + 1) +
         4ull * header.entries + header.key_bytes;
}

Status IndexError(const std::string& what, const std::string& path) {
  return Error(ErrorCode::kIoError, what + " key index file " + path + ": " + std::strerror(errno));
}

}  // namespace

Result<std::unique_ptr<DataFileKeyIndex>> DataFileKeyIndex::Open(std::string directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) {
    return Error(ErrorCode::kIoError, "making key index directory " + directory + ": " + error.message());
  }
  std::unique_ptr<DataFileKeyIndex> index(new DataFileKeyIndex(std::move(directory)));
  for (const auto& entry : std::filesystem::directory_iterator(index->directory_, error)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 4 && name.compare(name.size() - 4, 4, kSuffix) == 0) {
      index->names_.insert(name);
    } else if (name.find(".tmp-") != std::string::npos) {
      std::filesystem::remove(entry.path(), error);  // an index file a crash left half written
    }
  }
  return index;
}

std::string DataFileKeyIndex::NameOf(const std::string& data_file_path) {
  const Md5Digest digest = Md5(data_file_path);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size())) + kSuffix;
}

Result<std::optional<std::vector<int64_t>>> DataFileKeyIndex::Find(const iceberg::DataFile& data_file,
                                                                   std::span<const std::string> keys) {
  const std::string name = NameOf(data_file.file_path);
  if (names_.count(name) == 0) return std::optional<std::vector<int64_t>>();
  const std::string path = directory_ + "/" + name;
  auto forget = [&]() -> Result<std::optional<std::vector<int64_t>>> {
    ::unlink(path.c_str());  // unreadable: the data file is read instead, and indexed again
    names_.erase(name);
    return std::optional<std::vector<int64_t>>();
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return forget();
  struct stat status {};
  if (::fstat(fd, &status) != 0 || static_cast<uint64_t>(status.st_size) < sizeof(IndexHeader)) {
    ::close(fd);
    return forget();
  }
  const size_t size = static_cast<size_t>(status.st_size);
  void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapped == MAP_FAILED) return IndexError("mapping", path);
  struct Unmap {
    void* address;
    size_t size;
    ~Unmap() { ::munmap(address, size); }
  } unmap{mapped, size};
  const char* base = static_cast<const char*>(mapped);
  IndexHeader header;
  std::memcpy(&header, base, sizeof(header));
  if (std::memcmp(header.magic, kMagic, sizeof(kMagic)) != 0 || ExpectedSize(header) != size ||
      header.data_file_records != static_cast<uint64_t>(data_file.record_count) || header.bloom_words == 0 ||
      header.bloom_words % kBloomBlockWords != 0 || header.bloom_hashes > kBloomHashes) {
    return forget();
  }
  const auto* bloom = reinterpret_cast<const uint64_t*>(base + sizeof(IndexHeader));
  const auto* offsets = reinterpret_cast<const uint32_t*>(bloom + header.bloom_words);
  const auto* positions = offsets + header.entries + 1;
  const char* key_bytes = reinterpret_cast<const char*>(positions + header.entries);
  auto key_at = [&](uint32_t entry) {
    return std::string_view(key_bytes + offsets[entry], offsets[entry + 1] - offsets[entry]);
  };
  const uint64_t bits = uint64_t{header.bloom_words} * 64;
  std::vector<int64_t> found;
  for (const std::string& key : keys) {
    bool maybe = true;
    ForEachBloomBit(KeyHash(key), bits, header.bloom_hashes,
                    [&](uint64_t bit) { maybe = maybe && (bloom[bit / 64] >> (bit % 64)) & 1; });
    if (!maybe) continue;
    uint32_t low = 0;
    uint32_t high = header.entries;
    while (low < high) {  // the first entry not below the key
      const uint32_t middle = low + (high - low) / 2;
      if (key_at(middle) < key) {
        low = middle + 1;
      } else {
        high = middle;
      }
    }
    for (uint32_t entry = low; entry < header.entries && key_at(entry) == key; ++entry) {
      found.push_back(positions[entry]);
    }
  }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return std::optional<std::vector<int64_t>>(std::move(found));
}

Status DataFileKeyIndex::Add(const iceberg::DataFile& data_file, const KeyPositions& keys) {
  if (!keys.fits() || keys.size() >= UINT32_MAX) return Status::Ok();  // the data file is read when needed
  // The rows in key order, each as its index into `keys` (the keys themselves stay put) with what
  // the file's sections need in that order, and its key's first 8 bytes, which decide almost every
  // comparison (all of an integer key's) without reaching into the keys' buffer at a random place.
  struct Sorted {
    uint64_t prefix;  // the key's first 8 bytes, big-endian, zero-padded: ordered as the bytes are
    uint32_t row;
    uint32_t size;      // the key's bytes
    uint32_t position;  // the row's position in the data file
  };
  std::vector<Sorted> sorted(keys.size());
  for (size_t i = 0; i < sorted.size(); ++i) {
    const std::string_view key = keys.key(i);
    uint64_t prefix = 0;
    for (size_t b = 0; b < 8; ++b) {
      prefix = (prefix << 8) | (b < key.size() ? static_cast<uint8_t>(key[b]) : 0);
    }
    sorted[i] = Sorted{prefix, static_cast<uint32_t>(i), static_cast<uint32_t>(key.size()), keys.position(i)};
  }
  std::sort(sorted.begin(), sorted.end(), [&](const Sorted& a, const Sorted& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    const std::string_view x = keys.key(a.row);
    const std::string_view y = keys.key(b.row);
    return x < y || (x == y && a.position < b.position);
  });
  IndexHeader header{};
  std::memcpy(header.magic, kMagic, sizeof(kMagic));
  header.entries = static_cast<uint32_t>(keys.size());
  const uint64_t block_bits = kBloomBlockWords * 64;
  header.bloom_words = static_cast<uint32_t>(
      std::max<uint64_t>(1, (keys.size() * kBloomBitsPerKey + block_bits - 1) / block_bits) *
      kBloomBlockWords);
  header.bloom_hashes = kBloomHashes;
  header.key_bytes = static_cast<uint32_t>(keys.key_bytes());
  header.data_file_records = static_cast<uint64_t>(data_file.record_count);
  if (ExpectedSize(header) > kKeyIndexFileBytesMax) return Status::Ok();
  std::vector<uint64_t> bloom(header.bloom_words, 0);
  const uint64_t bits = uint64_t{header.bloom_words} * 64;
  for (size_t i = 0; i < keys.size(); ++i) {
    ForEachBloomBit(KeyHash(keys.key(i)), bits, kBloomHashes,
                    [&](uint64_t bit) { bloom[bit / 64] |= uint64_t{1} << (bit % 64); });
  }

  const std::string name = NameOf(data_file.file_path);
  const std::string path = directory_ + "/" + name;
  const std::string temporary = path + ".tmp-" + RandomUuid();
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IndexError("making", temporary);
  bool written = true;
  auto write_all = [&](const void* data, size_t size) {
    const char* bytes = static_cast<const char*>(data);
    while (written && size > 0) {
      const ssize_t n = ::write(fd, bytes, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) written = false;
      if (n > 0) {
        bytes += n;
        size -= static_cast<size_t>(n);
      }
    }
  };
  {
    // The offsets and positions in key order, 8 bytes a row while they are written.
    std::vector<uint32_t> offsets(sorted.size() + 1);
    std::vector<uint32_t> positions(sorted.size());
    uint32_t offset = 0;
    for (size_t i = 0; i < sorted.size(); ++i) {
      offsets[i] = offset;
      offset += sorted[i].size;
      positions[i] = sorted[i].position;
    }
    offsets[sorted.size()] = offset;
    write_all(&header, sizeof(header));
    write_all(bloom.data(), bloom.size() * 8);
    write_all(offsets.data(), offsets.size() * 4);
    write_all(positions.data(), positions.size() * 4);
  }
  // The keys in key order, gathered a megabyte at a time.
  constexpr size_t kChunkBytes = 1 << 20;
  std::vector<char> chunk(kChunkBytes);
  size_t used = 0;
  for (const Sorted& entry : sorted) {
    const std::string_view key = keys.key(entry.row);
    if (used + key.size() > kChunkBytes) {
      write_all(chunk.data(), used);
      used = 0;
    }
    if (key.size() > kChunkBytes) {
      write_all(key.data(), key.size());
      continue;
    }
    std::memcpy(chunk.data() + used, key.data(), key.size());
    used += key.size();
  }
  write_all(chunk.data(), used);
  // Whole on disk before it has its name: an index file that is there is never half written.
  if (!written || ::fsync(fd) != 0) {
    Status failed = IndexError("writing", temporary);
    ::close(fd);
    ::unlink(temporary.c_str());
    return failed;
  }
  ::close(fd);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    Status failed = IndexError("naming", path);
    ::unlink(temporary.c_str());
    return failed;
  }
  names_.insert(name);
  return Status::Ok();
}

void DataFileKeyIndex::Retain(const std::set<std::string>& live_paths) {
  std::set<std::string> live_names;
  for (const std::string& path : live_paths) live_names.insert(NameOf(path));
  for (auto it = names_.begin(); it != names_.end();) {
    if (live_names.count(*it) > 0) {
      ++it;
      continue;
    }
    ::unlink((directory_ + "/" + *it).c_str());
    it = names_.erase(it);
  }
}

}  // namespace serac::parquet
