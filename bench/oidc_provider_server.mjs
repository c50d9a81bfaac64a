// The reference of the token benchmarks (`BENCH_SCENARIOS=oidc_provider bench/run.sh`): node
// oidc-provider 9 keeping everything in memory (MapAdapter below: oidc-provider's own quick-start
// memory adapter is an LRU of 1,000 entries, which a benchmark's tokens overflow within a second,
// evicting the grants and tokens still in use) and refresh token rotation on, serving the token,
// introspection and userinfo endpoints to one confidential client (client_secret_post), DPoP
// enabled.
//   node bench/oidc_provider_server.mjs PORT CLIENT_SECRET GRANTS TOKENS_JSON
// Before it listens it makes GRANTS grants of each kind below, writes their tokens to TOKENS_JSON
// ({"refresh": [...], "openid_refresh": [...], "access": [...]}) and then prints "listening":
//   refresh        refresh tokens of grants without `openid` (a refresh issues no ID token, as ours)
//   openid_refresh refresh tokens of `openid` grants (their access tokens are good at /me)
//   access         access tokens of `openid` grants (for /me and introspection)
import { writeFileSync } from 'node:fs';

import Provider from 'oidc-provider';

// Every model in one Map, expiring on read; a grant's tokens indexed for its revocation.
const entries = new Map();
const grantMembers = new Map();
const uids = new Map();
class MapAdapter {
  constructor(name) {
    this.name = name;
  }

  key(id) {
    return `${this.name}:${id}`;
  }

  async upsert(id, payload, expiresIn) {
    const key = this.key(id);
    entries.set(key, { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : Infinity });
    if (payload.grantId) {
      if (!grantMembers.has(payload.grantId)) grantMembers.set(payload.grantId, new Set());
      grantMembers.get(payload.grantId).add(key);
    }
    if (payload.uid) uids.set(payload.uid, id);
  }

  async find(id) {
    const key = this.key(id);
    const entry = entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      entries.delete(key);
      return undefined;
    }
    return entry.payload;
  }

  async findByUid(uid) {
    return uids.has(uid) ? this.find(uids.get(uid)) : undefined;
  }

  async findByUserCode() {
    return undefined;
  }

  async consume(id) {
    const entry = entries.get(this.key(id));
    if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
  }

  async destroy(id) {
    entries.delete(this.key(id));
  }

  async revokeByGrantId(grantId) {
    for (const key of grantMembers.get(grantId) ?? []) entries.delete(key);
    grantMembers.delete(grantId);
  }
}

const [port, secret, grantCount, tokensFile] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const clientId = 'bench';

const provider = new Provider(issuer, {
  adapter: MapAdapter,
  clients: [{
    client_id: clientId,
    client_secret: secret,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: ['https://bench.example.com/cb'],
    token_endpoint_auth_method: 'client_secret_post',
  }],
  findAccount: async (ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
  features: {
    devInteractions: { enabled: false },
    dPoP: { enabled: true },
    introspection: { enabled: true, allowedPolicy: async () => true },
    userinfo: { enabled: true },
  },
  rotateRefreshToken: true,
  scopes: ['openid', 'offline_access'],
  ttl: { AccessToken: 1800, RefreshToken: 2592000, Grant: 2592000 },
});

const client = await provider.Client.find(clientId);
async function mint(scope, n) {
  const out = [];
  for (let i = 0; i < n; i += 1) {
    const accountId = `user-${scope.length}-${i}`;
    const grant = new provider.Grant({ accountId, clientId });
    grant.addOIDCScope(scope);
    const grantId = await grant.save();
    const common = { accountId, client, grantId, scope, gty: 'authorization_code' };
    out.push({
      refresh: await new provider.RefreshToken(common).save(),
      access: await new provider.AccessToken(common).save(),
    });
  }
  return out;
}
const n = Number(grantCount);
const plain = await mint('offline_access', n);
const openid = await mint('openid offline_access', n);
writeFileSync(tokensFile, JSON.stringify({
  refresh: plain.map((t) => t.refresh),
  openid_refresh: openid.map((t) => t.refresh),
  access: openid.map((t) => t.access),
}));
provider.listen(Number(port), '127.0.0.1', () => console.log('listening'));
