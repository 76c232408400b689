// Unpredictable identifiers and secrets from the OS CSPRNG. Thread-safe.
#pragma once

#include <string>

namespace serac {

std::string RandomBytes(size_t count);
std::string RandomHexId(size_t bytes = 16);     // 32 hex chars by default: blob ids, upload ids
std::string RandomRequestId();                  // 16 upper-case hex chars, x-amz-request-id
std::string RandomAlphanumeric(size_t length);  // access keys and secrets
std::string RandomUuid();                       // RFC 4122 v4, lower-case

}  // namespace serac
