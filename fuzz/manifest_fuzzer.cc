// Fuzzes the manifest and manifest list readers with whole Avro files: any writer schema (fields
// matched by id or name, unknown ones skipped, promotions), partition tuples of any type, header
// metadata, inheritance of snapshot ids, sequence numbers and row ids. Beyond crashes and unbounded
// allocation: a manifest serac reads and can write again (same format version, the header's spec)
// reads back to the same entries.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "iceberg/manifest/manifest.h"

namespace {

namespace ice = serac::iceberg;

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz oracle: %s\n%s\n", what, detail.substr(0, 4096).c_str());
  std::abort();
}

// What a format version keeps of an entry (the rest is not in its schema).
void KeepWhatTheVersionWrites(int version, ice::ManifestEntry& entry) {
  ice::DataFile& f = entry.file;
  if (version < 3) {
    f.first_row_id.reset();
    f.content_offset.reset();
    f.content_size_in_bytes.reset();
  }
  if (version == 1) {
    entry.snapshot_id = entry.snapshot_id.value_or(0);
    entry.sequence_number.reset();
    entry.file_sequence_number.reset();
    f.equality_ids.clear();
    f.referenced_data_file.reset();
  }
}

bool SameDatum(const ice::Datum& a, const ice::Datum& b) {
  if (ice::IsNaN(a) || ice::IsNaN(b)) return ice::IsNaN(a) && ice::IsNaN(b) && a.index() == b.index();
  return a == b;
}

bool SameEntry(const ice::ManifestEntry& a, const ice::ManifestEntry& b) {
  if (a.file.partition.size() != b.file.partition.size()) return false;
  for (size_t i = 0; i < a.file.partition.size(); ++i) {
    if (!SameDatum(a.file.partition[i], b.file.partition[i])) return false;
  }
  ice::ManifestEntry x = a;
  ice::ManifestEntry y = b;
  x.file.partition.clear();
  y.file.partition.clear();
  const ice::DataFile& f = x.file;
  const ice::DataFile& g = y.file;
  return x.status == y.status && x.snapshot_id == y.snapshot_id && x.sequence_number == y.sequence_number &&
         x.file_sequence_number == y.file_sequence_number && f.content == g.content &&
         f.file_path == g.file_path && f.file_format == g.file_format && f.record_count == g.record_count &&
         f.file_size_in_bytes == g.file_size_in_bytes && f.column_sizes == g.column_sizes &&
         f.value_counts == g.value_counts && f.null_value_counts == g.null_value_counts &&
         f.nan_value_counts == g.nan_value_counts && f.lower_bounds == g.lower_bounds &&
         f.upper_bounds == g.upper_bounds && f.key_metadata == g.key_metadata &&
         f.split_offsets == g.split_offsets && f.equality_ids == g.equality_ids &&
         f.sort_order_id == g.sort_order_id && f.referenced_data_file == g.referenced_data_file &&
         f.first_row_id == g.first_row_id && f.content_offset == g.content_offset &&
         f.content_size_in_bytes == g.content_size_in_bytes;
}

void CheckRewrite(const ice::ManifestContents& contents) {
  auto types = ice::ReadManifestHeaderTypes(contents);
  if (!types.ok()) return;
  ice::ManifestWriterOptions options;
  options.format_version = contents.format_version;
  options.content = contents.content;
  auto writer = ice::ManifestWriter::Make(types->schema, types->spec, options);
  if (!writer.ok()) return;
  std::vector<ice::ManifestEntry> expected;
  for (const ice::ManifestEntry& entry : contents.entries) {
    // Entries the writer refuses (a partition of another shape, a delete file in a data manifest,
    // an existing entry without sequence numbers) are what a hostile file may hold: not written.
    if (!writer->Add(entry).ok()) continue;
    expected.push_back(entry);
    KeepWhatTheVersionWrites(contents.format_version, expected.back());
  }
  auto written = writer->Finish("rewritten.avro");
  if (!written.ok()) Fail("cannot finish a manifest", written.status().message());
  auto reread = ice::ReadManifest(written->bytes, written->manifest, /*inherit=*/false);
  if (!reread.ok()) Fail("cannot read a manifest serac wrote", reread.status().message());
  if (reread->entries.size() != expected.size()) Fail("entries lost on a round trip", "");
  for (size_t i = 0; i < expected.size(); ++i) {
    if (!SameEntry(reread->entries[i], expected[i])) {
      Fail("an entry changed on a round trip", expected[i].file.file_path);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  ice::ManifestFile listed;
  listed.manifest_path = "fuzz.avro";
  listed.sequence_number = 7;
  listed.added_snapshot_id = 3;
  listed.first_row_id = 100;
  (void)ice::ReadManifest(input, listed, /*inherit=*/true);
  auto as_written = ice::ReadManifest(input, listed, /*inherit=*/false);
  if (as_written.ok()) CheckRewrite(*as_written);
  auto manifests = ice::ReadManifestList(input, "fuzz-list.avro");
  if (manifests.ok()) {
    ice::ManifestListWriterOptions options;
    options.format_version = 3;
    (void)ice::WriteManifestList(*manifests, options);
  }
  return 0;
}
