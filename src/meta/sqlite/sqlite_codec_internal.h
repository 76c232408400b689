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
std::string EncodePieces(const std::vector<StoredPiece>& pieces);
Result<std::vector<StoredPiece>> DecodePieces(const std::string& text);

}  // namespace serac::meta::sqlite
