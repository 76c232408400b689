// Encoding of the composite fields of records (headers, segments) into single TEXT columns.
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

}  // namespace serac::meta::sqlite
