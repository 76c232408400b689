// A table's metadata file in pieces: the head and the newest history entries as text of this
// version, and older runs of history entries as chunks that successive versions share. A commit
// then stores and hashes only what changed, however long the history has grown.
#include <cstring>

#include "common/hash.h"
#include "common/limits.h"
#include "common/lru_cache.h"
#include "iceberg/metadata_internal.h"

namespace serac::iceberg {
namespace {

// Run lengths, in entries: a run ends after an entry whose mixed key is 0 modulo the mean, or
// when it reaches the maximum. Means are chosen so a chunk holds a few KiB to a few tens of KiB
// (snapshots carry summaries of a few hundred bytes to a few KiB; log entries are ~50-150 bytes).
struct RunShape {
  uint64_t mean_entries;
  size_t max_entries;
};
constexpr RunShape kSnapshotRuns{32, 128};
constexpr RunShape kSnapshotLogRuns{128, 512};
constexpr RunShape kMetadataLogRuns{32, 128};

uint64_t Mix(uint64_t value) {
  value ^= value >> 30;
  value *= 0xbf58476d1ce4e5b9ULL;
  value ^= value >> 27;
  value *= 0x94d049bb133111ebULL;
  return value ^ (value >> 31);
}

uint64_t Fnv1a(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

void AppendRaw(std::string& key, int64_t value) {
  char bytes[sizeof(value)];
  std::memcpy(bytes, &value, sizeof(value));
  key.append(bytes, sizeof(value));
}

// A chunk and the snapshots it was cut from. Chunks are cached by the identity of what they were
// cut from: for snapshots the addresses of the shared, immutable Snapshot objects (kept alive by
// `pins`, so an address cannot be reused while it is a key), for log entries their content.
struct CachedRun {
  std::shared_ptr<const HistoryChunk> chunk;
  std::vector<SnapshotPtr> pins;
};

LruCache<CachedRun>& ChunkCache() {
  static auto* cache = new LruCache<CachedRun>(limits::kCatalogHistoryChunkCacheEntriesMax,
                                               limits::kCatalogHistoryChunkCacheBytesMax);  // used until exit
  return *cache;
}

std::shared_ptr<const HistoryChunk> MakeChunk(std::string text) {
  auto chunk = std::make_shared<HistoryChunk>();
  const Sha256Digest sha256 = Sha256(text);
  const Md5Digest md5 = Md5(text);
  chunk->sha256.assign(reinterpret_cast<const char*>(sha256.data()), sha256.size());
  chunk->md5.assign(reinterpret_cast<const char*>(md5.data()), md5.size());
  chunk->text = std::move(text);
  return chunk;
}

class PiecesBuilder {
 public:
  std::string& text() { return text_; }

  void AddChunk(std::shared_ptr<const HistoryChunk> chunk) {
    Flush();
    MetadataTextPiece piece;
    piece.chunk = std::move(chunk);
    pieces_.push_back(std::move(piece));
  }

  std::vector<MetadataTextPiece> Finish() {
    Flush();
    return std::move(pieces_);
  }

 private:
  void Flush() {
    if (text_.empty()) return;
    MetadataTextPiece piece;
    piece.text = std::move(text_);
    pieces_.push_back(std::move(piece));
    text_.clear();
  }

  std::vector<MetadataTextPiece> pieces_;
  std::string text_;
};

// How one history array is cut and written: `boundary(i)` says whether a run may end after entry
// i, `key(begin, end, pins)` identifies the run for the cache, `append(i, text)` writes entry i.
template <typename Boundary, typename Key, typename AppendEntry>
void AppendHistoryArray(PiecesBuilder& out, size_t count, RunShape shape, Boundary boundary, Key key,
                        AppendEntry append) {
  size_t run_start = 0;
  for (size_t i = 0; i < count; ++i) {
    if (!boundary(i) && i + 1 - run_start < shape.max_entries) continue;
    std::vector<SnapshotPtr> pins;
    const std::string run_key = key(run_start, i + 1, pins);
    std::shared_ptr<const HistoryChunk> chunk;
    if (std::shared_ptr<const CachedRun> cached = ChunkCache().Get(run_key)) {
      chunk = cached->chunk;
    } else {
      std::string text;
      for (size_t j = run_start; j <= i; ++j) {
        if (j != run_start) text += ',';
        append(j, text);
      }
      chunk = MakeChunk(std::move(text));
      const uint64_t bytes = run_key.size() + chunk->text.size() + pins.size() * sizeof(SnapshotPtr);
      ChunkCache().Put(run_key, std::make_shared<const CachedRun>(CachedRun{chunk, std::move(pins)}), bytes);
    }
    if (run_start != 0) out.text() += ',';
    out.AddChunk(std::move(chunk));
    run_start = i + 1;
  }
  for (size_t i = run_start; i < count; ++i) {
    if (i != 0) out.text() += ',';
    append(i, out.text());
  }
}

}  // namespace

std::vector<MetadataTextPiece> TableMetadataToJsonPieces(const TableMetadata& metadata) {
  PiecesBuilder out;
  out.text() = TableMetadataHeadText(metadata);

  const std::vector<MetadataLogEntry>& metadata_log = metadata.metadata_log;
  out.text() += ",\"metadata-log\":[";
  AppendHistoryArray(
      out, metadata_log.size(), kMetadataLogRuns,
      [&](size_t i) {
        const MetadataLogEntry& entry = metadata_log[i];
        return Mix(Fnv1a(entry.metadata_file) ^ static_cast<uint64_t>(entry.timestamp_ms)) %
                   kMetadataLogRuns.mean_entries ==
               0;
      },
      [&](size_t begin, size_t end, std::vector<SnapshotPtr>&) {
        std::string key = "M";
        for (size_t i = begin; i < end; ++i) {
          key += metadata_log[i].metadata_file;
          key += '\0';
          AppendRaw(key, metadata_log[i].timestamp_ms);
        }
        return key;
      },
      [&](size_t i, std::string& text) { AppendMetadataLogEntryText(metadata_log[i], text); });

  const std::vector<SnapshotLogEntry>& snapshot_log = metadata.snapshot_log;
  out.text() += "],\"snapshot-log\":[";
  AppendHistoryArray(
      out, snapshot_log.size(), kSnapshotLogRuns,
      [&](size_t i) {
        const SnapshotLogEntry& entry = snapshot_log[i];
        return Mix(static_cast<uint64_t>(entry.snapshot_id) ^ Mix(static_cast<uint64_t>(entry.timestamp_ms))) %
                   kSnapshotLogRuns.mean_entries ==
               0;
      },
      [&](size_t begin, size_t end, std::vector<SnapshotPtr>&) {
        std::string key = "L";
        for (size_t i = begin; i < end; ++i) {
          AppendRaw(key, snapshot_log[i].snapshot_id);
          AppendRaw(key, snapshot_log[i].timestamp_ms);
        }
        return key;
      },
      [&](size_t i, std::string& text) { AppendSnapshotLogEntryText(snapshot_log[i], text); });

  const std::vector<SnapshotPtr>& snapshots = metadata.snapshots;
  out.text() += "],\"snapshots\":[";
  AppendHistoryArray(
      out, snapshots.size(), kSnapshotRuns,
      [&](size_t i) { return Mix(static_cast<uint64_t>(snapshots[i]->id())) % kSnapshotRuns.mean_entries == 0; },
      [&](size_t begin, size_t end, std::vector<SnapshotPtr>& pins) {
        std::string key = "S";
        for (size_t i = begin; i < end; ++i) {
          AppendRaw(key, static_cast<int64_t>(reinterpret_cast<uintptr_t>(snapshots[i].get())));
          pins.push_back(snapshots[i]);
        }
        return key;
      },
      [&](size_t i, std::string& text) { text += snapshots[i]->text(); });
  out.text() += "]}";
  return out.Finish();
}

std::string JoinMetadataPieces(const std::vector<MetadataTextPiece>& pieces) {
  size_t size = 0;
  for (const MetadataTextPiece& piece : pieces) size += piece.size();
  std::string text;
  text.reserve(size);
  for (const MetadataTextPiece& piece : pieces) text += piece.view();
  return text;
}

}  // namespace serac::iceberg
