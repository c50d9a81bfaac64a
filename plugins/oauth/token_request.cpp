#include "token_request.hpp"

#include <algorithm>
#include <cctype>

#include "rendezvous/crypto.hpp"
#include "rendezvous/text.hpp"
#include "rendezvous/url.hpp"

namespace rendezvous::oauth {
namespace {

constexpr size_t kMaxJsonDepth = 16;

bool IsVsChars(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

std::string LowerTrim(std::string_view s) { return text::AsciiLower(text::Trim(s)); }

// Standard base64 (RFC 4648 §4) as HTTP Basic carries it: padding required, no other alphabet, no
// stray trailing bits -- exactly the texts that encoding the decoded bytes gives back.
std::optional<std::string> DecodeBasicToken(std::string_view token) {
  Result<std::string> decoded = crypto::Base64Decode(token);
  if (!decoded.ok() || crypto::Base64Encode(*decoded) != token) return std::nullopt;
  return std::move(decoded).value();
}

bool IsKnown(const std::vector<std::string_view>& known, std::string_view name) {
  return std::find(known.begin(), known.end(), name) != known.end();
}

// Checks one known parameter's value and stores it; "" on success, else the problem.
std::string Accept(OAuthParams& params, std::vector<std::string>& seen, const std::string& name,
                   std::string value) {
  if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
    return "parameter " + name + " is given more than once";
  }
  seen.push_back(name);
  // A malformed refresh token is an invalid one (spec §7.2): ParseTokenRequest answers it.
  const bool checked_later = name == "refresh_token";
  if (value.size() > kMaxTokenParamValueBytes && !checked_later) return "parameter " + name + " is too long";
  if (!IsVsChars(value) && !checked_later) return "parameter " + name + " contains invalid characters";
  if (!value.empty()) params.emplace(name, std::move(value));
  return "";
}

std::variant<OAuthParams, TokenError> ParseForm(std::string_view body,
                                                const std::vector<std::string_view>& known) {
  OAuthParams params;
  std::vector<std::string> seen;
  size_t count = 0;
  size_t pos = 0;
  while (pos <= body.size()) {
    size_t amp = body.find('&', pos);
    if (amp == std::string_view::npos) amp = body.size();
    std::string_view pair = body.substr(pos, amp - pos);
    pos = amp + 1;
    if (pair.empty()) continue;
    if (++count > kMaxTokenParams) {
      return TokenError::InvalidRequest("too many parameters in the request body");
    }
    const size_t eq = pair.find('=');
    std::optional<std::string> name = net::FormDecode(pair.substr(0, eq));
    std::optional<std::string> value =
        net::FormDecode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
    if (!name || !value) {
      return TokenError::InvalidRequest("malformed application/x-www-form-urlencoded body");
    }
    if (!IsKnown(known, *name)) continue;
    if (std::string problem = Accept(params, seen, *name, std::move(*value)); !problem.empty()) {
      return TokenError::InvalidRequest(problem);
    }
  }
  return params;
}

// Streams the JSON body: no document is built, depth and parameter count are bounded, duplicate
// keys are seen (a DOM parser keeps the last one silently).
class BodySax {
 public:
  using json = nlohmann::json;

  explicit BodySax(const std::vector<std::string_view>& known) : known_(known) {}

  bool null() { return Scalar("null"); }
  bool boolean(bool) { return Scalar("a boolean"); }
  bool number_integer(json::number_integer_t) { return Scalar("a number"); }
  bool number_unsigned(json::number_unsigned_t) { return Scalar("a number"); }
  bool number_float(json::number_float_t, const json::string_t&) { return Scalar("a number"); }
  bool binary(json::binary_t&) { return Scalar("binary"); }
  bool string(json::string_t& value) {
    if (depth_ == 0) return Fail("request body must be a JSON object");
    if (depth_ == 1 && current_known_) {
      std::string problem = Accept(params_, seen_, current_key_, std::move(value));
      if (!problem.empty()) return Fail(problem);
    }
    return true;
  }
  bool start_object(std::size_t) { return Open(); }
  bool end_object() { return Close(); }
  bool start_array(std::size_t) {
    if (depth_ == 0) return Fail("request body must be a JSON object");
    return Open();
  }
  bool end_array() { return Close(); }
  bool key(json::string_t& name) {
    if (depth_ != 1) return true;
    if (++count_ > kMaxTokenParams) return Fail("too many parameters in the request body");
    current_known_ = IsKnown(known_, name);
    current_key_ = current_known_ ? name : std::string();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    if (error_.empty()) error_ = "request body is not valid JSON";
    return false;
  }

  const std::string& error() const { return error_; }
  OAuthParams& params() { return params_; }

 private:
  bool Scalar(std::string_view what) {
    if (depth_ == 0) return Fail("request body must be a JSON object");
    if (depth_ == 1 && current_known_) {
      return Fail("parameter " + current_key_ + " must be a string, not " + std::string(what));
    }
    return true;
  }
  bool Open() {
    if (depth_ == 1 && current_known_) {
      return Fail("parameter " + current_key_ + " must be a string");
    }
    if (++depth_ > kMaxJsonDepth) return Fail("request body is nested too deeply");
    return true;
  }
  bool Close() {
    --depth_;
    return true;
  }
  bool Fail(std::string message) {
    error_ = std::move(message);
    return false;
  }

  const std::vector<std::string_view>& known_;
  OAuthParams params_;
  std::vector<std::string> seen_;
  size_t depth_ = 0;
  size_t count_ = 0;
  bool current_known_ = false;
  std::string current_key_;
  std::string error_;
};

std::variant<OAuthParams, TokenError> ParseJson(std::string_view body,
                                                const std::vector<std::string_view>& known) {
  BodySax sax(known);
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(body.begin(), body.end(), &sax);
  } catch (const nlohmann::json::exception&) {
    // The SAX parser reports errors through parse_error; this only guards a library surprise.
    ok = false;
  }
  if (!ok) {
    return TokenError::InvalidRequest(sax.error().empty() ? "request body is not valid JSON"
                                                          : sax.error());
  }
  return std::move(sax.params());
}

std::string Take(OAuthParams& params, std::string_view name) {
  auto it = params.find(name);
  if (it == params.end()) return "";
  return std::move(it->second);
}

}  // namespace

TokenError TokenError::InvalidRequest(std::string description) {
  return {400, "invalid_request", std::move(description)};
}
TokenError TokenError::ClientIdRequired() {
  return {400, "invalid_request", "client_id is required"};
}
TokenError TokenError::UnsupportedGrantType() {
  return {400, "invalid_request", "grant_type must be 'authorization_code' or 'refresh_token'"};
}
TokenError TokenError::CodeInvalidOrExpired() {
  return {400, "invalid_grant", "code_invalid_or_expired"};
}
TokenError TokenError::InvalidRefreshToken() {
  return {400, "invalid_grant", "invalid_refresh_token"};
}
TokenError TokenError::RefreshTokenRevoked() {
  return {400, "invalid_grant", "refresh_token_revoked"};
}
TokenError TokenError::InvalidClientCredentials() {
  return {401, "invalid_client", "invalid_client_credentials"};
}
TokenError TokenError::ClientNotFound() { return {401, "invalid_client", "client_not_found"}; }
TokenError TokenError::InvalidGrant(std::string description) {
  return {400, "invalid_grant", std::move(description)};
}
TokenError TokenError::UnauthorizedClient(std::string description) {
  return {400, "unauthorized_client", std::move(description)};
}
TokenError TokenError::BodyTooLarge() {
  return {413, "invalid_request", "request body is too large"};
}

bool operator==(const TokenError& a, const TokenError& b) {
  return a.http_status == b.http_status && a.error == b.error &&
         a.error_description == b.error_description;
}

nlohmann::json ToJson(const TokenError& error) {
  return {{"error", error.error}, {"error_description", error.error_description}};
}

std::variant<OAuthParams, TokenError> ParseOAuthBody(std::string_view content_type,
                                                     std::string_view body,
                                                     const std::vector<std::string_view>& known) {
  if (body.size() > kMaxTokenBodyBytes) return TokenError::BodyTooLarge();
  const std::string media = LowerTrim(content_type.substr(0, content_type.find(';')));
  if (media == "application/x-www-form-urlencoded" || (media.empty() && body.empty())) {
    return ParseForm(body, known);
  }
  if (media == "application/json") return ParseJson(body, known);
  return TokenError::InvalidRequest(
      "Content-Type must be application/x-www-form-urlencoded or application/json");
}

std::variant<std::monostate, BasicCredentials, TokenError> ParseBasicCredentials(
    std::optional<std::string_view> authorization) {
  if (!authorization) return std::monostate{};
  std::string_view header = *authorization;
  while (!header.empty() && (header.front() == ' ' || header.front() == '\t')) header.remove_prefix(1);
  const size_t space = header.find(' ');
  if (LowerTrim(header.substr(0, space)) != "basic") return std::monostate{};
  const TokenError malformed = TokenError::InvalidRequest("malformed HTTP Basic client credentials");
  if (space == std::string_view::npos || header.size() > kMaxAuthorizationHeaderBytes) {
    return malformed;
  }
  std::string_view token = header.substr(space + 1);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
  std::optional<std::string> decoded = DecodeBasicToken(token);
  if (!decoded) return malformed;
  const size_t colon = decoded->find(':');
  if (colon == std::string::npos) return malformed;
  std::optional<std::string> id = net::FormDecode(std::string_view(*decoded).substr(0, colon));
  std::optional<std::string> secret = net::FormDecode(std::string_view(*decoded).substr(colon + 1));
  if (!id || !secret || id->empty() || id->size() > kMaxTokenParamValueBytes ||
      secret->size() > kMaxTokenParamValueBytes || !IsVsChars(*id) || !IsVsChars(*secret)) {
    return malformed;
  }
  return BasicCredentials{std::move(*id), std::move(*secret)};
}

std::variant<ClientAuthentication, TokenError> TakeClientAuthentication(
    OAuthParams& params, std::optional<std::string_view> authorization) {
  ClientAuthentication out;
  out.client_id = Take(params, "client_id");
  out.client_secret = Take(params, "client_secret");
  auto basic = ParseBasicCredentials(authorization);
  if (auto* error = std::get_if<TokenError>(&basic)) return std::move(*error);
  if (auto* creds = std::get_if<BasicCredentials>(&basic)) {
    if (!out.client_secret.empty()) {
      return TokenError::InvalidRequest(
          "use one client authentication method: HTTP Basic or client_secret in the body");
    }
    if (!out.client_id.empty() && out.client_id != creds->client_id) {
      return TokenError::InvalidRequest("client_id in the body differs from the HTTP Basic credentials");
    }
    out.client_id = std::move(creds->client_id);
    out.client_secret = std::move(creds->client_secret);
    out.basic_auth = true;
  }
  if (out.client_id.empty()) return TokenError::ClientIdRequired();
  return out;
}

TokenRequestResult ParseTokenRequest(std::string_view content_type, std::string_view body,
                                     std::optional<std::string_view> authorization) {
  static const std::vector<std::string_view> kKnown = {
      "grant_type", "client_id",     "client_secret", "code",
      "redirect_uri", "code_verifier", "refresh_token"};
  auto parsed = ParseOAuthBody(content_type, body, kKnown);
  if (auto* error = std::get_if<TokenError>(&parsed)) return std::move(*error);
  OAuthParams& params = std::get<OAuthParams>(parsed);

  TokenRequest req;
  req.grant_type = Take(params, "grant_type");
  req.code = Take(params, "code");
  req.redirect_uri = Take(params, "redirect_uri");
  req.code_verifier = Take(params, "code_verifier");
  req.refresh_token = Take(params, "refresh_token");

  auto client = TakeClientAuthentication(params, authorization);
  if (auto* error = std::get_if<TokenError>(&client)) return std::move(*error);
  auto& credentials = std::get<ClientAuthentication>(client);
  req.client_id = std::move(credentials.client_id);
  req.client_secret = std::move(credentials.client_secret);
  req.basic_auth = credentials.basic_auth;

  if (req.grant_type == kGrantAuthorizationCode) {
    if (req.code.empty()) return TokenError::InvalidRequest("code is required");
    if (req.redirect_uri.empty()) return TokenError::InvalidRequest("redirect_uri is required");
  } else if (req.grant_type == kGrantRefreshToken) {
    if (req.refresh_token.empty()) return TokenError::InvalidRequest("refresh_token is required");
    if (req.refresh_token.size() > kMaxTokenParamValueBytes || !IsVsChars(req.refresh_token)) {
      return TokenError::InvalidRefreshToken();
    }
  } else {
    return TokenError::UnsupportedGrantType();
  }
  return req;
}

}  // namespace rendezvous::oauth
