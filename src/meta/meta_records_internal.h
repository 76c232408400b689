// What every MetaStore back end stores and checks alike: the text encodings of composite fields
// (object headers, segments, namespace paths and properties) and the rules of catalog records that
// need no database (names, property changes, maintenance records). Pure functions, shared by the
// back ends so that a row written by one reads the same in another (`serac admin migrate`).
// Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "meta/catalog_store.h"
#include "meta/meta_store.h"

namespace serac::meta {

// Object headers as one JSON object; "" when every field is empty, so rows of plain objects carry
// no header text at all.
std::string EncodeHeaders(const ObjectHeaders& headers);
Result<ObjectHeaders> DecodeHeaders(const std::string& text);

// Segments as a JSON list of [blob id, size].
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
// Stored as a JSON list of [size] or [size, shared id]; with compressed inline bytes, the object
// {"inline":"zstd","pieces":[...]}.
std::string EncodePieces(const StoredPieces& stored);
Result<StoredPieces> DecodePieces(const std::string& text);

// A write's condition against the object stored now (its ETag; null when there is none):
// kPreconditionFailed naming the header that failed.
Status CheckWriteCondition(const std::string* current_etag, const WriteCondition& condition);
// kInternal unless the record holds its bytes one way: inline, in segments, or in pieces that add
// up to its size and inline bytes (shared ones named by a 32-byte digest).
Status ValidateObject(const ObjectRecord& object);

// The stored code of a kind (0 table, 1 view) and its name for messages.
int64_t EntityKindCode(EntityKind kind);
const char* EntityKindName(EntityKind kind);

// A namespace's levels joined with 0x1F; "" for the empty list (the parent of top-level ones).
std::string EncodeNamespacePath(const NamespaceLevels& levels);
NamespaceLevels DecodeNamespacePath(const std::string& path);
// kInvalidArgument unless there is at least one level and every level is non-empty and 0x1F-free.
Status ValidateNamespaceLevels(const NamespaceLevels& levels);

// Namespace properties as one JSON object of strings.
std::string EncodeNamespaceProperties(const std::map<std::string, std::string>& properties);
Result<std::map<std::string, std::string>> DecodeNamespaceProperties(const std::string& text);

// "a.b.name" for messages; levels may themselves hold dots, so this is for humans only.
std::string DisplayName(const NamespaceLevels& levels, const std::string& name);
// kInvalidArgument for bad levels or an empty name.
Status ValidateEntity(const EntityRecord& entity);
// Two swaps of one entity in one commit would make "expected" ambiguous: kInvalidArgument.
Status RejectDuplicateSwaps(const std::vector<MetadataSwap>& swaps);
// Applies a properties change to `properties` and reports it; fails if a key is both set and removed.
Result<NamespacePropertiesReport> ApplyPropertiesChange(std::map<std::string, std::string>& properties,
                                                        const NamespacePropertiesChange& change);
Status ValidateMaintenanceSetting(const MaintenanceSetting& setting);
Status ValidateMaintenanceJob(const MaintenanceJobRecord& job);

}  // namespace serac::meta
