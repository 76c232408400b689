// A table's metadata file in pieces: the head and the newest history entries as text of this
// version, and older runs of history entries as chunks that successive versions share. A commit
// then stores and hashes only what changed, however long the history has grown.
#include <algorithm>
#include <array>

#include "common/hash.h"
#include "common/limits.h"
#include "common/lru_cache.h"
#include "iceberg/metadata/metadata_internal.h"

namespace serac::iceberg {
namespace {

// Run lengths, in entries: a run ends after an entry whose mixed key is 0 modulo the mean, or
// when it reaches the maximum. History is cut on three levels: the longest runs, then runs of the
// next level after the last of those, and so on; entries after the shortest level's last run are
// text of this version. The newest entries are thus shared within a few versions, so each version
// writes little of its own, while the piece count stays small however long the history grows
// (each piece costs the object index a row lookup and a use count per version). Each level's runs
// are 8 of the next shorter level's; the longest hold a few hundred KiB to a few MiB (snapshots
// carry summaries of a few hundred bytes to a few KiB; log entries are ~50-150 bytes).
struct RunShape {
  uint64_t mean_entries;
  size_t max_entries;
};
using RunShapes = std::array<RunShape, 3>;  // longest first
constexpr RunShapes kSnapshotRuns{{{2048, 8192}, {256, 1024}, {32, 128}}};
constexpr RunShapes kSnapshotLogRuns{{{8192, 32768}, {1024, 4096}, {128, 512}}};
constexpr RunShapes kMetadataLogRuns{{{2048, 8192}, {256, 1024}, {32, 128}}};

uint64_t Mix(uint64_t value) { return MixBits64(value); }

// One history array of a table as it was last cut: its entries, their mixed keys and its runs.
// The table's next version nearly always repeats these entries and adds a few, so it takes the
// mixed keys and the chunks of the common prefix from here instead of reading every entry and
// building every run's cache key again.
template <typename Entry>
struct ArrayCut {
  struct Run {
    size_t begin = 0;
    size_t end = 0;
    std::shared_ptr<const HistoryChunk> chunk;
  };
  std::vector<Entry> entries;  // for snapshots, the shared objects (so their addresses stay theirs)
  std::vector<uint64_t> mixed;
  std::vector<Run> runs;

  uint64_t Bytes() const {
    uint64_t bytes =
        entries.size() * sizeof(Entry) + mixed.size() * sizeof(uint64_t) + runs.size() * sizeof(Run);
    for (const Run& run : runs) bytes += run.chunk->text.size();
    return bytes;
  }
};

struct TableCut {
  ArrayCut<MetadataLogEntry> metadata_log;
  ArrayCut<SnapshotLogEntry> snapshot_log;
  ArrayCut<StoredSnapshotPtr> snapshots;

  uint64_t Bytes() const {
    uint64_t bytes = metadata_log.Bytes() + snapshot_log.Bytes() + snapshots.Bytes();
    for (const MetadataLogEntry& entry : metadata_log.entries) bytes += entry.metadata_file.size();
    return bytes;
  }
};

// The last cut of each table, by table uuid, with its chunks and their digests: a commit hashes
// only runs its table's last cut did not have. A hint only: what is taken from it is checked
// against the entries being cut.
LruCache<TableCut>& CutCache() {
  static auto* cache = new LruCache<TableCut>(limits::kCatalogHistoryCutCacheEntriesMax,
                                              limits::kCatalogHistoryCutCacheBytesMax);  // used until exit
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

// The chunk of entries [begin, end). A run after the first carries the comma before it, so it
// needs no piece of its own.
template <typename AppendEntry>
std::shared_ptr<const HistoryChunk> RunChunk(size_t begin, size_t end, AppendEntry& append) {
  std::string text;
  for (size_t j = begin; j < end; ++j) {
    if (j != 0) text += ',';
    append(j, text);
  }
  return MakeChunk(std::move(text));
}

// How one history array is cut and written: `mixed(entry)` is an entry's mixed key (a run of a
// shape may end after it when it is 0 modulo the shape's mean), `append(i, text)` writes entry i.
// `previous` is the table's last cut of this array, if known; `cut` receives this one.
template <typename Entry, typename Mixed, typename AppendEntry>
void AppendHistoryArray(PiecesBuilder& out, const std::vector<Entry>& entries, RunShapes shapes,
                        const ArrayCut<Entry>* previous, ArrayCut<Entry>& cut, Mixed mixed,
                        AppendEntry append) {
  const size_t count = entries.size();
  // Entries [0, same) are those of the previous cut from index `shift` on (the oldest entries may
  // have gone since: a metadata log trimmed to its maximum, expired snapshots), and so are their
  // mixed keys. A run's chunk is the text of its entries, so a run this cut makes that the previous
  // one made too, within those entries, has the previous one's chunk — unless only one of the two
  // starts its array, since a run after the first carries the comma before it.
  size_t shift = 0;
  size_t same = 0;
  if (previous != nullptr && count > 0) {
    const auto first = std::find(previous->entries.begin(), previous->entries.end(), entries[0]);
    shift = first == previous->entries.end() ? 0 : static_cast<size_t>(first - previous->entries.begin());
    const size_t common = std::min(count, previous->entries.size() - shift);
    while (same < common && entries[same] == previous->entries[same + shift]) ++same;
  }
  cut.entries = entries;
  cut.mixed.resize(count);
  for (size_t i = 0; i < count; ++i) cut.mixed[i] = i < same ? previous->mixed[i + shift] : mixed(entries[i]);

  size_t run_start = 0;
  size_t previous_run = 0;
  auto add_run = [&](size_t end) {
    std::shared_ptr<const HistoryChunk> chunk;
    if (end <= same && (run_start != 0 || shift == 0)) {
      const size_t begin_there = run_start + shift;
      while (previous_run < previous->runs.size() && previous->runs[previous_run].begin < begin_there) {
        ++previous_run;
      }
      if (previous_run < previous->runs.size() && previous->runs[previous_run].begin == begin_there &&
          previous->runs[previous_run].end == end + shift) {
        chunk = previous->runs[previous_run].chunk;
      }
    }
    if (!chunk) chunk = RunChunk(run_start, end, append);
    cut.runs.push_back({run_start, end, chunk});
    out.AddChunk(std::move(chunk));
    run_start = end;
  };
  // Each level's runs after the last run of the level before; a run no level has closed yet is
  // text of this version.
  for (const RunShape& shape : shapes) {
    for (size_t i = run_start; i < count; ++i) {
      if (cut.mixed[i] % shape.mean_entries == 0 || i + 1 - run_start >= shape.max_entries) add_run(i + 1);
    }
  }
  for (size_t i = run_start; i < count; ++i) {
    if (i != 0) out.text() += ',';
    append(i, out.text());
  }
}

}  // namespace

std::vector<MetadataTextPiece> TableMetadataToJsonPieces(const TableModel& metadata) {
  std::shared_ptr<const TableCut> previous;
  if (!metadata.table_uuid.empty()) previous = CutCache().Get(metadata.table_uuid);
  auto cut = std::make_shared<TableCut>();
  PiecesBuilder out;
  out.text() = TableMetadataHeadText(metadata);

  const std::vector<MetadataLogEntry>& metadata_log = metadata.metadata_log;
  out.text() += ",\"metadata-log\":[";
  AppendHistoryArray(
      out, metadata_log, kMetadataLogRuns, previous ? &previous->metadata_log : nullptr, cut->metadata_log,
      [](const MetadataLogEntry& entry) {
        return Mix(Fnv1a64(entry.metadata_file) ^ static_cast<uint64_t>(entry.timestamp_ms));
      },
      [&](size_t i, std::string& text) { AppendMetadataLogEntryText(metadata_log[i], text); });

  const std::vector<SnapshotLogEntry>& snapshot_log = metadata.snapshot_log;
  out.text() += "],\"snapshot-log\":[";
  AppendHistoryArray(
      out, snapshot_log, kSnapshotLogRuns, previous ? &previous->snapshot_log : nullptr, cut->snapshot_log,
      [](const SnapshotLogEntry& entry) {
        return Mix(static_cast<uint64_t>(entry.snapshot_id) ^ Mix(static_cast<uint64_t>(entry.timestamp_ms)));
      },
      [&](size_t i, std::string& text) { AppendSnapshotLogEntryText(snapshot_log[i], text); });

  const std::vector<StoredSnapshotPtr>& snapshots = metadata.snapshots;
  out.text() += "],\"snapshots\":[";
  AppendHistoryArray(
      out, snapshots, kSnapshotRuns, previous ? &previous->snapshots : nullptr, cut->snapshots,
      [](const StoredSnapshotPtr& snapshot) { return Mix(static_cast<uint64_t>(snapshot->id())); },
      [&](size_t i, std::string& text) { text += snapshots[i]->text(); });
  out.text() += "]}";
  if (!metadata.table_uuid.empty()) {
    const uint64_t bytes = cut->Bytes();
    CutCache().Put(metadata.table_uuid, std::move(cut), bytes);
  }
  return out.Finish();
}

uint64_t MetadataPiecesSize(const std::vector<MetadataTextPiece>& pieces) {
  uint64_t size = 0;
  for (const MetadataTextPiece& piece : pieces) size += piece.size();
  return size;
}

std::string JoinMetadataPieces(const std::vector<MetadataTextPiece>& pieces) {
  std::string text;
  text.reserve(MetadataPiecesSize(pieces));
  for (const MetadataTextPiece& piece : pieces) text += piece.view();
  return text;
}

}  // namespace serac::iceberg
