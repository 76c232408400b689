#include "server/listen_address.h"

#include <gtest/gtest.h>

namespace serac::server {
namespace {

TEST(ParseListenAddressTest, AcceptsTheDocumentedForms) {
  Result<ListenAddress> all = ParseListenAddress(":9000");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->host, "0.0.0.0");
  EXPECT_EQ(all->port, 9000);

  Result<ListenAddress> loopback = ParseListenAddress("127.0.0.1:0");
  ASSERT_TRUE(loopback.ok());
  EXPECT_EQ(loopback->host, "127.0.0.1");
  EXPECT_EQ(loopback->port, 0);

  Result<ListenAddress> v6 = ParseListenAddress("[::1]:65535");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 65535);
}

TEST(ParseListenAddressTest, RejectsMalformedAddresses) {
  for (const char* bad :
       {"9000", "host:", "host:port", ":65536", ":-1", "::1:9000", ":99999999999999999999"}) {
    Result<ListenAddress> parsed = ParseListenAddress(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument) << bad;
  }
}

TEST(EndpointUrlTest, ShowsLoopbackForWildcardsAndBracketsIpv6) {
  EXPECT_EQ(EndpointUrl("0.0.0.0", 9000, false), "http://127.0.0.1:9000");
  EXPECT_EQ(EndpointUrl("::", 9000, true), "https://127.0.0.1:9000");
  EXPECT_EQ(EndpointUrl("10.1.2.3", 80, false), "http://10.1.2.3:80");
  EXPECT_EQ(EndpointUrl("::1", 9443, true), "https://[::1]:9443");
}

}  // namespace
}  // namespace serac::server
