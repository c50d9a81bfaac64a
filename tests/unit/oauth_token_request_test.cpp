#include "token_request.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rendezvous/crypto.hpp"

namespace rendezvous::oauth {
namespace {

using ::testing::HasSubstr;

constexpr char kForm[] = "application/x-www-form-urlencoded";
constexpr char kJson[] = "application/json";

// RFC 7617 Basic with the RFC 6749 §2.3.1 form-encoding of id and secret.
std::string Basic(std::string_view user_pass_encoded) {
  return "Basic " + crypto::Base64Encode(user_pass_encoded);
}

TokenRequest Ok(std::string_view type, std::string_view body,
                std::optional<std::string_view> auth = std::nullopt) {
  TokenRequestResult r = ParseTokenRequest(type, body, auth);
  if (auto* e = std::get_if<TokenError>(&r)) {
    ADD_FAILURE() << "unexpected error " << e->http_status << " " << e->error << ": "
                  << e->error_description;
    return {};
  }
  return std::get<TokenRequest>(r);
}

TokenError Err(std::string_view type, std::string_view body,
               std::optional<std::string_view> auth = std::nullopt) {
  TokenRequestResult r = ParseTokenRequest(type, body, auth);
  if (auto* e = std::get_if<TokenError>(&r)) return *e;
  ADD_FAILURE() << "expected an error for body " << body;
  return {};
}

// ---- the §7.2 table ----

TEST(OAuthTokenErrors, Section7_2Rows) {
  EXPECT_EQ(TokenError::CodeInvalidOrExpired(),
            (TokenError{400, "invalid_grant", "code_invalid_or_expired"}));
  EXPECT_EQ(TokenError::InvalidRefreshToken(),
            (TokenError{400, "invalid_grant", "invalid_refresh_token"}));
  EXPECT_EQ(TokenError::InvalidClientCredentials(),
            (TokenError{401, "invalid_client", "invalid_client_credentials"}));
  EXPECT_EQ(TokenError::ClientNotFound(), (TokenError{401, "invalid_client", "client_not_found"}));
  EXPECT_EQ(TokenError::ClientIdRequired(),
            (TokenError{400, "invalid_request", "client_id is required"}));
  EXPECT_EQ(TokenError::UnsupportedGrantType(),
            (TokenError{400, "invalid_request",
                        "grant_type must be 'authorization_code' or 'refresh_token'"}));
  EXPECT_EQ(TokenError::RefreshTokenRevoked(),
            (TokenError{400, "invalid_grant", "refresh_token_revoked"}));
  EXPECT_EQ(TokenError::UnauthorizedClient("x").error, "unauthorized_client");
  EXPECT_EQ(TokenError::InvalidGrant("x").http_status, 400);
}

TEST(OAuthTokenErrors, ToJson) {
  EXPECT_EQ(ToJson(TokenError::ClientNotFound()),
            (nlohmann::json{{"error", "invalid_client"}, {"error_description", "client_not_found"}}));
  EXPECT_EQ(ToJson(TokenError::ClientIdRequired()).dump(),
            R"({"error":"invalid_request","error_description":"client_id is required"})");
}

// ---- both encodings, both grants ----

TEST(OAuthTokenRequest, FormAuthorizationCodeConfidential) {
  TokenRequest r = Ok(kForm,
                      "grant_type=authorization_code&client_id=abc&client_secret=s3cr%2Bt"
                      "&code=c0de&redirect_uri=https%3A%2F%2Fapp.example%2Fcb%3Fa%3D1");
  EXPECT_EQ(r.grant_type, "authorization_code");
  EXPECT_EQ(r.client_id, "abc");
  EXPECT_EQ(r.client_secret, "s3cr+t");
  EXPECT_EQ(r.code, "c0de");
  EXPECT_EQ(r.redirect_uri, "https://app.example/cb?a=1");
  EXPECT_FALSE(r.basic_auth);
}

TEST(OAuthTokenRequest, JsonAuthorizationCodePublic) {
  TokenRequest r = Ok(kJson, R"({"grant_type":"authorization_code","client_id":"abc",
      "code":"c0de","redirect_uri":"https://app.example/cb","code_verifier":"v-v"})");
  EXPECT_EQ(r.client_id, "abc");
  EXPECT_EQ(r.code_verifier, "v-v");
  EXPECT_TRUE(r.client_secret.empty());
}

TEST(OAuthTokenRequest, RefreshBothEncodings) {
  TokenRequest f = Ok(kForm, "grant_type=refresh_token&client_id=abc&refresh_token=rt+1");
  EXPECT_EQ(f.refresh_token, "rt 1");
  TokenRequest j =
      Ok(kJson, R"({"grant_type":"refresh_token","client_id":"abc","refresh_token":"rt"})");
  EXPECT_EQ(j.grant_type, "refresh_token");
  EXPECT_EQ(j.refresh_token, "rt");
}

TEST(OAuthTokenRequest, ContentTypeParametersAndCase) {
  Ok("application/x-www-form-urlencoded; charset=UTF-8",
     "grant_type=refresh_token&client_id=a&refresh_token=r");
  Ok("Application/JSON;charset=utf-8",
     R"({"grant_type":"refresh_token","client_id":"a","refresh_token":"r"})");
  TokenError e = Err("text/plain", "grant_type=refresh_token&client_id=a&refresh_token=r");
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.error, "invalid_request");
  EXPECT_THAT(e.error_description, HasSubstr("Content-Type"));
  EXPECT_THAT(Err("", "grant_type=x").error_description, HasSubstr("Content-Type"));
  // No content type and no body: simply nothing given.
  EXPECT_EQ(Err("", ""), TokenError::ClientIdRequired());
}

// ---- §7.2 request errors, in both encodings ----

struct BodyPair {
  const char* form;
  const char* json;
};

void ExpectBoth(const BodyPair& bodies, const TokenError& expected) {
  EXPECT_EQ(Err(kForm, bodies.form), expected) << bodies.form;
  EXPECT_EQ(Err(kJson, bodies.json), expected) << bodies.json;
}

TEST(OAuthTokenRequest, ClientIdRequired) {
  ExpectBoth({"grant_type=authorization_code&code=c&redirect_uri=u",
              R"({"grant_type":"authorization_code","code":"c","redirect_uri":"u"})"},
             TokenError::ClientIdRequired());
  ExpectBoth({"client_id=&grant_type=refresh_token&refresh_token=r",
              R"({"client_id":"","grant_type":"refresh_token","refresh_token":"r"})"},
             TokenError::ClientIdRequired());
}

TEST(OAuthTokenRequest, ClientIdCheckedBeforeGrantType) {
  ExpectBoth({"", "{}"}, TokenError::ClientIdRequired());
  ExpectBoth({"grant_type=password", R"({"grant_type":"password"})"},
             TokenError::ClientIdRequired());
}

TEST(OAuthTokenRequest, GrantTypeNeitherValue) {
  ExpectBoth({"client_id=a", R"({"client_id":"a"})"}, TokenError::UnsupportedGrantType());
  ExpectBoth({"client_id=a&grant_type=password", R"({"client_id":"a","grant_type":"password"})"},
             TokenError::UnsupportedGrantType());
  ExpectBoth({"client_id=a&grant_type=client_credentials",
              R"({"client_id":"a","grant_type":"client_credentials"})"},
             TokenError::UnsupportedGrantType());
  ExpectBoth({"client_id=a&grant_type=Authorization_Code",
              R"({"client_id":"a","grant_type":"Authorization_Code"})"},
             TokenError::UnsupportedGrantType());
}

TEST(OAuthTokenRequest, GrantParametersRequired) {
  ExpectBoth({"client_id=a&grant_type=authorization_code&redirect_uri=u",
              R"({"client_id":"a","grant_type":"authorization_code","redirect_uri":"u"})"},
             TokenError::InvalidRequest("code is required"));
  ExpectBoth({"client_id=a&grant_type=authorization_code&code=c",
              R"({"client_id":"a","grant_type":"authorization_code","code":"c"})"},
             TokenError::InvalidRequest("redirect_uri is required"));
  ExpectBoth({"client_id=a&grant_type=refresh_token",
              R"({"client_id":"a","grant_type":"refresh_token"})"},
             TokenError::InvalidRequest("refresh_token is required"));
  // A refresh request does not need code or redirect_uri, and ignores scope.
  Ok(kForm, "client_id=a&grant_type=refresh_token&refresh_token=r&scope=BOOKING_READ");
}

TEST(OAuthTokenRequest, UnknownParametersIgnored) {
  TokenRequest r = Ok(kForm,
                      "client_id=a&grant_type=refresh_token&refresh_token=r&resource=x&resource=y"
                      "&foo&=bar&weird%00name=1");
  EXPECT_EQ(r.client_id, "a");
  TokenRequest j = Ok(kJson, R"({"client_id":"a","grant_type":"refresh_token","refresh_token":"r",
      "extra":{"nested":[1,2,{"x":null}]},"n":5,"b":true,"z":null,"extra":"again"})");
  EXPECT_EQ(j.refresh_token, "r");
}

// ---- malformed bodies ----

TEST(OAuthTokenRequest, DuplicateKnownParameter) {
  TokenError f = Err(kForm, "client_id=a&grant_type=refresh_token&refresh_token=r&client_id=b");
  EXPECT_EQ(f.error, "invalid_request");
  EXPECT_EQ(f.error_description, "parameter client_id is given more than once");
  TokenError j =
      Err(kJson, R"({"client_id":"a","grant_type":"refresh_token","refresh_token":"r","refresh_token":"s"})");
  EXPECT_EQ(j.error_description, "parameter refresh_token is given more than once");
  // Even when the first one was empty.
  EXPECT_EQ(Err(kForm, "code=&code=x&client_id=a").error_description,
            "parameter code is given more than once");
}

TEST(OAuthTokenRequest, JsonValuesMustBeStrings) {
  for (const char* body : {R"({"client_id":5})", R"({"client_id":null})",
                           R"({"client_id":true})", R"({"client_id":["a"]})",
                           R"({"client_id":{"a":"b"}})", R"({"grant_type":1.5,"client_id":"a"})"}) {
    TokenError e = Err(kJson, body);
    EXPECT_EQ(e.http_status, 400) << body;
    EXPECT_EQ(e.error, "invalid_request") << body;
    EXPECT_THAT(e.error_description, HasSubstr("must be a string")) << body;
  }
}

TEST(OAuthTokenRequest, MalformedJson) {
  for (const char* body : {"", "{", "nope", R"({"client_id":"a",})", R"(["client_id","a"])",
                           R"("client_id")", "5", "null", R"({"client_id":"a"} x)",
                           R"({"client_id":"a"}{})", "{\"client_id\":\"\xff\"}"}) {
    TokenError e = Err(kJson, body);
    EXPECT_EQ(e.http_status, 400) << body;
    EXPECT_EQ(e.error, "invalid_request") << body;
  }
  EXPECT_THAT(Err(kJson, "[1]").error_description, HasSubstr("JSON object"));
  EXPECT_THAT(Err(kJson, "{").error_description, HasSubstr("not valid JSON"));
}

TEST(OAuthTokenRequest, MalformedForm) {
  for (const char* body : {"client_id=%", "client_id=%4", "client_id=%zz&grant_type=x",
                           "cl%ient_id=a"}) {
    TokenError e = Err(kForm, body);
    EXPECT_EQ(e.error, "invalid_request") << body;
    EXPECT_THAT(e.error_description, HasSubstr("malformed")) << body;
  }
  // Empty segments are tolerated.
  Ok(kForm, "&&client_id=a&&grant_type=refresh_token&refresh_token=r&");
}

TEST(OAuthTokenRequest, ValuesMustBePrintableAscii) {
  EXPECT_EQ(Err(kForm, "client_id=a%0Ab&grant_type=refresh_token&refresh_token=r").error_description,
            "parameter client_id contains invalid characters");
  EXPECT_EQ(Err(kForm, "client_id=a%00&grant_type=refresh_token&refresh_token=r").error_description,
            "parameter client_id contains invalid characters");
  EXPECT_EQ(Err(kJson, R"({"client_id":"\u00e9"})").error_description,
            "parameter client_id contains invalid characters");
}

// ---- limits ----

TEST(OAuthTokenRequest, BodyLimit) {
  std::string body = "client_id=a&grant_type=refresh_token&refresh_token=r&pad=";
  body += std::string(kMaxTokenBodyBytes - body.size(), 'x');
  Ok(kForm, body);
  body.push_back('x');
  TokenError e = Err(kForm, body);
  EXPECT_EQ(e.http_status, 413);
  EXPECT_EQ(e.error, "invalid_request");
}

TEST(OAuthTokenRequest, ValueLimit) {
  const std::string ok(kMaxTokenParamValueBytes, 'r');
  Ok(kForm, "client_id=a&grant_type=refresh_token&refresh_token=" + ok);
  // A refresh token too long or with control characters is malformed: invalid_grant (spec §7.2).
  TokenError e = Err(kForm, "client_id=a&grant_type=refresh_token&refresh_token=" + ok + "r");
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.error, "invalid_grant");
  EXPECT_EQ(e.error_description, "invalid_refresh_token");
  TokenError ctl = Err(kForm, "client_id=a&grant_type=refresh_token&refresh_token=ab%01cd");
  EXPECT_EQ(ctl.error, "invalid_grant");
  EXPECT_EQ(ctl.error_description, "invalid_refresh_token");
  TokenError js = Err(kJson, R"({"client_id":"a","grant_type":"refresh_token","refresh_token":")" + ok + R"(r"})");
  EXPECT_EQ(js.error_description, "invalid_refresh_token");
  TokenError other = Err(kForm, "client_id=a&grant_type=authorization_code&redirect_uri=x&code=" + ok + "r");
  EXPECT_EQ(other.error, "invalid_request");
  TokenError j = Err(kJson, R"({"code":")" + ok + R"(r"})");
  EXPECT_EQ(j.error_description, "parameter code is too long");
  // Unknown parameters are not stored, so only the body limit applies to them.
  Ok(kForm, "client_id=a&grant_type=refresh_token&refresh_token=r&x=" + ok + ok);
}

TEST(OAuthTokenRequest, ParameterCountLimit) {
  std::string form = "client_id=a&grant_type=refresh_token&refresh_token=r";
  std::string json = R"({"client_id":"a","grant_type":"refresh_token","refresh_token":"r")";
  for (size_t i = 3; i < kMaxTokenParams; ++i) {
    form += "&p" + std::to_string(i) + "=1";
    json += ",\"p" + std::to_string(i) + "\":1";
  }
  Ok(kForm, form);
  Ok(kJson, json + "}");
  EXPECT_THAT(Err(kForm, form + "&one=more").error_description, HasSubstr("too many parameters"));
  EXPECT_THAT(Err(kJson, json + R"(,"one":"more"})").error_description,
              HasSubstr("too many parameters"));
}

TEST(OAuthTokenRequest, JsonDepthLimit) {
  std::string deep = R"({"client_id":"a","grant_type":"refresh_token","refresh_token":"r","x":)";
  std::string nested = std::string(15, '[') + std::string(15, ']');
  Ok(kJson, deep + nested + "}");
  std::string too_deep(30000, '[');
  EXPECT_THAT(Err(kJson, deep + too_deep).error_description, HasSubstr("nested too deeply"));
}

// ---- HTTP Basic client authentication (RFC 6749 §2.3.1) ----

TEST(OAuthTokenRequest, BasicCredentials) {
  TokenRequest r = Ok(kForm, "grant_type=refresh_token&refresh_token=r", Basic("abc:s%3Acr%2Bt"));
  EXPECT_TRUE(r.basic_auth);
  EXPECT_EQ(r.client_id, "abc");
  EXPECT_EQ(r.client_secret, "s:cr+t");
  // The same client_id in the body as well is fine.
  TokenRequest same =
      Ok(kJson, R"({"client_id":"abc","grant_type":"refresh_token","refresh_token":"r"})",
         Basic("abc:secret"));
  EXPECT_EQ(same.client_secret, "secret");
  // Scheme is case-insensitive.
  std::string lower = Basic("abc:secret");
  lower.replace(0, 5, "bAsIc");
  EXPECT_TRUE(Ok(kForm, "grant_type=refresh_token&refresh_token=r", lower).basic_auth);
}

TEST(OAuthTokenRequest, BasicClientIdDiffersFromBody) {
  TokenError e = Err(kForm, "client_id=other&grant_type=refresh_token&refresh_token=r",
                     Basic("abc:secret"));
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.error, "invalid_request");
  EXPECT_THAT(e.error_description, HasSubstr("differs"));
}

TEST(OAuthTokenRequest, TwoAuthenticationMethods) {
  TokenError e = Err(kForm, "client_secret=x&grant_type=refresh_token&refresh_token=r",
                     Basic("abc:secret"));
  EXPECT_EQ(e.error, "invalid_request");
  EXPECT_THAT(e.error_description, HasSubstr("one client authentication method"));
}

TEST(OAuthTokenRequest, MalformedBasic) {
  for (std::string header : {std::string("Basic"), std::string("Basic "), std::string("Basic !!!!"),
                             std::string("Basic YWJj"),  // "abc": no colon
                             std::string("Basic YWJjOnM"),      // "abc:s" without its padding
                             std::string("Basic YWJjOnN="),     // stray trailing bits
                             std::string("Basic YWJjOnM=YWJj"), // padding in the middle
                             std::string("Basic YW-jOnM="),     // the url alphabet is not Basic's
                             Basic(":secret"),           // empty client_id
                             Basic("a%zz:secret"), Basic("a\n:secret"),
                             "Basic " + std::string(kMaxAuthorizationHeaderBytes, 'A')}) {
    TokenError e = Err(kForm, "grant_type=refresh_token&refresh_token=r", header);
    EXPECT_EQ(e.http_status, 400) << header;
    EXPECT_EQ(e.error, "invalid_request") << header;
    EXPECT_THAT(e.error_description, HasSubstr("HTTP Basic")) << header;
  }
}

TEST(OAuthTokenRequest, OtherAuthorizationSchemesIgnored) {
  TokenRequest r =
      Ok(kForm, "client_id=a&grant_type=refresh_token&refresh_token=r", "Bearer abc.def");
  EXPECT_FALSE(r.basic_auth);
  EXPECT_EQ(r.client_id, "a");
  EXPECT_EQ(Err(kForm, "grant_type=refresh_token&refresh_token=r", "Bearer x"),
            TokenError::ClientIdRequired());
}

TEST(OAuthTokenRequest, BasicWithEmptySecretIsAllowed) {
  TokenRequest r = Ok(kForm, "grant_type=refresh_token&refresh_token=r", Basic("abc:"));
  EXPECT_EQ(r.client_id, "abc");
  EXPECT_EQ(r.client_secret, "");
  EXPECT_TRUE(r.basic_auth);
}

// ---- building blocks ----

TEST(OAuthBody, KnownNamesOnly) {
  auto parsed = ParseOAuthBody(kForm, "token=t&token_type_hint=refresh_token&x=y", {"token",
                                                                                     "token_type_hint"});
  ASSERT_TRUE(std::holds_alternative<OAuthParams>(parsed));
  const OAuthParams& p = std::get<OAuthParams>(parsed);
  EXPECT_EQ(p.size(), 2u);
  EXPECT_EQ(p.at("token"), "t");
  EXPECT_EQ(p.count("x"), 0u);
}

}  // namespace
}  // namespace rendezvous::oauth
