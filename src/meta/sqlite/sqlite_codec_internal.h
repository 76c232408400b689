// Encoding of the composite fields of records (headers, segments, pieces) into single TEXT columns.
// The encodings are JSON so that the rows stay readable with the sqlite3 shell.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "meta/meta_store.h"

namespace serac::meta::sqlite {

// "" when every field is empty, so rows of plain objects carry no header text at all.
std::string EncodeHeaders(const ObjectHeaders& headers);
Result<ObjectHeaders> DecodeHeaders(const std::string& text);

std::string EncodeSegments(const std::vector<Segment>& segments);
Result<std::vector<Segment>> DecodeSegments(const std::string& text);

// A stored piece of an object written in pieces: its size and, for a shared piece, the row id of
// its bytes in shared_texts (0 for an inline piece).
struct StoredPiece {
  uint64_t size = 0;
  int64_t shared_id = 0;
};
// How the inline pieces' bytes, joined, are kept in the object's inline_data row.
enum class InlineEncoding { kPlain, kZstd };
struct StoredPieces {
  std::vector<StoredPiece> pieces;
  InlineEncoding inline_encoding = InlineEncoding::kPlain;
};
// A list of [size] or [size, shared id]; with compressed inline bytes, the object
// {"inline":"zstd","pieces":[...]}.
std::string EncodePieces(const StoredPieces& stored);
Result<StoredPieces> DecodePieces(const std::string& text);

}  // namespace serac::meta::sqlite
