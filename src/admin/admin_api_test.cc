#include "admin/admin_api.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace serac::admin {
namespace {

AdminRoute MustMatch(std::string_view method, std::string_view path) {
  Result<AdminRoute> route = MatchAdminRoute(method, path);
  EXPECT_TRUE(route.ok()) << method << " " << path << ": " << route.status().ToString();
  return route.ok() ? *route : AdminRoute();
}

ErrorCode MatchError(std::string_view method, std::string_view path) {
  Result<AdminRoute> route = MatchAdminRoute(method, path);
  EXPECT_FALSE(route.ok()) << method << " " << path;
  return route.status().code();
}

TEST(AdminRouteTest, UserRoutes) {
  EXPECT_EQ(MustMatch("POST", "/_serac/admin/v1/users").operation, AdminOperation::kCreateUser);
  EXPECT_EQ(MustMatch("GET", "/_serac/admin/v1/users").operation, AdminOperation::kListUsers);
  AdminRoute get = MustMatch("GET", "/_serac/admin/v1/users/alice");
  EXPECT_EQ(get.operation, AdminOperation::kGetUser);
  EXPECT_EQ(get.user, "alice");
  EXPECT_EQ(MustMatch("PATCH", "/_serac/admin/v1/users/alice").operation, AdminOperation::kUpdateUser);
  EXPECT_EQ(MustMatch("DELETE", "/_serac/admin/v1/users/alice").operation, AdminOperation::kDeleteUser);
  AdminRoute simulate = MustMatch("POST", "/_serac/admin/v1/users/alice/simulate");
  EXPECT_EQ(simulate.operation, AdminOperation::kSimulatePolicy);
  EXPECT_EQ(simulate.user, "alice");
  EXPECT_EQ(MatchError("GET", "/_serac/admin/v1/users/alice/simulate"), ErrorCode::kNotImplemented);
}

TEST(AdminRouteTest, AccessKeyRoutes) {
  AdminRoute create = MustMatch("POST", "/_serac/admin/v1/users/bob/access-keys");
  EXPECT_EQ(create.operation, AdminOperation::kCreateAccessKey);
  EXPECT_EQ(create.user, "bob");
  EXPECT_EQ(MustMatch("GET", "/_serac/admin/v1/users/bob/access-keys").operation,
            AdminOperation::kListUserAccessKeys);
  EXPECT_EQ(MustMatch("GET", "/_serac/admin/v1/access-keys").operation, AdminOperation::kListAllAccessKeys);
  AdminRoute update = MustMatch("PATCH", "/_serac/admin/v1/access-keys/AKID.1");
  EXPECT_EQ(update.operation, AdminOperation::kUpdateAccessKey);
  EXPECT_EQ(update.access_key, "AKID.1");
  EXPECT_EQ(MustMatch("DELETE", "/_serac/admin/v1/access-keys/AKID").operation,
            AdminOperation::kDeleteAccessKey);
}

TEST(AdminRouteTest, PolicyRoutesAndAttachment) {
  EXPECT_EQ(MustMatch("GET", "/_serac/admin/v1/policies").operation, AdminOperation::kListPolicies);
  AdminRoute put = MustMatch("PUT", "/_serac/admin/v1/policies/team-rw");
  EXPECT_EQ(put.operation, AdminOperation::kPutPolicy);
  EXPECT_EQ(put.policy, "team-rw");
  EXPECT_EQ(MustMatch("GET", "/_serac/admin/v1/policies/p").operation, AdminOperation::kGetPolicy);
  EXPECT_EQ(MustMatch("DELETE", "/_serac/admin/v1/policies/p").operation, AdminOperation::kDeletePolicy);
  AdminRoute attach = MustMatch("PUT", "/_serac/admin/v1/users/carol/policies/readonly");
  EXPECT_EQ(attach.operation, AdminOperation::kAttachPolicy);
  EXPECT_EQ(attach.user, "carol");
  EXPECT_EQ(attach.policy, "readonly");
  EXPECT_EQ(MustMatch("DELETE", "/_serac/admin/v1/users/carol/policies/readonly").operation,
            AdminOperation::kDetachPolicy);
}

TEST(AdminRouteTest, SegmentsArePercentDecoded) {
  AdminRoute route = MustMatch("GET", "/_serac/admin/v1/users/a%40b%2Bc%3D");
  EXPECT_EQ(route.user, "a@b+c=");
  // A decoded slash would let one segment pose as two.
  EXPECT_EQ(MatchError("GET", "/_serac/admin/v1/users/a%2Fb"), ErrorCode::kInvalidArgument);
  EXPECT_EQ(MatchError("GET", "/_serac/admin/v1/users/a%zz"), ErrorCode::kInvalidArgument);
}

TEST(AdminRouteTest, UnknownPathsAreNotFound) {
  for (const char* path :
       {"/_serac/admin", "/_serac/admin/v1", "/_serac/admin/v1/", "/_serac/admin/v2/users",
        "/_serac/admin/v1/groups", "/_serac/admin/v1/users/", "/_serac/admin/v1//users",
        "/_serac/admin/v1/users/a/b", "/_serac/admin/v1/users/a/policies", "/_serac/admin/v1/access-keys/k/x",
        "/_serac/admin/v1/policies/p/q", "/_serac/admin/v1users"}) {
    EXPECT_EQ(MatchError("GET", path), ErrorCode::kNotFound) << path;
  }
}

TEST(AdminRouteTest, KnownPathsWithOtherMethodsAreNotAllowed) {
  EXPECT_EQ(MatchError("PUT", "/_serac/admin/v1/users"), ErrorCode::kNotImplemented);
  EXPECT_EQ(MatchError("POST", "/_serac/admin/v1/users/alice"), ErrorCode::kNotImplemented);
  EXPECT_EQ(MatchError("GET", "/_serac/admin/v1/access-keys/k"), ErrorCode::kNotImplemented);
  EXPECT_EQ(MatchError("POST", "/_serac/admin/v1/policies/p"), ErrorCode::kNotImplemented);
  EXPECT_EQ(MatchError("GET", "/_serac/admin/v1/users/a/policies/p"), ErrorCode::kNotImplemented);
  EXPECT_EQ(RouteError(ErrorCode::kNotImplemented).http_status, 405);
  EXPECT_EQ(RouteError(ErrorCode::kNotImplemented).code, "MethodNotAllowed");
  EXPECT_EQ(RouteError(ErrorCode::kNotFound).http_status, 404);
  EXPECT_EQ(RouteError(ErrorCode::kNotFound).code, "NoSuchRoute");
  EXPECT_EQ(RouteError(ErrorCode::kInvalidArgument).http_status, 400);
}

TEST(AdminErrorTest, StatusesFollowTheErrorKind) {
  struct Case {
    ErrorCode code;
    int status;
    const char* name;
  };
  for (const Case& c :
       {Case{ErrorCode::kInvalidArgument, 400, "InvalidArgument"},
        Case{ErrorCode::kNotFound, 404, "NotFound"}, Case{ErrorCode::kAlreadyExists, 409, "AlreadyExists"},
        Case{ErrorCode::kConflict, 409, "Conflict"}, Case{ErrorCode::kAccessDenied, 403, "AccessDenied"},
        Case{ErrorCode::kUnknownAccessKey, 403, "InvalidAccessKeyId"},
        Case{ErrorCode::kSignatureMismatch, 403, "SignatureDoesNotMatch"},
        Case{ErrorCode::kClockSkewed, 403, "RequestTimeTooSkewed"},
        Case{ErrorCode::kAuthorizationMalformed, 400, "AuthorizationHeaderMalformed"},
        Case{ErrorCode::kPayloadHashMismatch, 400, "XAmzContentSHA256Mismatch"},
        Case{ErrorCode::kUnavailable, 503, "ServiceUnavailable"},
        Case{ErrorCode::kIoError, 500, "InternalError"}, Case{ErrorCode::kInternal, 500, "InternalError"}}) {
    AdminError error = AdminErrorFor(c.code);
    EXPECT_EQ(error.http_status, c.status) << ErrorCodeName(c.code);
    EXPECT_EQ(error.code, c.name) << ErrorCodeName(c.code);
  }
}

TEST(AdminErrorTest, ErrorBodyIsJsonWithCodeAndMessage) {
  std::string text = AdminErrorJson("NotFound", "no user \"x\"\n");
  nlohmann::json body = nlohmann::json::parse(text);
  EXPECT_EQ(body["error"]["code"], "NotFound");
  EXPECT_EQ(body["error"]["message"], "no user \"x\"\n");
  EXPECT_EQ(body.size(), 1u);
}

TEST(AdminRouteTest, OperationNamesAreDistinct) {
  EXPECT_EQ(AdminOperationName(AdminOperation::kCreateUser), "AdminCreateUser");
  EXPECT_NE(AdminOperationName(AdminOperation::kListUserAccessKeys),
            AdminOperationName(AdminOperation::kListAllAccessKeys));
}

}  // namespace
}  // namespace serac::admin
