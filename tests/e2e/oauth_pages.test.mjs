// The OAuth client pages in a real browser (issue 3): the settings page, one-time secrets,
// rotation limits, the admin review page, escaping, validation and CSRF.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { TestServer, launchBrowser, signIn } from './harness.mjs';

const kTestTimeoutMs = 90_000;
const kStepTimeoutMs = 15_000;
const kSettings = '/settings/developer/oauth';
const kPassword = 'correct horse battery staple';
const kCopyNotice = 'Copy this secret now. It will not be shown again.';

let server;
let browser;
let userCounter = 0;

async function newUser({ admin = false } = {}) {
  userCounter += 1;
  const email = `user${userCounter}-${Date.now()}@example.com`;
  const user = await server.createUser({ email, name: `User ${userCounter}`, password: kPassword, admin });
  return { ...user, email, password: kPassword };
}

// A browser context of its own (own cookies) with one page, signed in as a new user.
async function signedInPage({ admin = false } = {}) {
  const user = await newUser({ admin });
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(kStepTimeoutMs);
  page.setDefaultNavigationTimeout(kStepTimeoutMs);
  page.dialogs = [];
  page.on('dialog', (dialog) => {
    page.dialogs.push(dialog.message());
    dialog.dismiss().catch(() => {});
  });
  await signIn(page, server, user);
  return { page, context, user };
}

// Submits a form by clicking `button`, waits for the resulting page and returns the response to
// the POST itself (a 303 when the server redirected).
async function submit(page, button) {
  const [navigation] = await Promise.all([
    page.waitForNavigation({ waitUntil: 'domcontentloaded' }),
    button.click(),
  ]);
  let request = navigation.request();
  while (request.redirectedFrom()) request = request.redirectedFrom();
  assert.equal(request.method(), 'POST');
  return request === navigation.request() ? navigation : request.response();
}

async function fillCreateForm(page, { name, kind = 'confidential', redirectUris = ['https://app.example.com/callback'],
  scopes = ['View your bookings'], purpose = 'Syncs bookings to our CRM.' }) {
  await page.goto(server.appUrl + kSettings);
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Kind').selectOption(kind);
  await page.getByLabel('Redirect URIs').fill(redirectUris.join('\n'));
  for (const scope of scopes) await page.getByLabel(scope).check();
  await page.getByLabel('Purpose').fill(purpose);
}

// Creates a client through the form; returns its id, the response and the one-time secret.
async function createClient(page, options) {
  await fillCreateForm(page, options);
  const response = await submit(page, page.getByRole('button', { name: 'Create OAuth client' }));
  const confidential = (options.kind ?? 'confidential') === 'confidential';
  // A secret is shown by the POST's own page; a public client is redirected to its page.
  assert.equal(response.status(), confidential ? 200 : 303);
  const clientId = (await page.locator('#client_id').textContent()).trim();
  assert.match(clientId, /^\S{8,}$/);
  let secret = null;
  if (confidential) {
    await page.getByText(kCopyNotice).waitFor();
    secret = await page.getByLabel('Client secret').inputValue();
    assert.ok(secret.length >= 20, `secret too short: ${secret}`);
  }
  return { clientId, secret, response };
}

before(async () => {
  browser = await launchBrowser();
  server = await TestServer.start();
}, { timeout: 60_000 });

after(async () => {
  await browser?.close();
  await server?.stop();
}, { timeout: 30_000 });

describe('OAuth client settings pages', { timeout: kTestTimeoutMs * 8 }, () => {
  test('the settings page needs a session', { timeout: kTestTimeoutMs }, async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(kStepTimeoutMs);
    await page.goto(server.appUrl + kSettings);
    const url = new URL(page.url());
    assert.equal(url.pathname, '/auth/login');
    assert.equal(url.searchParams.get('next'), kSettings);
    await context.close();
  });

  test('a confidential client is created and its secret is shown once', { timeout: kTestTimeoutMs }, async () => {
    const { page, context } = await signedInPage();
    await page.getByText('You have no OAuth clients yet.').waitFor();
    const { clientId, secret, response } = await createClient(page, {
      name: 'Calendar Sync', scopes: ['View your bookings', 'View your event types'],
    });
    assert.equal(response.headers()['cache-control'], 'no-store');
    assert.equal(await page.locator('#client_state').textContent(), 'pending');
    assert.equal(await page.locator('tbody tr').count(), 1, 'one active secret listed');
    assert.ok((await page.content()).includes(secret));

    // Reloading the client's page (a GET) shows no secret.
    const reload = await page.goto(`${server.appUrl}${kSettings}/${clientId}`);
    assert.equal(reload.status(), 200);
    assert.equal(reload.headers()['cache-control'], 'no-store');
    assert.equal(await page.getByText(kCopyNotice).count(), 0);
    assert.ok(!(await page.content()).includes(secret), 'the secret is not shown again');
    assert.equal(await page.locator('tbody tr').count(), 1);
    assert.ok(await page.getByText(`…${secret.slice(-4)}`).isVisible(), 'the hint is shown');

    // The list shows the client with its kind, state and id; the stored scopes are those checked.
    await page.goto(server.appUrl + kSettings);
    const row = page.locator('tbody tr', { hasText: clientId });
    assert.match(await row.textContent(), /Calendar Sync[\s\S]*confidential[\s\S]*pending/);
    const shown = await server.cli(['admin', 'oauth-client', 'show', clientId]);
    assert.deepEqual([...shown.scopes].sort(), ['BOOKING_READ', 'EVENT_TYPE_READ']);
    assert.deepEqual(shown.redirect_uris, ['https://app.example.com/callback']);
    assert.equal(shown.state, 'pending');
    assert.equal(shown.client_secret, undefined);

    await page.screenshot({ path: path.join(server.dir, 'settings-page.png'), fullPage: true });
    await context.close();
  });

  test('a public client is created without a secret', { timeout: kTestTimeoutMs }, async () => {
    const { page, context } = await signedInPage();
    const { clientId } = await createClient(page, {
      name: 'Mobile App', kind: 'public', redirectUris: ['http://127.0.0.1:53682/callback'],
    });
    assert.equal(new URL(page.url()).pathname, `${kSettings}/${clientId}`);
    await page.getByText('OAuth client created. It is pending review').waitFor();
    await page.getByText('Public clients have no secret').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Generate new secret' }).count(), 0);
    const shown = await server.cli(['admin', 'oauth-client', 'show', clientId]);
    assert.equal(shown.kind, 'public');
    assert.deepEqual(shown.secrets, []);
    await context.close();
  });

  test('a second secret is generated, a third is refused, one is revoked', { timeout: kTestTimeoutMs }, async () => {
    const { page, context } = await signedInPage();
    const { clientId, secret: first } = await createClient(page, { name: 'Rotating App' });

    let response = await submit(page, page.getByRole('button', { name: 'Generate new secret' }));
    assert.equal(response.status(), 200);
    await page.getByText(kCopyNotice).waitFor();
    const second = await page.getByLabel('Client secret').inputValue();
    assert.notEqual(second, first);
    assert.equal(await page.getByRole('button', { name: /^Revoke secret/ }).count(), 2);

    response = await submit(page, page.getByRole('button', { name: 'Generate new secret' }));
    assert.equal(response.status(), 409);
    assert.match(await page.getByRole('alert').textContent(), /at most 2/);
    assert.equal(await page.getByText(kCopyNotice).count(), 0, 'no secret shown for a refused request');
    assert.equal(await page.getByRole('button', { name: /^Revoke secret/ }).count(), 2);

    response = await submit(page, page.getByRole('button', { name: `Revoke secret ending in ${first.slice(-4)}` }));
    assert.equal(response.status(), 303);
    assert.equal(new URL(page.url()).pathname, `${kSettings}/${clientId}`);
    await page.getByText('Secret revoked.').waitFor();
    const remaining = page.getByRole('button', { name: /^Revoke secret/ });
    assert.equal(await remaining.count(), 1);
    assert.equal(await remaining.getAttribute('aria-label'), `Revoke secret ending in ${second.slice(-4)}`);
    const shown = await server.cli(['admin', 'oauth-client', 'show', clientId]);
    assert.equal(shown.secrets.length, 1);
    assert.equal(shown.secrets[0].hint, second.slice(-4));

    // The last secret cannot be revoked.
    response = await submit(page, remaining);
    assert.equal(response.status(), 409);
    await page.getByRole('alert').waitFor();
    assert.equal(await page.getByRole('button', { name: /^Revoke secret/ }).count(), 1);
    await context.close();
  });

  test('an admin accepts one client and rejects another on the review page', { timeout: kTestTimeoutMs }, async () => {
    const owner = await signedInPage();
    const { clientId: acceptedId } = await createClient(owner.page, { name: 'Accept Me' });
    const { clientId: rejectedId } = await createClient(owner.page, { name: 'Reject Me' });

    // Not an admin: 403.
    const forbidden = await owner.page.goto(server.appUrl + '/admin/oauth-clients');
    assert.equal(forbidden.status(), 403);

    const admin = await signedInPage({ admin: true });
    await admin.page.goto(server.appUrl + '/admin/oauth-clients');
    const acceptSection = admin.page.getByRole('region', { name: 'Accept Me' });
    assert.match(await acceptSection.textContent(), new RegExp(owner.user.email.replace(/[.+]/g, '\\$&')));
    assert.match(await acceptSection.textContent(), /View your bookings/);
    assert.match(await acceptSection.textContent(), /https:\/\/app\.example\.com\/callback/);
    let response = await submit(admin.page, acceptSection.getByRole('button', { name: 'Accept' }));
    assert.equal(response.status(), 303);
    await admin.page.getByText('Client accepted.').waitFor();
    assert.equal(await admin.page.getByRole('region', { name: 'Accept Me' }).count(), 0);

    const rejectSection = admin.page.getByRole('region', { name: 'Reject Me' });
    await rejectSection.getByLabel('Reason').fill('The purpose is not clear.');
    response = await submit(admin.page, rejectSection.getByRole('button', { name: 'Reject' }));
    assert.equal(response.status(), 303);
    await admin.page.getByText('Client rejected.').waitFor();

    await owner.page.goto(`${server.appUrl}${kSettings}/${acceptedId}`);
    assert.equal(await owner.page.locator('#client_state').textContent(), 'approved');
    await owner.page.goto(`${server.appUrl}${kSettings}/${rejectedId}`);
    assert.equal(await owner.page.locator('#client_state').textContent(), 'rejected');
    await owner.page.getByText('The purpose is not clear.').waitFor();

    // An approved client's rename sends it back to review (§3.1).
    await owner.page.goto(`${server.appUrl}${kSettings}/${acceptedId}`);
    await owner.page.getByLabel('Name', { exact: true }).fill('Accept Me Renamed');
    response = await submit(owner.page, owner.page.getByRole('button', { name: 'Save changes' }));
    assert.equal(response.status(), 303);
    await owner.page.getByText('Changes saved. The client is pending review again.').waitFor();
    assert.equal(await owner.page.locator('#client_state').textContent(), 'pending');

    await owner.context.close();
    await admin.context.close();
  });

  test('HTML in the name and purpose renders as text', { timeout: kTestTimeoutMs }, async () => {
    const { page, context } = await signedInPage();
    const name = '<script>alert(1)</script>';
    const purpose = '<img src=x onerror="alert(2)"><b>bold</b>';
    const { clientId } = await createClient(page, { name, purpose });
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), name);
    assert.equal(await page.getByLabel('Purpose').inputValue(), purpose);
    await page.goto(server.appUrl + kSettings);
    const html = await page.content();
    assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'), 'escaped in the list');
    assert.ok(!html.includes('<script>alert(1)</script>'));
    assert.equal(await page.getByRole('link', { name }).count(), 1);

    const admin = await signedInPage({ admin: true });
    await admin.page.goto(server.appUrl + '/admin/oauth-clients');
    const section = admin.page.getByRole('region', { name });
    assert.match(await section.textContent(), /<b>bold<\/b>/);
    assert.equal(await admin.page.locator('img').count(), 0);
    assert.deepEqual(page.dialogs, []);
    assert.deepEqual(admin.page.dialogs, []);
    assert.ok((await admin.page.content()).includes(clientId));
    await admin.context.close();
    await context.close();
  });

  test('bad input is refused with a message, the input kept and nothing stored', { timeout: kTestTimeoutMs }, async () => {
    const { page, context } = await signedInPage();

    await fillCreateForm(page, { name: 'No Scope App', scopes: [] });
    let response = await submit(page, page.getByRole('button', { name: 'Create OAuth client' }));
    assert.equal(response.status(), 400);
    assert.match(await page.getByRole('alert').textContent(), /scope/i);
    assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'No Scope App');
    assert.equal(await page.getByLabel('Redirect URIs').inputValue(), 'https://app.example.com/callback');
    assert.equal(await page.getByLabel('Purpose').inputValue(), 'Syncs bookings to our CRM.');

    const eleven = Array.from({ length: 11 }, (_, i) => `https://app.example.com/cb${i}`);
    await fillCreateForm(page, { name: '<i>Too Many</i>', redirectUris: eleven });
    response = await submit(page, page.getByRole('button', { name: 'Create OAuth client' }));
    assert.equal(response.status(), 400);
    assert.match(await page.getByRole('alert').textContent(), /10/);
    assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), '<i>Too Many</i>');
    assert.ok(await page.getByLabel('View your bookings').isChecked(), 'checked scopes are kept');

    await fillCreateForm(page, { name: 'Fragment App', redirectUris: ['https://app.example.com/cb#frag'] });
    response = await submit(page, page.getByRole('button', { name: 'Create OAuth client' }));
    assert.equal(response.status(), 400);
    await page.getByRole('alert').waitFor();

    await page.goto(server.appUrl + kSettings);
    await page.getByText('You have no OAuth clients yet.').waitFor();
    await context.close();
  });

  test('a POST without a valid CSRF token is refused with 403 and changes nothing', { timeout: kTestTimeoutMs }, async () => {
    const { page, context } = await signedInPage();
    const form = {
      name: 'Forged', kind: 'confidential', redirect_uris: 'https://evil.example.com/cb', scope_BOOKING_READ: '1',
    };
    let response = await page.request.post(server.appUrl + kSettings, { form, maxRedirects: 0 });
    assert.equal(response.status(), 403);
    assert.equal(response.headers()['cache-control'], 'no-store');
    response = await page.request.post(server.appUrl + kSettings, { form: { ...form, csrf_token: 'forged' }, maxRedirects: 0 });
    assert.equal(response.status(), 403);
    await page.goto(server.appUrl + kSettings);
    await page.getByText('You have no OAuth clients yet.').waitFor();

    // Secrets of an existing client: neither generated nor revoked without the token.
    const { clientId } = await createClient(page, { name: 'Guarded' });
    response = await page.request.post(`${server.appUrl}${kSettings}/${clientId}/secrets`, { form: {}, maxRedirects: 0 });
    assert.equal(response.status(), 403);
    const shown = await server.cli(['admin', 'oauth-client', 'show', clientId]);
    assert.equal(shown.secrets.length, 1);
    response = await page.request.post(
      `${server.appUrl}${kSettings}/${clientId}/secrets/${shown.secrets[0].secret_id}/revoke`, { form: {}, maxRedirects: 0 });
    assert.equal(response.status(), 403);
    assert.equal((await server.cli(['admin', 'oauth-client', 'show', clientId])).secrets.length, 1);

    // Another user's client is not found, even with a valid token for the other user's session.
    const other = await signedInPage();
    const missing = await other.page.goto(`${server.appUrl}${kSettings}/${clientId}`);
    assert.equal(missing.status(), 404);
    await other.context.close();
    await context.close();
  });
});
