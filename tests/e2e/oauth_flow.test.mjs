// The OAuth authorization flow in a real browser (issue 4): sign-in and consent in Debian's
// chromium, the code exchange and refresh with a real OAuth client library (oauth4webapi), for a
// confidential client and a public PKCE client; Deny; every row of specification §7.1; CSRF and
// re-validation of the consent form; the issuer in every authorization response (RFC 9207); pushed
// authorization requests (RFC 9126) and clients that require them.
import assert from 'node:assert/strict';
import http from 'node:http';
import { webcrypto } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import { TestServer, launchBrowser } from './harness.mjs';

// Node 18 has WebCrypto but not as a global without a flag; oauth4webapi needs the global.
if (!globalThis.crypto) globalThis.crypto = webcrypto;
const oauth = await import('oauth4webapi');

const kTestTimeoutMs = 90_000;
const kStepTimeoutMs = 15_000;
const kPassword = 'correct horse battery staple';
const kApiVersion = { 'service-api-version': '2024-08-13' };
const kAuthorizePath = '/auth/oauth2/authorize';
// The test server speaks plain http on loopback; oauth4webapi refuses that unless told.
const kInsecure = { [oauth.allowInsecureRequests]: true };

let server;
let browser;
let callback;    // the application's redirect URI server
let redirectUri;
let owner;       // signs in through the flow; owns every client
let other;       // another user
let confidential;
let publicClient;
let pending;
let rejected;
let metadata;    // the server's RFC 8414 document
let userCounter = 0;

// The "application": records every request to its redirect URI and answers with a plain page.
function startCallbackServer() {
  const received = [];
  const srv = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (url.pathname !== '/callback') {  // e.g. the browser's /favicon.ico
      res.writeHead(404).end();
      return;
    }
    received.push(url);
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('callback received');
  });
  return new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => resolve({ srv, received, port: srv.address().port }));
  });
}

async function newUser() {
  userCounter += 1;
  const email = `flow${userCounter}-${Date.now()}@example.com`;
  const user = await server.createUser({ email, name: `Flow User ${userCounter}`, password: kPassword });
  return { ...user, email, password: kPassword };
}

async function createClient({ name, ownerId, scopes = ['PROFILE_READ', 'BOOKING_READ'], isPublic = false,
  review = 'accept', requirePar = false, on = server }) {
  const args = ['admin', 'oauth-client', 'create', '--owner-id', String(ownerId), '--name', name,
    '--redirect-uri', redirectUri];
  for (const s of scopes) args.push('--scope', s);
  if (isPublic) args.push('--public');
  if (requirePar) args.push('--require-par');
  const server = on;
  const created = await server.cli(args);
  if (review === 'accept') await server.cli(['admin', 'oauth-client', 'review', created.client_id, '--accept']);
  if (review === 'reject') {
    await server.cli(['admin', 'oauth-client', 'review', created.client_id, '--reject', '--reason', 'not for us']);
  }
  return created;
}

function authorizeUrl(params, on = server) {
  const url = new URL(on.appUrl + kAuthorizePath);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.set(name, value);
  }
  return url.href;
}

function authorizationServer(on = server) {
  // The endpoints by hand: the test server's configured base_url (the issuer its RFC 8414 metadata
  // names, and the host of the endpoints there) is not the address it listens on, a port the OS
  // chose. The issuer is the metadata's. The RFC 9207 flag is set here rather than read, so that a
  // response without iss fails validateAuthResponse whatever the metadata says.
  return {
    issuer: metadata.issuer,
    authorization_endpoint: on.appUrl + kAuthorizePath,
    token_endpoint: `${on.apiUrl}/v2/auth/oauth2/token`,
    pushed_authorization_request_endpoint: `${on.apiUrl}/v2/auth/oauth2/par`,
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
  };
}

// A fresh browser context (own cookies) and page for `user`, not yet signed in.
async function newPage() {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(kStepTimeoutMs);
  page.setDefaultNavigationTimeout(kStepTimeoutMs);
  return { context, page };
}

// Opens the authorize URL; when the login page shows, signs in as `user` and waits to be back on
// the authorization page. Returns the response of the authorization page itself; sets
// page.viaLogin when the login page was shown.
async function openAuthorize(page, user, params, on = server) {
  const url = authorizeUrl(params, on);
  let response = await page.goto(url);
  page.viaLogin = new URL(page.url()).pathname === '/auth/login';
  if (page.viaLogin) {
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    const [back] = await Promise.all([
      page.waitForNavigation({ url: (u) => u.pathname === kAuthorizePath || u.port === String(callback.port) }),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    response = back;
  }
  return response;
}

// Clicks a consent button and waits for the browser to arrive at the redirect URI; returns the
// URL the application received.
async function decide(page, button) {
  const before = callback.received.length;
  await Promise.all([
    page.waitForURL((u) => u.port === String(callback.port)),
    page.getByRole('button', { name: button, exact: true }).click(),
  ]);
  assert.equal(callback.received.length, before + 1, 'the application got exactly one redirect');
  const got = callback.received.at(-1);
  assert.equal(got.pathname, '/callback');
  return new URL(page.url());
}

// Opens an authorize URL expecting to be sent straight to the application (an error redirect).
async function expectRedirect(page, user, params) {
  const before = callback.received.length;
  await openAuthorize(page, user, params);
  await page.waitForURL((u) => u.port === String(callback.port));
  assert.equal(callback.received.length, before + 1);
  return callback.received.at(-1).searchParams;
}

// Opens an authorize URL expecting the page error `message` (400, no redirect).
async function expectPageError(page, user, params, message, on = server) {
  const before = callback.received.length;
  const response = await openAuthorize(page, user, params, on);
  assert.equal(new URL(page.url()).pathname, kAuthorizePath);
  assert.equal(response.status(), 400);
  assert.equal((await page.locator('#authorize_error').textContent()).trim(), message);
  assert.equal(await page.getByRole('button', { name: 'Allow' }).count(), 0);
  assert.equal(callback.received.length, before, 'the application is not contacted');
}

// Opens the authorize URL for the public client with a fresh PKCE challenge; returns its verifier.
async function openWithPkce(page, params) {
  const verifier = oauth.generateRandomCodeVerifier();
  const challenge = await oauth.calculatePKCECodeChallenge(verifier);
  await openAuthorize(page, owner, {
    client_id: publicClient.client_id, redirect_uri: redirectUri, code_challenge: challenge, ...params,
  });
  return verifier;
}

// One browser page for the tests of a describe block: opened before the first, closed after the last.
function suitePage() {
  const held = {};
  before(async () => {
    Object.assign(held, await newPage());
  });
  after(async () => {
    await held.context?.close();
  });
  return held;
}

async function getMe(accessToken) {
  const response = await oauth.protectedResourceRequest(accessToken, 'GET', new URL(`${server.apiUrl}/v2/me`),
    new Headers(kApiVersion), null, kInsecure);
  return { status: response.status, body: await response.json() };
}

before(async () => {
  callback = await startCallbackServer();
  redirectUri = `http://127.0.0.1:${callback.port}/callback`;
  // DPoP proofs name the URL they are sent to, which the server judges by its base_url.
  server = await TestServer.start({ exactBaseUrl: true });
  metadata = await (await fetch(`${server.apiUrl}/.well-known/oauth-authorization-server`)).json();
  browser = await launchBrowser();
  owner = await newUser();
  other = await newUser();
  confidential = await createClient({ name: 'Acme <Calendar> & Co', ownerId: owner.id });
  publicClient = await createClient({ name: 'Acme Mobile', ownerId: owner.id, isPublic: true });
  pending = await createClient({ name: 'Acme Pending', ownerId: owner.id, review: 'none' });
  rejected = await createClient({ name: 'Acme Rejected', ownerId: owner.id, review: 'reject' });
  assert.equal(confidential.kind, 'confidential');
  assert.ok(confidential.client_secret);
  assert.equal(publicClient.kind, 'public');
}, { timeout: kTestTimeoutMs });

after(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
  await new Promise((resolve) => (callback ? callback.srv.close(resolve) : resolve()));
});

describe('authorization code flow', { timeout: kTestTimeoutMs }, () => {
  test('confidential client: sign-in, consent, Allow, code exchange, /v2/me, refresh', async () => {
    const { context, page } = await newPage();
    try {
      const state = oauth.generateRandomState();
      const response = await openAuthorize(page, owner, {
        client_id: confidential.client_id, redirect_uri: redirectUri, response_type: 'code', state,
        scope: 'PROFILE_READ BOOKING_READ',
      });
      // No session: the login page first, then back to the same authorization request.
      assert.equal(page.viaLogin, true);
      assert.equal(new URL(page.url()).searchParams.get('state'), state);
      // The consent page: the client by name (escaped), the scopes in plain words, both buttons.
      assert.equal(response.status(), 200);
      assert.equal(response.headers()['cache-control'], 'no-store');
      assert.equal(response.headers()['x-frame-options'], 'DENY');
      assert.match(response.headers()['content-security-policy'], /frame-ancestors 'none'/);
      assert.equal((await page.locator('#client_name').textContent()).trim(), 'Acme <Calendar> & Co');
      await page.getByText('View your personal info').waitFor();
      await page.getByText('View your bookings').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Deny', exact: true }).count(), 1);

      const returned = await decide(page, 'Allow');
      const as = authorizationServer();
      const client = { client_id: confidential.client_id };
      const params = oauth.validateAuthResponse(as, client, returned, state);
      assert.ok(params.get('code'));

      const tokenResponse = await oauth.authorizationCodeGrantRequest(as, client,
        oauth.ClientSecretPost(confidential.client_secret), params, redirectUri, oauth.nopkce, kInsecure);
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, tokenResponse);
      assert.equal(tokens.token_type, 'bearer');
      assert.equal(tokens.expires_in, 1800);
      assert.deepEqual(tokens.scope.split(' ').sort(), ['BOOKING_READ', 'PROFILE_READ']);
      assert.ok(tokens.refresh_token);

      const me = await getMe(tokens.access_token);
      assert.equal(me.status, 200, JSON.stringify(me.body));
      assert.equal(me.body.data.email, owner.email);

      const refreshResponse = await oauth.refreshTokenGrantRequest(as, client,
        oauth.ClientSecretPost(confidential.client_secret), tokens.refresh_token, kInsecure);
      const refreshed = await oauth.processRefreshTokenResponse(as, client, refreshResponse);
      assert.notEqual(refreshed.access_token, tokens.access_token);
      assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
      assert.deepEqual(refreshed.scope.split(' ').sort(), ['BOOKING_READ', 'PROFILE_READ']);
      const meAgain = await getMe(refreshed.access_token);
      assert.equal(meAgain.status, 200, JSON.stringify(meAgain.body));
      assert.equal(meAgain.body.data.email, owner.email);

      // The code is single use: a second exchange fails.
      const replay = await oauth.authorizationCodeGrantRequest(as, client,
        oauth.ClientSecretPost(confidential.client_secret), params, redirectUri, oauth.nopkce, kInsecure);
      await assert.rejects(oauth.processAuthorizationCodeResponse(as, client, replay),
        (e) => e.error === 'invalid_grant');
    } finally {
      await context.close();
    }
  });

  test('public client with PKCE (S256): consent, Allow, exchange with the verifier, refresh', async () => {
    const { context, page } = await newPage();
    try {
      const state = oauth.generateRandomState();
      const verifier = await openWithPkce(page, {
        state, scope: 'PROFILE_READ,BOOKING_READ', code_challenge_method: 'S256',
      });
      assert.equal((await page.locator('#client_name').textContent()).trim(), 'Acme Mobile');
      const returned = await decide(page, 'Allow');
      const as = authorizationServer();
      const client = { client_id: publicClient.client_id };
      const params = oauth.validateAuthResponse(as, client, returned, state);

      const tokenResponse = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params,
        redirectUri, verifier, kInsecure);
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, tokenResponse);
      assert.deepEqual(tokens.scope.split(' ').sort(), ['BOOKING_READ', 'PROFILE_READ']);
      assert.equal((await getMe(tokens.access_token)).status, 200);

      const refreshResponse = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token,
        kInsecure);
      const refreshed = await oauth.processRefreshTokenResponse(as, client, refreshResponse);
      const me = await getMe(refreshed.access_token);
      assert.equal(me.status, 200, JSON.stringify(me.body));
      assert.equal(me.body.data.email, owner.email);
    } finally {
      await context.close();
    }
  });

  test('public client: a wrong PKCE verifier is refused', async () => {
    const { context, page } = await newPage();
    try {
      await openWithPkce(page, { state: 's1', scope: 'PROFILE_READ' });
      const returned = await decide(page, 'Allow');
      const as = authorizationServer();
      const client = { client_id: publicClient.client_id };
      const params = oauth.validateAuthResponse(as, client, returned, 's1');
      const tokenResponse = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params,
        redirectUri, oauth.generateRandomCodeVerifier(), kInsecure);
      await assert.rejects(oauth.processAuthorizationCodeResponse(as, client, tokenResponse),
        (e) => e.error === 'invalid_grant');
    } finally {
      await context.close();
    }
  });
});

describe('consent page', { timeout: kTestTimeoutMs }, () => {
  const tab = suitePage();

  test('Deny sends access_denied with the state echoed and issues no code', async () => {
    const state = 'deny-state-<&>';
    await openAuthorize(tab.page, owner, {
      client_id: confidential.client_id, redirect_uri: redirectUri, state, scope: 'BOOKING_READ',
    });
    const returned = await decide(tab.page, 'Deny');
    assert.equal(returned.searchParams.get('error'), 'access_denied');
    assert.equal(returned.searchParams.get('state'), state);
    assert.ok(returned.searchParams.get('error_description'));
    assert.equal(returned.searchParams.get('code'), null);
  });

  test('Allow echoes the state and omits it when none was sent', async () => {
    await openAuthorize(tab.page, owner, { client_id: confidential.client_id, redirect_uri: redirectUri, scope: 'BOOKING_READ' });
    const returned = await decide(tab.page, 'Allow');
    assert.ok(returned.searchParams.get('code'));
    assert.equal(returned.searchParams.has('state'), false);
  });

  test('a form with a wrong CSRF token is refused (403) and nothing reaches the application', async () => {
    await openAuthorize(tab.page, owner, {
      client_id: confidential.client_id, redirect_uri: redirectUri, state: 'csrf', scope: 'BOOKING_READ',
    });
    await tab.page.locator('input[name="csrf_token"]').evaluate((el) => { el.value = 'forged'; });
    const before = callback.received.length;
    const [response] = await Promise.all([
      tab.page.waitForNavigation(),
      tab.page.getByRole('button', { name: 'Allow', exact: true }).click(),
    ]);
    assert.equal(response.status(), 403);
    assert.equal(new URL(tab.page.url()).pathname, kAuthorizePath);
    assert.equal(callback.received.length, before);
  });

  test('the posted form is validated again: a scope added in the browser is refused', async () => {
    await openAuthorize(tab.page, owner, {
      client_id: confidential.client_id, redirect_uri: redirectUri, state: 'tamper', scope: 'BOOKING_READ',
    });
    await tab.page.locator('input[name="scope"]').evaluate((el) => { el.value = 'BOOKING_READ EVENT_TYPE_WRITE'; });
    const returned = await decide(tab.page, 'Allow');
    assert.equal(returned.searchParams.get('error'), 'invalid_request');
    assert.equal(returned.searchParams.get('error_description'), "Requested scope exceeds the client's registered scopes");
    assert.equal(returned.searchParams.get('state'), 'tamper');
    assert.equal(returned.searchParams.get('code'), null);
  });
});

describe('specification §7.1: page errors', { timeout: kTestTimeoutMs }, () => {
  let ownerPage;
  let otherPage;
  before(async () => {
    ownerPage = await newPage();
    otherPage = await newPage();
  });
  after(async () => {
    await ownerPage?.context.close();
    await otherPage?.context.close();
  });

  test('no client with the client_id', async () => {
    await expectPageError(ownerPage.page, owner, { client_id: 'no-such-client', redirect_uri: redirectUri,
      scope: 'BOOKING_READ', state: 's' }, 'No OAuth client with this client_id exists');
  });

  test('pending client: page error for another user, consent page for its owner', async () => {
    const params = { client_id: pending.client_id, redirect_uri: redirectUri, scope: 'BOOKING_READ', state: 's' };
    await expectPageError(otherPage.page, other, params,
      'This OAuth client is awaiting approval; until then only its owner can use it');
    const response = await openAuthorize(ownerPage.page, owner, params);
    assert.equal(response.status(), 200);
    assert.equal((await ownerPage.page.locator('#client_name').textContent()).trim(), 'Acme Pending');
    await ownerPage.page.getByRole('button', { name: 'Allow', exact: true }).waitFor();
  });

  test('rejected client: page error, even for its owner', async () => {
    await expectPageError(ownerPage.page, owner, { client_id: rejected.client_id, redirect_uri: redirectUri,
      scope: 'BOOKING_READ', state: 's' }, 'This OAuth client was rejected and cannot be used');
  });

  test('redirect_uri not registered (not even a prefix match)', async () => {
    await expectPageError(ownerPage.page, owner, { client_id: confidential.client_id,
      redirect_uri: `${redirectUri}/other`, scope: 'BOOKING_READ', state: 's' },
    'redirect_uri is not registered for this OAuth client');
  });

  test('scope missing for a client that requires it', async () => {
    await expectPageError(ownerPage.page, owner, { client_id: confidential.client_id, redirect_uri: redirectUri,
      state: 's' }, 'scope parameter is required for this OAuth client');
  });
});

describe('specification §7.1: redirect errors', { timeout: kTestTimeoutMs }, () => {
  const tab = suitePage();

  // The client (looked up when the test runs), the scope asked for, the error sent back and its
  // description (any, when none is given); every row echoes the state and sends no code.
  const rows = [
    { name: 'unrecognized scope -> invalid_scope with the state', client: () => confidential,
      scope: 'BOOKING_READ NOT_A_SCOPE', state: 'st-1', error: 'invalid_scope',
      description: 'Requested scope is not a recognized scope' },
    { name: 'scope not enabled on the client -> invalid_request with the state', client: () => confidential,
      scope: 'BOOKING_READ,EVENT_TYPE_WRITE', state: 'st-2', error: 'invalid_request',
      description: "Requested scope exceeds the client's registered scopes" },
    { name: 'public client without code_challenge -> invalid_request', client: () => publicClient,
      scope: 'PROFILE_READ', state: 'st-3', error: 'invalid_request' },
  ];
  for (const row of rows) {
    test(row.name, async () => {
      const got = await expectRedirect(tab.page, owner, { client_id: row.client().client_id, redirect_uri: redirectUri,
        scope: row.scope, state: row.state });
      assert.equal(got.get('error'), row.error);
      if (row.description) assert.equal(got.get('error_description'), row.description);
      else assert.ok(got.get('error_description'));
      assert.equal(got.get('state'), row.state);
      assert.equal(got.get('code'), null);
    });
  }
});

// Specification §5.5 end to end: a legacy client's unscoped tokens, step 1 (scope in the URL
// narrows new tokens while the client is still legacy), step 2 (select the scopes: no longer
// legacy, a URL without scope now fails) and tokens issued before the migration still working.
describe('specification §5.5: legacy client migration, in order', { timeout: kTestTimeoutMs }, () => {
  test('legacy tokens, step 1, step 2, and old tokens survive', async () => {
    const legacy = await createClient({ name: 'Acme Legacy', ownerId: owner.id, scopes: [] });
    assert.equal(legacy.legacy, true);
    const as = authorizationServer();
    const client = { client_id: legacy.client_id };
    const { context, page } = await newPage();
    // Authorize (Allow) with the given scope parameter and exchange the code with oauth4webapi.
    const authorize = async (scope) => {
      const state = oauth.generateRandomState();
      await openAuthorize(page, owner, { client_id: legacy.client_id, redirect_uri: redirectUri, state, scope });
      const params = oauth.validateAuthResponse(as, client, await decide(page, 'Allow'), state);
      const response = await oauth.authorizationCodeGrantRequest(as, client,
        oauth.ClientSecretPost(legacy.client_secret), params, redirectUri, oauth.nopkce, kInsecure);
      return oauth.processAuthorizationCodeResponse(as, client, response);
    };
    // Plain fetch: oauth4webapi turns a 403 challenge into an exception, and the status is the point.
    const patchMe = async (token) => (await fetch(`${server.apiUrl}/v2/me`, {
      method: 'PATCH',
      headers: { ...kApiVersion, 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: owner.name }),
    })).status;
    try {
      // Before migrating: no scope in the URL, a token that may do anything the user may.
      const before = await authorize(undefined);
      assert.equal(before.scope ?? '', '');
      assert.equal((await getMe(before.access_token)).status, 200);
      assert.equal(await patchMe(before.access_token), 200);

      // Step 1: the URL asks for PROFILE_READ; the token carries only that, though the client is legacy.
      const step1 = await authorize('PROFILE_READ');
      assert.equal(step1.scope, 'PROFILE_READ');
      assert.equal((await getMe(step1.access_token)).status, 200);
      assert.equal(await patchMe(step1.access_token), 403);

      // Step 2: select the scopes in the client's settings; the client stops being legacy.
      const updated = await server.cli(['admin', 'oauth-client', 'update', legacy.client_id,
        '--add-scope', 'PROFILE_READ']);
      assert.equal(updated.legacy, false);
      assert.equal(updated.state, 'approved', 'adding user-level scopes to a legacy client needs no review');
      // A URL without scope is now refused on the page (the wrong order breaks exactly this)...
      await expectPageError(page, owner, { client_id: legacy.client_id, redirect_uri: redirectUri, state: 's' },
        'scope parameter is required for this OAuth client');
      // ...while the scoped URL of step 1 keeps working,
      assert.equal((await authorize('PROFILE_READ')).scope, 'PROFILE_READ');
      // and the tokens issued before the migration are not invalidated.
      assert.equal((await getMe(before.access_token)).status, 200);
      assert.equal(await patchMe(before.access_token), 200);
      const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(
        as, client, oauth.ClientSecretPost(legacy.client_secret), before.refresh_token, kInsecure));
      assert.equal(await patchMe(refreshed.access_token), 200);
    } finally {
      await context.close();
    }
  });
});

// RFC 9207: the issuer in every authorization response, checked by oauth4webapi's
// validateAuthResponse (which, with the metadata flag, refuses a response without it).
describe('RFC 9207: iss in authorization responses', { timeout: kTestTimeoutMs }, () => {
  const tab = suitePage();

  test('the metadata announces it; the code and the redirected errors carry the issuer', async () => {
    assert.equal(metadata.authorization_response_iss_parameter_supported, true);
    const as = authorizationServer();
    const client = { client_id: confidential.client_id };

    await openAuthorize(tab.page, owner, { client_id: confidential.client_id, redirect_uri: redirectUri,
      state: 'iss-1', scope: 'BOOKING_READ' });
    const returned = await decide(tab.page, 'Allow');
    assert.equal(returned.searchParams.get('iss'), metadata.issuer);
    assert.ok(oauth.validateAuthResponse(as, client, returned, 'iss-1').get('code'));
    // The check is real: another issuer is refused.
    assert.throws(() => oauth.validateAuthResponse({ ...as, issuer: 'https://other.example' }, client, returned,
      'iss-1'), /issuer/);

    // A redirected error passes the iss check and comes out as the authorization error itself.
    const error = await expectRedirect(tab.page, owner, { client_id: confidential.client_id,
      redirect_uri: redirectUri, state: 'iss-2', scope: 'NOT_A_SCOPE' });
    assert.equal(error.get('iss'), metadata.issuer);
    assert.throws(() => oauth.validateAuthResponse(as, client, error, 'iss-2'),
      (e) => e instanceof oauth.AuthorizationResponseError && e.error === 'invalid_scope');

    await openAuthorize(tab.page, owner, { client_id: confidential.client_id, redirect_uri: redirectUri,
      state: 'iss-3', scope: 'BOOKING_READ' });
    const denied = await decide(tab.page, 'Deny');
    assert.throws(() => oauth.validateAuthResponse(as, client, denied, 'iss-3'),
      (e) => e instanceof oauth.AuthorizationResponseError && e.error === 'access_denied');
  });
});

// RFC 9126: the client pushes the parameters, the browser carries only client_id and request_uri.
describe('RFC 9126: pushed authorization requests', { timeout: kTestTimeoutMs }, () => {
  const tab = suitePage();
  const kUnknown = 'This authorization request is unknown, expired or already used. Go back to the application '
    + 'and start again.';
  const kRequiresPar = 'This OAuth client accepts only pushed authorization requests: its application must push '
    + 'the request first (request_uri)';

  async function push(client, auth, params, on = server) {
    const as = authorizationServer(on);
    const response = await oauth.pushedAuthorizationRequest(as, client, auth,
      { response_type: 'code', redirect_uri: redirectUri, ...params }, kInsecure);
    return oauth.processPushedAuthorizationResponse(as, client, response);
  }

  test('metadata, push with HTTP Basic, consent, code, token: the query beside request_uri is ignored', async () => {
    assert.equal(metadata.pushed_authorization_request_endpoint, `${metadata.issuer}/v2/auth/oauth2/par`);
    assert.equal(metadata.require_pushed_authorization_requests, false);
    const as = authorizationServer();
    const client = { client_id: confidential.client_id };
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const pushed = await push(client, oauth.ClientSecretBasic(confidential.client_secret), {
      scope: 'PROFILE_READ', state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    assert.match(pushed.request_uri, /^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/);
    assert.equal(pushed.expires_in, 60);

    // Parameters beside client_id and request_uri are not read: neither this scope nor this state.
    const response = await openAuthorize(tab.page, owner, { client_id: confidential.client_id,
      request_uri: pushed.request_uri, scope: 'BOOKING_READ', state: 'from-the-browser' });
    assert.equal(response.status(), 200);
    await tab.page.getByText('View your personal info').waitFor();
    assert.equal(await tab.page.getByText('View your bookings').count(), 0);
    assert.equal(await tab.page.locator('input[name="scope"]').count(), 0, 'the form carries no parameter');
    // A reload of the consent page does not use the request up.
    await tab.page.reload();
    const returned = await decide(tab.page, 'Allow');
    const params = oauth.validateAuthResponse(as, client, returned, state);

    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(
      as, client, oauth.ClientSecretBasic(confidential.client_secret), params, redirectUri, verifier, kInsecure));
    assert.equal(tokens.scope, 'PROFILE_READ');
    const me = await getMe(tokens.access_token);
    assert.equal(me.status, 200, JSON.stringify(me.body));
    assert.equal(me.body.data.email, owner.email);
  });

  test('a request_uri is used once (Deny uses it too) and only by the client that pushed it', async () => {
    const client = { client_id: publicClient.client_id };
    const verifier = oauth.generateRandomCodeVerifier();
    const pushed = await push(client, oauth.None(), { scope: 'BOOKING_READ', state: 'once',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    await expectPageError(tab.page, owner, { client_id: confidential.client_id, request_uri: pushed.request_uri },
      kUnknown);
    await openAuthorize(tab.page, owner, { client_id: publicClient.client_id, request_uri: pushed.request_uri });
    const denied = await decide(tab.page, 'Deny');
    assert.throws(() => oauth.validateAuthResponse(authorizationServer(), client, denied, 'once'),
      (e) => e instanceof oauth.AuthorizationResponseError && e.error === 'access_denied');
    await expectPageError(tab.page, owner, { client_id: publicClient.client_id, request_uri: pushed.request_uri },
      kUnknown);
  });

  test('the endpoint refuses as the token endpoint and the authorization page would', async () => {
    const client = { client_id: confidential.client_id };
    await assert.rejects(push(client, oauth.ClientSecretPost('wrong-secret'), { scope: 'BOOKING_READ' }),
      (e) => e.error === 'invalid_client' && e.status === 401);
    await assert.rejects(push(client, oauth.ClientSecretPost(confidential.client_secret), { scope: 'NOT_A_SCOPE' }),
      (e) => e.error === 'invalid_scope' && e.status === 400);
    await assert.rejects(push(client, oauth.ClientSecretPost(confidential.client_secret),
      { scope: 'BOOKING_READ', redirect_uri: `${redirectUri}/other` }),
    (e) => e.error === 'invalid_request' && e.status === 400);
    await assert.rejects(push({ client_id: publicClient.client_id }, oauth.None(), { scope: 'BOOKING_READ' }),
      (e) => e.error === 'invalid_request' && /code_challenge/.test(e.error_description));
  });

  test('a require_par client refuses a plain request; the settings page turns it off without a review', async () => {
    const strict = await createClient({ name: 'Acme Strict', ownerId: owner.id, requirePar: true });
    assert.equal(strict.require_par, true);
    const plain = { client_id: strict.client_id, redirect_uri: redirectUri, scope: 'BOOKING_READ', state: 'p' };
    await expectPageError(tab.page, owner, plain, kRequiresPar);
    const pushed = await push({ client_id: strict.client_id }, oauth.ClientSecretPost(strict.client_secret),
      { scope: 'BOOKING_READ', state: 'p' });
    const response = await openAuthorize(tab.page, owner, { client_id: strict.client_id,
      request_uri: pushed.request_uri });
    assert.equal(response.status(), 200);
    await tab.page.getByRole('button', { name: 'Allow', exact: true }).waitFor();

    // The owner unchecks the box on the client's settings page: still approved, plain requests served.
    await tab.page.goto(`${server.appUrl}/settings/developer/oauth/${strict.client_id}`);
    const box = tab.page.getByLabel('Require pushed authorization requests (PAR)');
    assert.equal(await box.isChecked(), true);
    await box.uncheck();
    await Promise.all([
      tab.page.waitForURL((u) => u.searchParams.get('notice') === 'saved'),
      tab.page.getByRole('button', { name: 'Save changes' }).click(),
    ]);
    const shown = await server.cli(['admin', 'oauth-client', 'show', strict.client_id]);
    assert.equal(shown.require_par, false);
    assert.equal(shown.state, 'approved');
    assert.equal((await openAuthorize(tab.page, owner, plain)).status(), 200);
    await tab.page.getByRole('button', { name: 'Allow', exact: true }).waitFor();

    const again = await server.cli(['admin', 'oauth-client', 'update', strict.client_id, '--require-par', 'true']);
    assert.equal(again.require_par, true);
    assert.equal(again.state, 'approved');
    await expectPageError(tab.page, owner, plain, kRequiresPar);
  });

  // A server of its own, whose pushed requests live one second.
  test('an expired request_uri is a page error', async () => {
    const shortLived = await TestServer.start({ plugins: '  oauth: { par_ttl: 1 }' });
    const { context, page } = await newPage();
    try {
      const user = await shortLived.createUser({ email: 'par-ttl@example.com', name: 'Par Ttl', password: kPassword });
      const created = await createClient({ name: 'Acme Short', ownerId: user.id, on: shortLived });
      const pushed = await push({ client_id: created.client_id }, oauth.ClientSecretPost(created.client_secret),
        { scope: 'BOOKING_READ' }, shortLived);
      assert.equal(pushed.expires_in, 1);
      // Until the database holds no live pushed request (bounded: 50 polls, 100 ms apart).
      for (let i = 0; ; i += 1) {
        const live = (await shortLived.dbQuery(
          'SELECT COUNT(*) FROM oauth_pushed_requests WHERE expires_at > UTC_TIMESTAMP(3)')).trim();
        if (live === '0') break;
        assert.ok(i < 50, 'the pushed request did not expire');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await expectPageError(page, { email: 'par-ttl@example.com', password: kPassword },
        { client_id: created.client_id, request_uri: pushed.request_uri }, kUnknown, shortLived);
    } finally {
      await context.close();
      await shortLived.stop();
    }
  });
});

// RFC 9449 end to end with oauth4webapi's DPoP: tokens bound to ES256 and RS256 keys, /v2/me with
// proofs, every refusal a resource server owes (Bearer use, another URL or method, a replayed
// jti), a public client's refresh needing the same key, introspection showing cnf.jkt.
describe('DPoP (RFC 9449)', { timeout: kTestTimeoutMs }, () => {
  const tab = suitePage();
  const meUrl = () => new URL(`${server.apiUrl}/v2/me`);
  const es256 = () => crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);
  const rs256 = () => crypto.subtle.generateKey({
    name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256',
  }, false, ['sign', 'verify']);

  // Consent (Allow) for `clientRecord` in the signed-in tab; returns the callback parameters and
  // the PKCE verifier (public clients).
  async function authorize(clientRecord, { pkce = false } = {}) {
    const state = oauth.generateRandomState();
    const verifier = oauth.generateRandomCodeVerifier();
    await openAuthorize(tab.page, owner, {
      client_id: clientRecord.client_id, redirect_uri: redirectUri, state, scope: 'PROFILE_READ',
      code_challenge: pkce ? await oauth.calculatePKCECodeChallenge(verifier) : undefined,
    });
    const returned = await decide(tab.page, 'Allow');
    const params = oauth.validateAuthResponse(authorizationServer(), { client_id: clientRecord.client_id }, returned, state);
    return { params, verifier: pkce ? verifier : oauth.nopkce };
  }

  // The request oauth4webapi would send (its Authorization and DPoP headers), without sending it.
  async function preparedRequest(token, method, url, DPoP) {
    let sent;
    await oauth.protectedResourceRequest(token, method, url, new Headers(kApiVersion), null, {
      ...kInsecure, DPoP, [oauth.customFetch]: async (_url, init) => { sent = init.headers; return new Response('{}'); },
    });
    return sent;
  }

  async function rawMe(headers, method = 'GET') {
    const response = await fetch(meUrl(), { method, headers: { ...kApiVersion, ...headers } });
    return { status: response.status, challenge: response.headers.get('www-authenticate'), body: await response.json() };
  }

  async function dpopMe(token, DPoP) {
    const response = await oauth.protectedResourceRequest(token, 'GET', meUrl(), new Headers(kApiVersion), null,
      { ...kInsecure, DPoP });
    return { status: response.status, body: await response.json() };
  }

  test('metadata lists the DPoP algorithms', async () => {
    const response = await fetch(`${server.apiUrl}/.well-known/oauth-authorization-server`);
    assert.deepEqual((await response.json()).dpop_signing_alg_values_supported, ['ES256', 'RS256']);
  });

  test('ES256, confidential client: bound tokens, /v2/me, Bearer refused, other URL or method, replay, cnf.jkt',
    async () => {
      const as = authorizationServer();
      const client = { client_id: confidential.client_id };
      const auth = oauth.ClientSecretPost(confidential.client_secret);
      const DPoP = oauth.DPoP(client, await es256());
      const { params } = await authorize(confidential);
      const tokens = await oauth.processAuthorizationCodeResponse(as, client,
        await oauth.authorizationCodeGrantRequest(as, client, auth, params, redirectUri, oauth.nopkce,
          { ...kInsecure, DPoP }));
      assert.equal(tokens.token_type, 'dpop');

      const me = await dpopMe(tokens.access_token, DPoP);
      assert.equal(me.status, 200, JSON.stringify(me.body));
      assert.equal(me.body.data.email, owner.email);

      // The same token as a bearer token: refused.
      const asBearer = await rawMe({ Authorization: `Bearer ${tokens.access_token}` });
      assert.equal(asBearer.status, 401);
      assert.match(asBearer.challenge, /^DPoP error="invalid_token"/);

      // A proof made for another URL, or for another method, is refused.
      const otherUrl = await preparedRequest(tokens.access_token, 'GET', new URL(`${server.apiUrl}/v2/bookings`), DPoP);
      const wrongUrl = await rawMe({ authorization: otherUrl.authorization, dpop: otherUrl.dpop });
      assert.equal(wrongUrl.status, 401);
      assert.match(wrongUrl.challenge, /^DPoP error="invalid_dpop_proof"/);
      assert.match(wrongUrl.body.error.message, /htu/);
      const otherMethod = await preparedRequest(tokens.access_token, 'PATCH', meUrl(), DPoP);
      const wrongMethod = await rawMe({ authorization: otherMethod.authorization, dpop: otherMethod.dpop });
      assert.equal(wrongMethod.status, 401);
      assert.match(wrongMethod.body.error.message, /htm/);
      // No proof at all.
      const noProof = await rawMe({ Authorization: `DPoP ${tokens.access_token}` });
      assert.equal(noProof.status, 401);
      assert.match(noProof.challenge, /^DPoP error="invalid_dpop_proof"/);

      // A proof is good once: the same request again is a replay.
      const once = await preparedRequest(tokens.access_token, 'GET', meUrl(), DPoP);
      assert.equal((await rawMe({ authorization: once.authorization, dpop: once.dpop })).status, 200);
      const replay = await rawMe({ authorization: once.authorization, dpop: once.dpop });
      assert.equal(replay.status, 401);
      assert.match(replay.challenge, /^DPoP error="invalid_dpop_proof"/);
      assert.match(replay.body.error.message, /jti/);

      // Introspection shows the binding.
      const introspection = await (await fetch(`${server.apiUrl}/v2/auth/oauth2/introspect`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: confidential.client_id, client_secret: confidential.client_secret,
          token: tokens.access_token }),
      })).json();
      assert.equal(introspection.active, true);
      assert.equal(introspection.token_type, 'DPoP');
      assert.deepEqual(introspection.cnf, { jkt: await DPoP.calculateThumbprint() });

      // A confidential client's refresh with a proof: new bound tokens.
      const refreshed = await oauth.processRefreshTokenResponse(as, client,
        await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token, { ...kInsecure, DPoP }));
      assert.equal(refreshed.token_type, 'dpop');
      assert.equal((await dpopMe(refreshed.access_token, DPoP)).status, 200);
    });

  test('RS256, public client: bound tokens; refresh needs a proof by the same key', async () => {
    const as = authorizationServer();
    const client = { client_id: publicClient.client_id };
    const DPoP = oauth.DPoP(client, await rs256());
    const { params, verifier } = await authorize(publicClient, { pkce: true });
    const tokens = await oauth.processAuthorizationCodeResponse(as, client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier,
        { ...kInsecure, DPoP }));
    assert.equal(tokens.token_type, 'dpop');
    const me = await dpopMe(tokens.access_token, DPoP);
    assert.equal(me.status, 200, JSON.stringify(me.body));

    // Without a proof, with another key's proof, with a malformed proof: refused, and the refresh
    // token stays usable.
    await assert.rejects(oauth.processRefreshTokenResponse(as, client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token, kInsecure)),
    (e) => e.error === 'invalid_grant');
    const otherKey = oauth.DPoP(client, await es256());
    await assert.rejects(oauth.processRefreshTokenResponse(as, client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token,
        { ...kInsecure, DPoP: otherKey })),
    (e) => e.error === 'invalid_grant');
    const malformed = await fetch(`${server.apiUrl}/v2/auth/oauth2/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', DPoP: 'not.a.proof' },
      body: new URLSearchParams({ grant_type: 'refresh_token', client_id: publicClient.client_id,
        refresh_token: tokens.refresh_token }),
    });
    assert.equal(malformed.status, 400);
    assert.equal((await malformed.json()).error, 'invalid_dpop_proof');

    const refreshed = await oauth.processRefreshTokenResponse(as, client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token, { ...kInsecure, DPoP }));
    assert.equal(refreshed.token_type, 'dpop');
    assert.equal((await dpopMe(refreshed.access_token, DPoP)).status, 200);
    // The old access token was bound too; the new one is refused as Bearer like the first.
    assert.equal((await rawMe({ Authorization: `Bearer ${refreshed.access_token}` })).status, 401);
  });
});
