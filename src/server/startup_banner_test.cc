#include "server/startup_banner.h"

#include <gtest/gtest.h>

namespace serac::server {
namespace {

BannerInput Input(CredentialSource source) {
  BannerInput input;
  input.endpoints = {"http://127.0.0.1:9000", "http://10.0.0.5:9000"};
  input.region = "us-east-1";
  input.data_dir = "/srv/serac data";
  input.root.credentials.access_key = "AKEXAMPLE";
  input.root.credentials.secret_key = "SeCrEtExAmPlE1234567";
  input.root.source = source;
  input.root.file_path = "/srv/serac data/root-credentials";
  return input;
}

TEST(StartupBannerTest, ShowsGeneratedSecretOnce) {
  std::string banner = FormatStartupBanner(Input(CredentialSource::kGenerated));
  EXPECT_NE(banner.find("Endpoint:    http://127.0.0.1:9000\n"), std::string::npos);
  EXPECT_NE(banner.find("Endpoint:    http://10.0.0.5:9000\n"), std::string::npos);
  EXPECT_NE(banner.find("Access key:  AKEXAMPLE"), std::string::npos);
  EXPECT_NE(banner.find("export AWS_ACCESS_KEY_ID=AKEXAMPLE AWS_SECRET_ACCESS_KEY=SeCrEtExAmPlE1234567 "
                        "AWS_DEFAULT_REGION=us-east-1 AWS_ENDPOINT_URL=http://127.0.0.1:9000\n"),
            std::string::npos);
  EXPECT_NE(banner.find("aws --endpoint-url http://127.0.0.1:9000 s3 ls\n"), std::string::npos);
  EXPECT_NE(banner.find("Catalog:     http://127.0.0.1:9000/_iceberg "), std::string::npos);
  EXPECT_NE(banner.find("serac config --engine spark --warehouse my-warehouse"), std::string::npos);
  EXPECT_NE(banner.find("it will not be shown again"), std::string::npos);
}

TEST(StartupBannerTest, NeverShowsSecretFromEnvironmentOrFile) {
  std::string from_env = FormatStartupBanner(Input(CredentialSource::kEnvironment));
  EXPECT_EQ(from_env.find("SeCrEtExAmPlE1234567"), std::string::npos);
  EXPECT_NE(from_env.find("AWS_SECRET_ACCESS_KEY=\"$SERAC_ROOT_PASSWORD\""), std::string::npos);

  std::string from_file = FormatStartupBanner(Input(CredentialSource::kFile));
  EXPECT_EQ(from_file.find("SeCrEtExAmPlE1234567"), std::string::npos);
  EXPECT_NE(from_file.find("AWS_SECRET_ACCESS_KEY=\"$(sed -n 's/^secret_key=//p' "
                           "'/srv/serac data/root-credentials')\""),
            std::string::npos);
}

TEST(StartupBannerTest, WarnsWithoutFsync) {
  BannerInput input = Input(CredentialSource::kFile);
  EXPECT_EQ(FormatStartupBanner(input).find("--no-fsync"), std::string::npos);
  input.fsync = false;
  EXPECT_NE(FormatStartupBanner(input).find("--no-fsync"), std::string::npos);
}

TEST(StartupBannerTest, NamesTheServerKeySourceAndFingerprintOnly) {
  BannerInput input = Input(CredentialSource::kFile);
  EXPECT_EQ(FormatStartupBanner(input).find("Server key:"), std::string::npos);
  input.server_key_source = "/home/op/.config/serac/server.key";
  input.server_key_fingerprint = "0123456789abcdef";
  EXPECT_NE(FormatStartupBanner(input).find(
                "  Server key:  /home/op/.config/serac/server.key (fingerprint 0123456789abcdef)\n"),
            std::string::npos);
}

TEST(ShellQuoteTest, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(ShellQuote("AKIA123"), "AKIA123");
  EXPECT_EQ(ShellQuote("/a/b-c_d.e:1"), "/a/b-c_d.e:1");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's$x"), "'it'\\''s$x'");
}

}  // namespace
}  // namespace serac::server
