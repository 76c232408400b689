// `serac config --engine ...`: ready-to-paste configuration for the query engines and tools that
// talk to serac. Secrets are never printed: the output refers to $SERAC_SECRET_KEY (in the form
// the target reads environment variables), and to $SERAC_ACCESS_KEY when no access key is known.
// Thread-safe: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace serac::client {

struct EngineConfigInput {
  std::string endpoint;    // "http://host:9000", maybe with a trailing slash
  std::string access_key;  // empty = refer to $SERAC_ACCESS_KEY
  std::string region = "us-east-1";
  std::string warehouse;  // empty = a placeholder the user replaces
};

// "spark", "pyiceberg", "trino", "duckdb", "clickhouse", "aws".
const std::vector<std::string>& EngineNames();

// The configuration text for `engine`. kInvalidArgument for an unknown engine or a bad endpoint.
Result<std::string> RenderEngineConfig(std::string_view engine, const EngineConfigInput& input);

}  // namespace serac::client
