// Response builders (DESIGN §4 envelopes) and Request's body/header helpers.
#include <gtest/gtest.h>

#include "http/envelope.hpp"
#include "rendezvous/http.hpp"

namespace rendezvous {
namespace {

Json Parse(const Response& r) { return Json::parse(r.body); }

TEST(HttpEnvelopeTest, SuccessShapes) {
  auto r = Response::Success({{"id", 1}}, 201);
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(r.body, R"({"status":"success","data":{"id":1}})");

  auto page = Response::SuccessWith({{"data", Json::array({1})}, {"pagination", {{"totalItems", 1}}}});
  EXPECT_EQ(Parse(page), Json::parse(R"({"status":"success","data":[1],"pagination":{"totalItems":1}})"));
  EXPECT_EQ(page.body.rfind(R"({"status":"success",)", 0), 0u);
}

TEST(HttpEnvelopeTest, ErrorShapesAndDefaultCodes) {
  auto e = Response::Error(404, "", "no such booking");
  EXPECT_EQ(e.body, R"({"status":"error","error":{"code":"not_found","message":"no such booking"}})");
  auto d = Response::Error(400, "", "bad", Json{{"field", "start"}});
  EXPECT_EQ(Parse(d)["error"]["details"]["field"], "start");
  auto custom = Response::Error(403, "insufficient_scope", "needs X");
  EXPECT_EQ(Parse(custom)["error"]["code"], "insufficient_scope");

  const std::pair<int, const char*> codes[] = {
      {400, "validation_error"}, {401, "unauthorized"},   {403, "forbidden"},
      {404, "not_found"},        {405, "method_not_allowed"}, {409, "conflict"},
      {413, "payload_too_large"}, {415, "unsupported_media_type"}, {429, "rate_limited"},
      {500, "internal_error"},   {503, "service_unavailable"}};
  for (auto [status, code] : codes) EXPECT_EQ(Parse(Response::Error(status, "", "m"))["error"]["code"], code) << status;
}

TEST(HttpEnvelopeTest, FromStatusMapsErrorCodes) {
  EXPECT_EQ(Response::FromStatus(Status(ErrorCode::kConflict, "already cancelled")).status, 409);
  EXPECT_EQ(Response::FromStatus(Status(ErrorCode::kUnavailable, "db")).status, 503);
  EXPECT_EQ(Response::FromStatus(Status(ErrorCode::kTooLarge, "big")).status, 413);
  auto ok = Response::FromStatus(Status::Ok());
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(Parse(ok)["status"], "success");
}

TEST(HttpEnvelopeTest, OtherBuilders) {
  auto redirect = Response::Redirect("/auth/login?next=%2F");
  EXPECT_EQ(redirect.status, 302);
  EXPECT_TRUE(redirect.body.empty());
  ASSERT_EQ(redirect.headers.size(), 1u);
  EXPECT_EQ(redirect.headers[0], (std::pair<std::string, std::string>{"Location", "/auth/login?next=%2F"}));
  EXPECT_EQ(Response::Html(200, "<p>").content_type, "text/html; charset=utf-8");
  EXPECT_EQ(Response::Text(200, "x").content_type, "text/plain; charset=utf-8");
  EXPECT_EQ(Response::RawJson(400, {{"error", "invalid_grant"}}).body, R"({"error":"invalid_grant"})");
  // Invalid UTF-8 in data does not throw.
  EXPECT_NO_THROW(Response::Success(std::string("\xff\xfe")));
  EXPECT_EQ(MethodName(Method::kPatch), "PATCH");
}

Request WithBody(std::string content_type, std::string body) {
  Request r;
  if (!content_type.empty()) r.headers["content-type"] = std::move(content_type);
  r.body = std::move(body);
  return r;
}

TEST(HttpRequestTest, JsonBody) {
  EXPECT_TRUE(WithBody("application/json", R"({"a":1})").JsonBody().ok());
  EXPECT_TRUE(WithBody("Application/JSON; charset=UTF-8", R"({"a":1})").JsonBody().ok());
  EXPECT_EQ(WithBody("text/plain", "{}").JsonBody().status().code(), ErrorCode::kUnsupportedMediaType);
  EXPECT_EQ(WithBody("", R"({"a":1})").JsonBody().status().code(), ErrorCode::kUnsupportedMediaType);
  EXPECT_EQ(WithBody("application/json", R"({"a":)").JsonBody().status().code(), ErrorCode::kInvalid);
  EXPECT_EQ(WithBody("application/json", "[1,2]").JsonBody().status().code(), ErrorCode::kInvalid);
  EXPECT_EQ(WithBody("application/json", "\"\xff\"").JsonBody().status().code(), ErrorCode::kInvalid);
  EXPECT_EQ(*WithBody("", "").JsonBody(), Json::object());
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(WithBody("application/json", "{\"a\":" + deep + "}").JsonBody().status().code(), ErrorCode::kInvalid);
  std::string ok_depth = "{\"a\":" + std::string(60, '[') + std::string(60, ']') + "}";
  EXPECT_TRUE(WithBody("application/json", ok_depth).JsonBody().ok());
  // Brackets inside strings do not count.
  EXPECT_TRUE(WithBody("application/json", "{\"a\":\"" + std::string(1000, '[') + "\"}").JsonBody().ok());
}

TEST(HttpRequestTest, FormBody) {
  auto form = WithBody("application/x-www-form-urlencoded; charset=utf-8", "a=1+2&b=%2F&a=ignored").FormBody();
  ASSERT_TRUE(form.ok());
  EXPECT_EQ(form->at("a"), "1 2");
  EXPECT_EQ(form->at("b"), "/");
  EXPECT_EQ(WithBody("application/json", "{}").FormBody().status().code(), ErrorCode::kUnsupportedMediaType);
  EXPECT_EQ(WithBody("application/x-www-form-urlencoded", "a=%zz").FormBody().status().code(), ErrorCode::kInvalid);
}

TEST(HttpRequestTest, HeadersQueryCookies) {
  Request r;
  r.headers["x-thing"] = "v";
  r.headers["cookie"] = "a=1; sid=\"abc\";  theme=dark";
  r.query.emplace("q", "1");
  EXPECT_EQ(r.Header("X-Thing"), "v");
  EXPECT_FALSE(r.Header("X-Other"));
  EXPECT_EQ(r.Query("q"), "1");
  EXPECT_FALSE(r.Query("z"));
  EXPECT_EQ(r.Cookie("sid"), "abc");
  EXPECT_EQ(r.Cookie("theme"), "dark");
  EXPECT_FALSE(r.Cookie("id"));
  EXPECT_EQ(r.ContentType(), "");
  r.headers["content-type"] = " Text/HTML ; charset=utf-8";
  EXPECT_EQ(r.ContentType(), "text/html");
}

}  // namespace
}  // namespace rendezvous
