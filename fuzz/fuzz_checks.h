// Oracles shared by the service fuzz targets: beyond crashes, leaks and sanitizer reports, an
// answer must be well formed, and a malformed request is never a server error.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "http/http_test_fakes.h"

namespace serac::fuzz {

[[noreturn]] inline void Fail(std::string_view what, const http::testing::RecordingResponse& response) {
  std::fprintf(stderr, "fuzz oracle: %.*s (status %d)\n%.*s\n", static_cast<int>(what.size()), what.data(),
               response.status(), static_cast<int>(std::min<size_t>(response.body.size(), 4096)),
               response.body.data());
  std::abort();
}

// Every request gets an answer; 5xx would say the server failed, and with a healthy disk nothing a
// client sends may make it fail.
inline void CheckAnswered(const http::testing::RecordingResponse& response) {
  if (!response.started()) Fail("the handler sent no response", response);
  if (response.status() < 200 || response.status() > 599) Fail("status out of range", response);
  if (response.status() >= 500 && response.status() != 501 && response.status() != 503) {
    Fail("a client request made the server fail", response);
  }
}

}  // namespace serac::fuzz
