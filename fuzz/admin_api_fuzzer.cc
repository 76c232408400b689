// Fuzzes the admin API under /_serac/admin/v1 (users, access keys, policies and their
// attachment): routes, path segments and JSON bodies, served by the real AdminApi over an
// IdentityService on a SQLite MetaStore in a temporary directory, signed with root's key.
// Error answers must be the admin API's JSON error; a client request is never a server error.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "admin/admin_api.h"
#include "fuzz_checks.h"
#include "fuzz_request.h"
#include "fuzz_stores.h"
#include "http/http_test_fakes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace serac;
  static fuzz::FuzzStores stores("admin");
  static admin::AdminApi api(stores.identity.get());
  fuzz::ParsedInput input;
  if (!fuzz::ParseInput(data, size, input)) return -1;
  if (input.request.path.rfind(admin::kAdminPathPrefix, 0) != 0) return -1;
  fuzz::SignAsRoot(input, "s3", auth::UriEncoding::kS3);
  http::testing::StringBody body(input.body);
  http::testing::RecordingResponse response;
  http::RequestOutcome outcome;
  api.Handle(input.request, body, response, outcome);
  fuzz::CheckAnswered(response);
  if (response.status() >= 400 && !response.body.empty()) {
    auto parsed = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_object() || !parsed["error"].is_object() || !parsed["error"]["code"].is_string()) {
      fuzz::Fail("an admin error answer that is not {\"error\":{\"code\",\"message\"}}", response);
    }
  }
  return 0;
}
