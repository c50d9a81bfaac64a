// The reference of the token benchmarks (`BENCH_SCENARIOS=oidc_provider bench/run.sh`): node oidc-provider 9 with its
// in-memory adapter and refresh token rotation on, serving the token, introspection and userinfo
// endpoints to one confidential client (client_secret_post), DPoP enabled.
//   node bench/oidc_provider_server.mjs PORT CLIENT_SECRET GRANTS TOKENS_JSON
// Before it listens it makes GRANTS grants of each kind below, writes their tokens to TOKENS_JSON
// ({"refresh": [...], "openid_refresh": [...], "access": [...]}) and then prints "listening":
//   refresh        refresh tokens of grants without `openid` (a refresh issues no ID token, as ours)
//   openid_refresh refresh tokens of `openid` grants (their access tokens are good at /me)
//   access         access tokens of `openid` grants (for /me and introspection)
import { writeFileSync } from 'node:fs';

import Provider from 'oidc-provider';

const [port, secret, grantCount, tokensFile] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const clientId = 'bench';

const provider = new Provider(issuer, {
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
