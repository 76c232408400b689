// Fuzzes IAM policy documents: parsing and validation, the stored form (Parse(json()) must give
// the same policy), and evaluation of a few requests against what parsed.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "auth/policy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto policy = serac::auth::Policy::Parse(text);
  if (!policy.ok()) return 0;
  auto again = serac::auth::Policy::Parse(policy->json());
  if (!again.ok() || again->json() != policy->json()) {
    std::fprintf(stderr, "fuzz oracle: a stored policy does not parse to itself\n%s\n",
                 policy->json().c_str());
    std::abort();
  }
  serac::auth::ConditionContext context;
  context.Add(serac::auth::condition_keys::kUsername, "alice");
  context.Add(serac::auth::condition_keys::kS3Prefix, "home/");
  context.Add(serac::auth::condition_keys::kSourceIp, "10.1.2.3");
  context.Add(serac::auth::condition_keys::kTablesNamespace, "db.inner");
  const std::string object_arn = serac::auth::S3ObjectArn("bucket", "home/alice/file.txt");
  const std::string table_arn = serac::auth::TablesTableArn("lake", "6f0b6c8c-0000-4000-8000-000000000001");
  (void)policy->Evaluate({"s3:GetObject", object_arn, &context});
  (void)policy->Evaluate({"s3tables:UpdateTable", table_arn, &context});
  (void)policy->Evaluate({"s3:ListBucket", serac::auth::S3BucketArn("bucket"), nullptr});
  return 0;
}
