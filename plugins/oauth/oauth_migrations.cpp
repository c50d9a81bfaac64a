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

// The refresh and code grants each in one round trip (DESIGN §5): one CALL reads the client and
// authenticates it, decides on the token or code under its row lock, writes and commits, and
// answers one row: (outcome, grant id, the grant's scopes, all_scopes, the client's scopes, the
// grant it revoked). The outcomes name the token endpoint's answers (RefreshGrant, CodeExchange
// map them); nothing is written unless the outcome says so.
//
// Client authentication as client_auth.hpp's AuthenticateClient decides it, on the SHA-256 hex of
// the secret sent (NULL: none sent; '': one that cannot match). The secret hashes are compared
// blinded: SHA-256 of each side prefixed with a random value of the request, so the time an
// unequal comparison takes tells nothing about the stored hash. p_authenticate false: the caller
// authenticated the client already (a missing client is then an unusable token or code).
//
// Every revocation of a grant by a grant request (refresh token reuse, a replayed code) goes
// through oauth_revoke_grant, in the request's transaction: what else a revocation writes
// belongs there. It writes the revocation log row (oauth_revocations, migration 8; kind 'grant',
// subject the grant id, as RecordRevocation in revocation_log.cpp) when it revoked the grant, and
// the procedure answers the grant's id so that the caller evicts it from its token cache once the
// CALL (which commits) returned. The serving account needs no EXECUTE on it (the procedures
// calling it run with their definer's rights).
//
// oauth_rotate_refresh_token (migrations 3 and 5) stays for instances of the previous version
// during a rolling upgrade.
constexpr const char* kOneRoundTripGrantsMigration = R"sql(DROP PROCEDURE IF EXISTS oauth_revoke_grant;
CREATE PROCEDURE oauth_revoke_grant(IN p_grant_id BIGINT)
MODIFIES SQL DATA
BEGIN
  UPDATE oauth_grants SET revoked_at = UTC_TIMESTAMP(3) WHERE id = p_grant_id AND revoked_at IS NULL;
  IF ROW_COUNT() = 1 THEN
    INSERT INTO oauth_revocations (created_at, kind, subject)
      VALUES (UTC_TIMESTAMP(3), 'grant', CAST(p_grant_id AS CHAR));
  END IF;
END;
DROP PROCEDURE IF EXISTS oauth_refresh_grant;
CREATE PROCEDURE oauth_refresh_grant(IN p_client_id VARCHAR(64) CHARACTER SET ascii, IN p_authenticate BOOLEAN,
    IN p_secret_hash CHAR(64) CHARACTER SET ascii, IN p_blind CHAR(64) CHARACTER SET ascii,
    IN p_old_hash CHAR(64) CHARACTER SET ascii, IN p_access_hash CHAR(64) CHARACTER SET ascii,
    IN p_refresh_hash CHAR(64) CHARACTER SET ascii, IN p_access_ttl INT, IN p_refresh_ttl INT,
    IN p_dpop_jkt VARCHAR(43) CHARACTER SET ascii)
MODIFIES SQL DATA
BEGIN
  DECLARE v_found BOOLEAN DEFAULT TRUE;
  DECLARE v_public, v_rejected, v_approved BOOLEAN;
  DECLARE v_owner BIGINT;
  DECLARE v_client_scopes TEXT;
  DECLARE v_secrets INT DEFAULT 0;
  DECLARE v_grant, v_user BIGINT;
  DECLARE v_revoked_grant BIGINT DEFAULT 0;
  DECLARE v_same_client, v_live, v_rotated, v_revoked, v_grant_revoked, v_all_scopes, v_bound, v_same_key BOOLEAN;
  DECLARE v_scopes TEXT;
  DECLARE v_outcome VARCHAR(32) CHARACTER SET ascii DEFAULT 'issued';
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = FALSE;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  SELECT c.kind = BINARY 'public', c.state = BINARY 'rejected', c.state = BINARY 'approved', c.owner_id, c.scopes
    INTO v_public, v_rejected, v_approved, v_owner, v_client_scopes
    FROM oauth_clients c WHERE c.client_id = p_client_id COLLATE ascii_bin;
  IF NOT v_found THEN
    SET v_outcome = IF(p_authenticate, 'client_not_found', 'invalid_refresh_token');
  ELSEIF p_authenticate AND v_public THEN
    IF p_secret_hash IS NOT NULL THEN SET v_outcome = 'invalid_client'; END IF;
  ELSEIF p_authenticate THEN
    IF p_secret_hash IS NOT NULL THEN
      SELECT COUNT(*) INTO v_secrets FROM oauth_client_secrets s
       WHERE s.client_id = p_client_id COLLATE ascii_bin AND s.revoked_at IS NULL
         AND SHA2(CONCAT(p_blind, s.secret_hash), 256) = SHA2(CONCAT(p_blind, p_secret_hash), 256);
    END IF;
    IF v_secrets = 0 THEN SET v_outcome = 'invalid_client'; END IF;
  END IF;
  IF v_outcome = 'issued' THEN
    START TRANSACTION;
    SELECT r.grant_id, g.client_id = p_client_id COLLATE ascii_bin, r.expires_at > UTC_TIMESTAMP(3),
           r.rotated_at IS NOT NULL, r.revoked_at IS NOT NULL, g.revoked_at IS NOT NULL, g.user_id, g.scopes,
           g.all_scopes, r.dpop_jkt <> '', r.dpop_jkt = p_dpop_jkt COLLATE ascii_bin
      INTO v_grant, v_same_client, v_live, v_rotated, v_revoked, v_grant_revoked, v_user, v_scopes,
           v_all_scopes, v_bound, v_same_key
      FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id
     WHERE r.token_hash = p_old_hash COLLATE ascii_bin FOR UPDATE;
    IF NOT v_found OR NOT v_same_client THEN
      SET v_outcome = 'invalid_refresh_token';
    ELSEIF v_rotated THEN
      IF NOT v_grant_revoked THEN
        CALL oauth_revoke_grant(v_grant);
        SET v_revoked_grant = v_grant;
      END IF;
      SET v_outcome = 'refresh_token_revoked';
    ELSEIF v_revoked OR v_grant_revoked OR NOT v_live THEN
      SET v_outcome = 'invalid_refresh_token';
    ELSEIF v_rejected THEN
      SET v_outcome = 'client_rejected';
    ELSEIF NOT v_approved AND v_user <> v_owner THEN
      SET v_outcome = 'client_pending';
    ELSEIF v_bound AND p_dpop_jkt = '' THEN
      SET v_outcome = 'dpop_proof_required';
    ELSEIF v_bound AND v_public AND NOT v_same_key THEN
      SET v_outcome = 'dpop_key_mismatch';
    ELSE
      UPDATE oauth_refresh_tokens SET rotated_at = UTC_TIMESTAMP(3) WHERE token_hash = p_old_hash COLLATE ascii_bin;
      INSERT INTO oauth_access_tokens (token_hash, grant_id, created_at, expires_at, dpop_jkt)
        VALUES (p_access_hash, v_grant, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL p_access_ttl SECOND, p_dpop_jkt);
      INSERT INTO oauth_refresh_tokens (token_hash, grant_id, created_at, expires_at, dpop_jkt)
        VALUES (p_refresh_hash, v_grant, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL p_refresh_ttl SECOND, p_dpop_jkt);
    END IF;
    COMMIT;
  END IF;
  SELECT v_outcome, v_grant, v_scopes, v_all_scopes, v_client_scopes, v_revoked_grant;
END;
DROP PROCEDURE IF EXISTS oauth_exchange_code;
CREATE PROCEDURE oauth_exchange_code(IN p_client_id VARCHAR(64) CHARACTER SET ascii, IN p_authenticate BOOLEAN,
    IN p_secret_hash CHAR(64) CHARACTER SET ascii, IN p_blind CHAR(64) CHARACTER SET ascii,
    IN p_verifier_sent BOOLEAN, IN p_code_hash CHAR(64) CHARACTER SET ascii, IN p_redirect_uri BLOB,
    IN p_challenge VARCHAR(64) CHARACTER SET ascii, IN p_access_hash CHAR(64) CHARACTER SET ascii,
    IN p_refresh_hash CHAR(64) CHARACTER SET ascii, IN p_access_ttl INT, IN p_refresh_ttl INT,
    IN p_dpop_jkt VARCHAR(43) CHARACTER SET ascii)
MODIFIES SQL DATA
BEGIN
  DECLARE v_found, v_client BOOLEAN DEFAULT TRUE;
  DECLARE v_public, v_rejected, v_approved BOOLEAN;
  DECLARE v_owner BIGINT;
  DECLARE v_client_scopes TEXT;
  DECLARE v_secrets INT DEFAULT 0;
  DECLARE v_user, v_used_grant BIGINT;
  DECLARE v_grant, v_revoked_grant BIGINT DEFAULT 0;
  DECLARE v_same_client, v_used, v_live, v_same_uri, v_challenged, v_same_challenge, v_all_scopes BOOLEAN;
  DECLARE v_scopes TEXT;
  DECLARE v_outcome VARCHAR(32) CHARACTER SET ascii DEFAULT 'issued';
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = FALSE;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  SELECT c.kind = BINARY 'public', c.state = BINARY 'rejected', c.state = BINARY 'approved', c.owner_id, c.scopes
    INTO v_public, v_rejected, v_approved, v_owner, v_client_scopes
    FROM oauth_clients c WHERE c.client_id = p_client_id COLLATE ascii_bin;
  SET v_client = v_found;
  SET v_found = TRUE;
  IF NOT v_client THEN
    IF p_authenticate THEN SET v_outcome = 'client_not_found'; END IF;
  ELSEIF p_authenticate AND v_public THEN
    IF p_secret_hash IS NOT NULL THEN
      SET v_outcome = 'invalid_client';
    ELSEIF NOT p_verifier_sent THEN
      SET v_outcome = 'code_verifier_required';
    END IF;
  ELSEIF p_authenticate THEN
    IF p_secret_hash IS NOT NULL THEN
      SELECT COUNT(*) INTO v_secrets FROM oauth_client_secrets s
       WHERE s.client_id = p_client_id COLLATE ascii_bin AND s.revoked_at IS NULL
         AND SHA2(CONCAT(p_blind, s.secret_hash), 256) = SHA2(CONCAT(p_blind, p_secret_hash), 256);
    END IF;
    IF v_secrets = 0 THEN SET v_outcome = 'invalid_client'; END IF;
  END IF;
  IF v_outcome = 'issued' AND p_code_hash IS NULL THEN
    SET v_outcome = 'code_invalid_or_expired';
  ELSEIF v_outcome = 'issued' THEN
    START TRANSACTION;
    SELECT client_id = p_client_id COLLATE ascii_bin, user_id, CAST(redirect_uri AS BINARY) = p_redirect_uri,
           scopes, all_scopes, code_challenge <> '', code_challenge = p_challenge COLLATE ascii_bin,
           used_at IS NOT NULL, COALESCE(grant_id, 0), expires_at > UTC_TIMESTAMP(3)
      INTO v_same_client, v_user, v_same_uri, v_scopes, v_all_scopes, v_challenged, v_same_challenge, v_used,
           v_used_grant, v_live
      FROM oauth_codes WHERE code_hash = p_code_hash COLLATE ascii_bin FOR UPDATE;
    IF NOT v_found OR NOT v_same_client THEN
      SET v_outcome = 'code_invalid_or_expired';
    ELSEIF v_used THEN
      IF v_used_grant <> 0 THEN
        CALL oauth_revoke_grant(v_used_grant);
        SET v_revoked_grant = v_used_grant;
      END IF;
      SET v_outcome = 'code_invalid_or_expired';
    ELSEIF NOT v_client THEN
      SET v_outcome = 'code_invalid_or_expired';
    ELSEIF v_rejected THEN
      SET v_outcome = 'client_rejected';
    ELSEIF NOT v_approved AND v_user <> v_owner THEN
      SET v_outcome = 'client_pending';
    ELSEIF NOT v_live THEN
      SET v_outcome = 'code_invalid_or_expired';
    ELSEIF NOT v_same_uri OR v_challenged <> (p_challenge <> '') OR (v_challenged AND NOT v_same_challenge) THEN
      UPDATE oauth_codes SET used_at = UTC_TIMESTAMP(3) WHERE code_hash = p_code_hash COLLATE ascii_bin;
      SET v_outcome = 'code_invalid_or_expired';
    ELSE
      INSERT INTO oauth_grants (client_id, user_id, scopes, all_scopes, kind, created_at)
        VALUES (p_client_id, v_user, v_scopes, v_all_scopes, 'oauth', UTC_TIMESTAMP(3));
      SET v_grant = LAST_INSERT_ID();
      UPDATE oauth_codes SET used_at = UTC_TIMESTAMP(3), grant_id = v_grant
       WHERE code_hash = p_code_hash COLLATE ascii_bin;
      INSERT INTO oauth_access_tokens (token_hash, grant_id, created_at, expires_at, dpop_jkt)
        VALUES (p_access_hash, v_grant, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL p_access_ttl SECOND, p_dpop_jkt);
      INSERT INTO oauth_refresh_tokens (token_hash, grant_id, created_at, expires_at, dpop_jkt)
        VALUES (p_refresh_hash, v_grant, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL p_refresh_ttl SECOND, p_dpop_jkt);
    END IF;
    COMMIT;
  END IF;
  SELECT v_outcome, v_grant, v_scopes, v_all_scopes, v_client_scopes, v_revoked_grant;
END;
)sql";

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
      Migration{8, "oauth_revocations", kRevocationsMigration},
      Migration{9, "procedures oauth_refresh_grant, oauth_exchange_code, oauth_revoke_grant",
                kOneRoundTripGrantsMigration}};
}

}  // namespace rendezvous::oauth
