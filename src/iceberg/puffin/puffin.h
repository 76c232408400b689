// Puffin files and the deletion vectors of format v3 (the Puffin spec and the Iceberg spec's
// "Deletion Vectors"): a DeletionVector is the set of deleted row positions of one data file, kept
// as 32-bit Roaring bitmaps keyed by the positions' high 32 bits (CRoaring) and serialised as a
// `deletion-vector-v1` blob — big-endian length, magic D1 D3 39 64, the portable 64-bit Roaring
// form, big-endian CRC-32 of magic and vector. A PuffinWriter puts blobs after the magic and the
// footer (JSON FileMetadata, its length, flags, magic) at the end; ReadPuffinFooter reads it back.
//
// Everything read is untrusted: lengths, offsets, keys and bitmaps are checked against the bytes and
// limits::kPuffin*, and bad input is kInvalidArgument saying what is wrong.
// Thread-safety: values used by one thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace serac::iceberg {

class DeletionVector {
 public:
  DeletionVector();
  DeletionVector(DeletionVector&&) noexcept;
  DeletionVector& operator=(DeletionVector&&) noexcept;
  ~DeletionVector();

  // Positions are row numbers within the data file: 0 to 2^63 - 1.
  Status Add(int64_t position);
  bool Contains(int64_t position) const;
  uint64_t cardinality() const;
  // Adds every position of `other` (a file deleted from again: the new DV holds the old one's rows).
  void Merge(const DeletionVector& other);
  std::vector<int64_t> Positions() const;  // ascending

  // The `deletion-vector-v1` blob.
  std::string Serialize() const;
  static Result<DeletionVector> Deserialize(std::string_view blob);

 private:
  struct Bitmaps;
  std::unique_ptr<Bitmaps> bitmaps_;
};

inline constexpr char kDeletionVectorBlobType[] = "deletion-vector-v1";
inline constexpr int32_t kRowPositionFieldId = 2147483645;  // `_pos`: what a DV blob's `fields` names

struct PuffinBlob {
  std::string type;
  std::vector<int32_t> fields;
  int64_t snapshot_id = -1;
  int64_t sequence_number = -1;
  int64_t offset = 0;
  int64_t length = 0;
  std::string compression_codec;  // empty: none (the only kind serac writes or reads)
  std::map<std::string, std::string> properties;
};

class PuffinWriter {
 public:
  PuffinWriter();
  // Appends a blob; `blob.offset` and `blob.length` are set from where it lands.
  const PuffinBlob& Add(PuffinBlob blob, std::string_view bytes);
  // The whole file: magic, blobs, footer. `properties` go to the footer's (created-by is set).
  std::string Finish(std::map<std::string, std::string> properties = {});
  uint64_t size() const { return file_.size(); }

 private:
  std::string file_;
  std::vector<PuffinBlob> blobs_;
};

// The blobs a Puffin file's footer lists, each checked to lie inside the file.
Result<std::vector<PuffinBlob>> ReadPuffinFooter(std::string_view file);

}  // namespace serac::iceberg
