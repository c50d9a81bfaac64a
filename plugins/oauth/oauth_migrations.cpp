#include "oauth_migrations.hpp"

#include <string>

namespace rendezvous::oauth {
namespace {

constexpr const char* kClientsMigration = R"sql(CREATE TABLE IF NOT EXISTS oauth_clients (
  id BIGINT NOT NULL AUTO_INCREMENT,
  client_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  owner_id BIGINT NOT NULL,
  kind VARCHAR(16) CHARACTER SET ascii NOT NULL,
  state VARCHAR(16) CHARACTER SET ascii NOT NULL,
  review_reason TEXT NOT NULL,
  name VARCHAR(100) NOT NULL,
  logo VARCHAR(2048) NOT NULL,
  website VARCHAR(2048) NOT NULL,
  purpose TEXT NOT NULL,
  redirect_uris TEXT NOT NULL,
  scopes TEXT NOT NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_oauth_clients_client_id (client_id),
  KEY ix_oauth_clients_owner (owner_id),
  KEY ix_oauth_clients_state (state)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS oauth_client_secrets (
  id BIGINT NOT NULL AUTO_INCREMENT,
  client_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  secret_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  hint VARCHAR(8) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at DATETIME(3) NOT NULL,
  revoked_at DATETIME(3) NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_oauth_client_secrets_hash (secret_hash),
  KEY ix_oauth_client_secrets_client (client_id, revoked_at),
  CONSTRAINT fk_oauth_client_secrets_client FOREIGN KEY (client_id)
    REFERENCES oauth_clients (client_id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci)sql";

// The refresh grant's write half as one round trip (DESIGN §5 rotation): marks the presented
// refresh token rotated -- only while it and its grant are live, the same guard as the UPDATE in
// RefreshGrant::Refresh's transaction -- and inserts the new access and refresh token, in one
// transaction inside the server. A token that is no longer rotatable signals SQLSTATE 45000
// (MySQL error 1644) and nothing is written; the caller then decides under locks. The hash
// parameters are ascii compared as ascii_bin, as the columns are: a parameter in the database's
// default character set would turn the primary-key look-up into a scan of every token.
//
// The one definition of the procedure. Migration 3 created it without the DPoP key binding
// (`dpop` false: that text is what databases recorded, so it must not change); migration 5
// re-creates it with the binding, which every database, fresh or migrated before, ends with.
std::string RotateProcedure(bool dpop) {
  const std::string jkt_params = dpop ? ",\n    IN p_access_jkt VARCHAR(43) CHARACTER SET ascii, IN "
                                        "p_refresh_jkt VARCHAR(43) CHARACTER SET ascii"
                                      : "";
  const std::string jkt_column = dpop ? ", dpop_jkt" : "";
  const auto jkt_value = [&](const char* param) { return dpop ? std::string(", ") + param : std::string(); };
  return R"sql(DROP PROCEDURE IF EXISTS oauth_rotate_refresh_token;
CREATE PROCEDURE oauth_rotate_refresh_token(IN p_old_hash CHAR(64) CHARACTER SET ascii, IN p_grant_id BIGINT,
    IN p_access_hash CHAR(64) CHARACTER SET ascii, IN p_refresh_hash CHAR(64) CHARACTER SET ascii,
    IN p_access_ttl INT, IN p_refresh_ttl INT)sql" +
         jkt_params + R"sql()
MODIFIES SQL DATA
BEGIN
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  UPDATE oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id
     SET r.rotated_at = UTC_TIMESTAMP(3)
   WHERE r.token_hash = p_old_hash COLLATE ascii_bin AND r.grant_id = p_grant_id AND r.rotated_at IS NULL
     AND r.revoked_at IS NULL AND r.expires_at > UTC_TIMESTAMP(3) AND g.revoked_at IS NULL;
  IF ROW_COUNT() <> 1 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refresh token is not rotatable';
  END IF;
  INSERT INTO oauth_access_tokens (token_hash, grant_id, created_at, expires_at)sql" +
         jkt_column + R"sql()
    VALUES (p_access_hash, p_grant_id, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL p_access_ttl SECOND)sql" +
         jkt_value("p_access_jkt") + R"sql();
  INSERT INTO oauth_refresh_tokens (token_hash, grant_id, created_at, expires_at)sql" +
         jkt_column + R"sql()
    VALUES (p_refresh_hash, p_grant_id, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL p_refresh_ttl SECOND)sql" +
         jkt_value("p_refresh_jkt") + R"sql();
  COMMIT;
END;
)sql";
}

constexpr const char* kTokensMigration = R"sql(CREATE TABLE IF NOT EXISTS oauth_grants (
  id BIGINT NOT NULL AUTO_INCREMENT,
  client_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  user_id BIGINT NOT NULL,
  scopes TEXT NOT NULL,
  all_scopes TINYINT(1) NOT NULL DEFAULT 0,
  kind VARCHAR(16) CHARACTER SET ascii NOT NULL,
  created_at DATETIME(3) NOT NULL,
  revoked_at DATETIME(3) NULL,
  PRIMARY KEY (id),
  KEY ix_oauth_grants_client_user (client_id, user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS oauth_codes (
  code_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  client_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  user_id BIGINT NOT NULL,
  redirect_uri VARCHAR(2048) NOT NULL,
  scopes TEXT NOT NULL,
  all_scopes TINYINT(1) NOT NULL DEFAULT 0,
  code_challenge VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
  created_at DATETIME(3) NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  used_at DATETIME(3) NULL,
  grant_id BIGINT NULL,
  PRIMARY KEY (code_hash),
  KEY ix_oauth_codes_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS oauth_access_tokens (
  token_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  grant_id BIGINT NOT NULL,
  created_at DATETIME(3) NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  revoked_at DATETIME(3) NULL,
  PRIMARY KEY (token_hash),
  KEY ix_oauth_access_tokens_grant (grant_id),
  KEY ix_oauth_access_tokens_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
CREATE TABLE IF NOT EXISTS oauth_refresh_tokens (
  token_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  grant_id BIGINT NOT NULL,
  created_at DATETIME(3) NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  rotated_at DATETIME(3) NULL,
  revoked_at DATETIME(3) NULL,
  PRIMARY KEY (token_hash),
  KEY ix_oauth_refresh_tokens_grant (grant_id),
  KEY ix_oauth_refresh_tokens_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci)sql";

// Pushed authorization requests (RFC 9126; pushed_requests.hpp): the SHA-256 of the request_uri's
// random part, the client, the authorization parameters as pushed (JSON object text) and the
// expiry; a row is deleted when the authorization page consumes it, or by the purger once expired.
// The client's require_par refuses its plain authorization requests.
constexpr const char* kPushedRequestsMigration = R"sql(CREATE TABLE IF NOT EXISTS oauth_pushed_requests (
  uri_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  client_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  params MEDIUMTEXT NOT NULL,
  created_at DATETIME(3) NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  PRIMARY KEY (uri_hash),
  KEY ix_oauth_pushed_requests_client (client_id, expires_at),
  KEY ix_oauth_pushed_requests_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
ALTER TABLE oauth_clients ADD COLUMN IF NOT EXISTS require_par TINYINT(1) NOT NULL DEFAULT 0)sql";

// Pushed requests counted per client and client address (plugins.oauth.par_pending_per_address):
// the address the push came from, as the server derived it (server.trusted_proxies). Rows written
// before this migration carry '' and expire within par_ttl.
constexpr const char* kPushedAddressMigration = R"sql(ALTER TABLE oauth_pushed_requests
  ADD COLUMN IF NOT EXISTS client_address VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT ''
    AFTER client_id,
  ADD KEY IF NOT EXISTS ix_oauth_pushed_requests_address (client_id, client_address, expires_at))sql";

// DPoP (RFC 9449): the key thumbprint a token is bound to ('' = a plain bearer token) and the jti
// of every accepted proof while it could be replayed (DpopVerifier); the migration then re-creates
// the rotation procedure carrying the new tokens' binding (RotateProcedure(true)).
constexpr const char* kDpopMigration = R"sql(ALTER TABLE oauth_access_tokens
  ADD COLUMN dpop_jkt VARCHAR(43) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '';
ALTER TABLE oauth_refresh_tokens
  ADD COLUMN dpop_jkt VARCHAR(43) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '';
CREATE TABLE IF NOT EXISTS oauth_dpop_jtis (
  jti_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  PRIMARY KEY (jti_hash),
  KEY ix_oauth_dpop_jtis_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci)sql";

// Managed users (DESIGN §10): the client that created each one, for good. A row outlives its user
// (deleted_at set when the client deletes the user) so that the events of the user's bookings
// still find their client after the user is gone. Filled from the managed grants made before it
// (the first grant of each user names the client that created it). Deleting a user revokes its
// grants by user, hence the index.
constexpr const char* kManagedUsersMigration = R"sql(CREATE TABLE IF NOT EXISTS oauth_managed_users (
  user_id BIGINT NOT NULL,
  client_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  locale VARCHAR(8) CHARACTER SET ascii COLLATE ascii_bin NULL,
  created_at DATETIME(3) NOT NULL,
  deleted_at DATETIME(3) NULL,
  PRIMARY KEY (user_id),
  KEY ix_oauth_managed_users_client (client_id, deleted_at, user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
ALTER TABLE oauth_grants ADD KEY IF NOT EXISTS ix_oauth_grants_user (user_id);
INSERT IGNORE INTO oauth_managed_users (user_id, client_id, created_at)
  SELECT g.user_id, g.client_id, g.created_at FROM oauth_grants g
   WHERE g.kind = 'managed'
     AND g.id = (SELECT MIN(f.id) FROM oauth_grants f WHERE f.user_id = g.user_id AND f.kind = 'managed'))sql";

// The revocation log (revocation_log.hpp): one row per revocation of access tokens, written in
// the revoking transaction, read by every instance's feed by created_at (the last seconds) and
// deleted by the purger after a few minutes. kind: token (subject = the token's hash), grant
// (its id), user (its id) or client (its client_id).
constexpr const char* kRevocationsMigration = R"sql(CREATE TABLE IF NOT EXISTS oauth_revocations (
  id BIGINT NOT NULL AUTO_INCREMENT,
  created_at DATETIME(3) NOT NULL,
  kind VARCHAR(8) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  subject VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  PRIMARY KEY (id),
  KEY ix_oauth_revocations_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci)sql";

}  // namespace

std::vector<Migration> OAuthMigrations() {
  return {
      Migration{1, "oauth_clients, oauth_client_secrets", kClientsMigration},
      Migration{2, "oauth_grants, oauth_codes, oauth_access_tokens, oauth_refresh_tokens", kTokensMigration},
      Migration{3, "procedure oauth_rotate_refresh_token", RotateProcedure(false)},
      Migration{4, "oauth_pushed_requests, oauth_clients.require_par", kPushedRequestsMigration},
      Migration{5, "DPoP: token key binding, oauth_dpop_jtis",
                std::string(kDpopMigration) + ";\n" + RotateProcedure(true)},
      Migration{6, "oauth_pushed_requests.client_address", kPushedAddressMigration},
      Migration{7, "oauth_managed_users", kManagedUsersMigration},
      Migration{8, "oauth_revocations", kRevocationsMigration}};
}

}  // namespace rendezvous::oauth
