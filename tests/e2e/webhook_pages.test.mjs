// The webhook pages in a real browser (DESIGN §4): a person creates a webhook through the form, a
// booking's delivery to a real loopback receiver shows on the webhook's page with its attempts, a
// failed one is retried, "Send test event" pings; another user gets 404, a POST without the CSRF
// token is refused, bad input shows the form again with a message and stores nothing. The pages
// and the API share one service layer: what the form saved, the API shows. Screenshots at 1280 and
// 390 px go to RDV_E2E_SCREENSHOTS when it names a folder.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';

import { TestServer, launchBrowser, signIn } from './harness.mjs';

const kTestTimeoutMs = 60_000;
const kStepTimeoutMs = 15_000;
const kAwaitMs = 20_000;
const kSettings = '/settings/developer/webhooks';
const kPassword = 'correct horse battery staple';

let server;
let browser;
let receiver;
let userCounter = 0;
const received = [];        // {path, headers, body}
const failuresLeft = {};    // path -> how many more requests answer 500

function startReceiver() {
  const srv = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ path: req.url, headers: req.headers, body });
      if ((failuresLeft[req.url] ?? 0) > 0) {
        failuresLeft[req.url] -= 1;
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end('receiver <b>down</b>');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
    });
  });
  return new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => resolve({ srv, url: `http://127.0.0.1:${srv.address().port}` }));
  });
}

async function api(method, route, body, token) {
  const headers = { 'Content-Type': 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(`${server.apiUrl}${route}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null, text };
}

// A browser context of its own (own cookies) with one page, signed in as a new user who also has an
// API key.
async function signedInPage({ width = 1280, height = 900 } = {}) {
  userCounter += 1;
  const email = `hooks${userCounter}-${Date.now()}@example.com`;
  const user = await server.createUser({ email, name: `Hook User ${userCounter}`, password: kPassword });
  const apiKey = await server.createApiKey(user.id);
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  page.setDefaultTimeout(kStepTimeoutMs);
  page.setDefaultNavigationTimeout(kStepTimeoutMs);
  page.dialogs = [];
  page.on('dialog', (dialog) => {
    page.dialogs.push(dialog.message());
    dialog.dismiss().catch(() => {});
  });
  await signIn(page, server, { email, password: kPassword }, kSettings);
  return { page, context, user, apiKey };
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

async function fillForm(page, { url, secret = '', template = '', triggers = ['BOOKING_CREATED'], active = true }) {
  await page.getByLabel('Subscriber URL').fill(url);
  await page.getByLabel('Secret', { exact: true }).fill(secret);
  await page.getByLabel('Payload template').fill(template);
  for (const box of await page.locator('input[name^="trigger_"]').all()) await box.uncheck();
  for (const t of triggers) await page.getByLabel(t, { exact: true }).check();
  await page.getByLabel('Active', { exact: true }).setChecked(active);
}

// Creates a webhook through the list page's form; returns its id.
async function createWebhook(page, fields) {
  await page.goto(server.appUrl + kSettings);
  await fillForm(page, fields);
  const response = await submit(page, page.getByRole('button', { name: 'Save' }));
  assert.equal(response.status(), 303);
  const match = new URL(page.url()).pathname.match(/^\/settings\/developer\/webhooks\/(\d+)$/);
  assert.ok(match, page.url());
  await page.getByText('Webhook created.').waitFor();
  return Number(match[1]);
}

// Reloads the webhook's page until its newest delivery has `status` (bounded); returns that row.
async function awaitNewestDelivery(page, webhookId, status) {
  const deadline = Date.now() + kAwaitMs;
  for (;;) {
    await page.goto(`${server.appUrl}${kSettings}/${webhookId}`);
    const row = page.locator('#deliveries tbody tr').first();
    if (await row.count() && (await row.locator('td[data-label="Status"]').textContent()).trim() === status) return row;
    if (Date.now() > deadline) assert.fail(`no ${status} delivery on webhook ${webhookId} within ${kAwaitMs} ms`);
    await delay(100);
  }
}

async function attemptsOf(row) {
  return (await row.locator('ol.attempts > li').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());
}

function nextMonday() {
  const d = new Date(Date.now() + 7 * 86_400_000);
  while (d.getUTCDay() !== 1) d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

async function screenshot(page, name) {
  const dir = process.env.RDV_E2E_SCREENSHOTS || server.dir;
  await page.screenshot({ path: path.join(dir, `whpages-${name}.png`), fullPage: true });
}

// Nothing wider than the window: the page reads without scrolling sideways.
async function assertNoSidewaysScroll(page) {
  const { scroll, width } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth, width: window.innerWidth,
  }));
  assert.ok(scroll <= width, `the page is ${scroll} px wide in a ${width} px window`);
}

before(async () => {
  receiver = await startReceiver();
  browser = await launchBrowser();
  // One retry a second later: a delivery to a receiver answering 500 twice fails in about a second.
  server = await TestServer.start({
    plugins: '  oauth: {}\n  webhooks:\n    allow_private_networks: true\n    retry_schedule: [1]\n',
  });
}, { timeout: 60_000 });

after(async () => {
  await browser?.close();
  await server?.stop();
  if (receiver) await new Promise((resolve) => receiver.srv.close(resolve));
}, { timeout: 30_000 });

describe('webhook pages', { timeout: kTestTimeoutMs * 5 }, () => {
  test('a webhook is created through the form, its deliveries shown, a failed one retried, a test event sent',
    { timeout: kTestTimeoutMs }, async () => {
      const { page, context, apiKey } = await signedInPage();
      await page.getByText('You have no webhooks yet.').waitFor();
      const url = `${receiver.url}/flaky`;
      const id = await createWebhook(page, { url, secret: 's3cret', triggers: ['BOOKING_CREATED', 'BOOKING_CANCELLED'] });
      await page.getByText('No deliveries yet.').waitFor();
      assert.equal((await page.locator('#webhook_state').textContent()).trim(), 'active');

      // The API sees what the form saved.
      const listed = await api('GET', '/v2/webhooks', null, apiKey);
      assert.equal(listed.status, 200, listed.text);
      assert.equal(listed.json.data.length, 1);
      const hook = listed.json.data[0];
      assert.equal(hook.id, id);
      assert.equal(hook.subscriberUrl, url);
      assert.deepEqual(hook.triggers, ['BOOKING_CREATED', 'BOOKING_CANCELLED']);
      assert.equal(hook.active, true);
      assert.equal(hook.secret, 's3cret');
      assert.equal(hook.payloadTemplate, null);

      // A booking; the receiver answers 500 twice, so the delivery fails after its one retry.
      failuresLeft['/flaky'] = 2;
      const et = await api('POST', '/v2/event-types', { title: 'Intro', slug: `intro-${id}`, lengthInMinutes: 30 }, apiKey);
      assert.equal(et.status, 201, et.text);
      const booked = await api('POST', '/v2/bookings', {
        start: `${nextMonday()}T09:00:00.000Z`, eventTypeId: et.json.data.id,
        attendee: { name: 'Ada Attendee', email: 'ada@example.com', timeZone: 'UTC' },
      });
      assert.equal(booked.status, 201, booked.text);

      let row = await awaitNewestDelivery(page, id, 'failed');
      assert.match(await row.locator('td[data-label="Trigger"]').textContent(), /BOOKING_CREATED/);
      let attempts = await attemptsOf(row);
      assert.equal(attempts.length, 2, attempts.join('\n'));
      for (const a of attempts) assert.match(a, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC · HTTP 500 in \d+ ms/);
      // The receiver's answer is shown as text.
      assert.ok((await page.content()).includes('receiver &lt;b&gt;down&lt;/b&gt;'));

      // Retry: queued, then sent; the receiver now answers 200.
      let response = await submit(page, row.getByRole('button', { name: 'Retry' }));
      assert.equal(response.status(), 303);
      await page.getByText('Delivery queued again').waitFor();
      row = await awaitNewestDelivery(page, id, 'succeeded');
      attempts = await attemptsOf(row);
      assert.equal(attempts.length, 3, attempts.join('\n'));
      assert.match(attempts[2], /HTTP 200 in \d+ ms/);
      assert.equal(await row.getByRole('button', { name: 'Retry' }).count(), 0, 'no Retry on a succeeded delivery');
      const deliveries = received.filter((d) => d.path === '/flaky');
      assert.equal(deliveries.length, 3);
      const last = deliveries[2];
      assert.equal(JSON.parse(last.body).triggerEvent, 'BOOKING_CREATED');
      assert.equal(last.headers['x-cal-signature-256'], createHmac('sha256', 's3cret').update(last.body).digest('hex'));
      assert.equal(last.headers['webhook-id'], deliveries[0].headers['webhook-id'], 'a retry keeps its webhook-id');

      // "Send test event": the ping, logged first.
      response = await submit(page, page.getByRole('button', { name: 'Send test event' }));
      assert.equal(response.status(), 303);
      await page.getByText('Test event sent: the receiver accepted it').waitFor();
      row = page.locator('#deliveries tbody tr').first();
      assert.match(await row.locator('td[data-label="Trigger"]').textContent(), /PING/);
      assert.equal((await row.locator('td[data-label="Status"]').textContent()).trim(), 'succeeded');
      assert.equal(JSON.parse(received.at(-1).body).triggerEvent, 'PING');
      await page.getByText('Deliveries 1–2 of 2, newest first.').waitFor();

      // A ping the receiver refuses is shown as failed, with a Retry button.
      failuresLeft['/flaky'] = 1;
      response = await submit(page, page.getByRole('button', { name: 'Send test event' }));
      assert.equal(response.status(), 303);
      assert.match(await page.getByRole('alert').textContent(), /did not accept it/);
      row = page.locator('#deliveries tbody tr').first();
      assert.equal((await row.locator('td[data-label="Status"]').textContent()).trim(), 'failed');
      assert.equal(await row.getByRole('button', { name: 'Retry' }).count(), 1);

      await screenshot(page, 'webhook-1280');
      await assertNoSidewaysScroll(page);
      await page.setViewportSize({ width: 390, height: 844 });
      await assertNoSidewaysScroll(page);
      await screenshot(page, 'webhook-390');
      await page.goto(server.appUrl + kSettings);
      await assertNoSidewaysScroll(page);
      await screenshot(page, 'list-390');
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(server.appUrl + kSettings);
      assert.match(await page.locator('tbody tr').first().textContent(), /BOOKING_CREATED, BOOKING_CANCELLED[\s\S]*active/);
      await screenshot(page, 'list-1280');

      // Edit: inactive, one trigger, a template; the secret kept.
      await page.goto(`${server.appUrl}${kSettings}/${id}`);
      assert.equal(await page.getByLabel('Secret', { exact: true }).inputValue(), '', 'the secret is not shown');
      await page.getByLabel('BOOKING_CANCELLED', { exact: true }).uncheck();
      await page.getByLabel('Active', { exact: true }).uncheck();
      await page.getByLabel('Payload template').fill('{"who":"{{organizer.name}}"}');
      response = await submit(page, page.getByRole('button', { name: 'Save' }));
      assert.equal(response.status(), 303);
      await page.getByText('Changes saved.').waitFor();
      assert.equal((await page.locator('#webhook_state').textContent()).trim(), 'inactive');
      const got = await api('GET', `/v2/webhooks/${id}`, null, apiKey);
      assert.equal(got.json.data.active, false);
      assert.deepEqual(got.json.data.triggers, ['BOOKING_CREATED']);
      assert.equal(got.json.data.payloadTemplate, '{"who":"{{organizer.name}}"}');
      assert.equal(got.json.data.secret, 's3cret');
      assert.equal(await page.getByLabel('Payload template').inputValue(), '{"who":"{{organizer.name}}"}');

      // Delete, confirmed.
      await page.getByLabel('Delete this webhook and its delivery log').check();
      response = await submit(page, page.getByRole('button', { name: 'Delete webhook' }));
      assert.equal(response.status(), 303);
      await page.getByText('Webhook deleted').waitFor();
      await page.getByText('You have no webhooks yet.').waitFor();
      assert.equal((await api('GET', `/v2/webhooks/${id}`, null, apiKey)).status, 404);
      assert.deepEqual(page.dialogs, []);
      await context.close();
    });

  test("another user's webhook is not found, in pages and API", { timeout: kTestTimeoutMs }, async () => {
    const owner = await signedInPage();
    const id = await createWebhook(owner.page, { url: `${receiver.url}/private` });
    const other = await signedInPage();
    const missing = await other.page.goto(`${server.appUrl}${kSettings}/${id}`);
    assert.equal(missing.status(), 404);
    assert.equal(missing.headers()['cache-control'], 'no-store');
    await other.page.getByText('There is no webhook of yours at this address.').waitFor();
    assert.ok(!(await other.page.content()).includes('/private'));

    // With the other user's own valid CSRF token: still 404, nothing sent or changed.
    await other.page.goto(server.appUrl + kSettings);
    const csrf = await other.page.locator('input[name="csrf_token"]').first().inputValue();
    const before = received.length;
    for (const action of ['', '/ping', '/delete', '/deliveries/1/retry']) {
      const r = await other.page.request.post(`${server.appUrl}${kSettings}/${id}${action}`, {
        form: { csrf_token: csrf, confirm: '1', subscriber_url: 'http://127.0.0.1:9/x', trigger_BOOKING_CREATED: '1' },
        maxRedirects: 0,
      });
      assert.equal(r.status(), 404, action);
    }
    assert.equal(received.length, before, 'no test event sent');
    assert.equal((await api('GET', `/v2/webhooks/${id}`, null, other.apiKey)).status, 404);
    const mine = await api('GET', `/v2/webhooks/${id}`, null, owner.apiKey);
    assert.equal(mine.status, 200);
    assert.equal(mine.json.data.subscriberUrl, `${receiver.url}/private`);
    await other.page.goto(server.appUrl + kSettings);
    await other.page.getByText('You have no webhooks yet.').waitFor();

    // Without a session: the login page.
    const anonymous = await browser.newContext();
    const page = await anonymous.newPage();
    await page.goto(`${server.appUrl}${kSettings}/${id}`);
    assert.equal(new URL(page.url()).pathname, '/auth/login');
    await anonymous.close();
    await owner.context.close();
    await other.context.close();
  });

  test('a POST without a valid CSRF token is refused with 403 and changes nothing', { timeout: kTestTimeoutMs }, async () => {
    const { page, context, apiKey } = await signedInPage();
    const form = { subscriber_url: `${receiver.url}/forged`, trigger_BOOKING_CREATED: '1', active: '1' };
    for (const token of [undefined, 'forged']) {
      const r = await page.request.post(server.appUrl + kSettings, {
        form: token ? { ...form, csrf_token: token } : form, maxRedirects: 0,
      });
      assert.equal(r.status(), 403);
      assert.equal(r.headers()['x-frame-options'], 'DENY');
      assert.match(await r.text(), /This form expired/);
    }
    assert.deepEqual((await api('GET', '/v2/webhooks', null, apiKey)).json.data, []);

    const id = await createWebhook(page, { url: `${receiver.url}/guarded` });
    const before = received.length;
    for (const action of ['', '/ping', '/delete', '/deliveries/1/retry']) {
      const r = await page.request.post(`${server.appUrl}${kSettings}/${id}${action}`, {
        form: { confirm: '1', subscriber_url: `${receiver.url}/changed`, trigger_BOOKING_CREATED: '1' }, maxRedirects: 0,
      });
      assert.equal(r.status(), 403, action);
    }
    assert.equal(received.length, before, 'no test event sent');
    const kept = await api('GET', `/v2/webhooks/${id}`, null, apiKey);
    assert.equal(kept.status, 200);
    assert.equal(kept.json.data.subscriberUrl, `${receiver.url}/guarded`);
    await context.close();
  });

  test('bad input shows the form again with a message, as typed and escaped, and stores nothing',
    { timeout: kTestTimeoutMs }, async () => {
      const { page, context, apiKey } = await signedInPage();
      const template = '<script>alert(1)</script> {{organizer.name}}';
      await fillForm(page, { url: `${receiver.url}/bad`, template, triggers: [] });
      let response = await submit(page, page.getByRole('button', { name: 'Save' }));
      assert.equal(response.status(), 400);
      assert.equal(response.headers()['content-security-policy'], "frame-ancestors 'none'");
      assert.equal((await page.getByRole('alert').textContent()).trim(), 'Choose at least one trigger.');
      assert.equal(await page.getByLabel('Subscriber URL').inputValue(), `${receiver.url}/bad`);
      assert.equal(await page.getByLabel('Payload template').inputValue(), template);
      assert.ok(!(await page.content()).includes('<script>alert(1)</script>'));

      await fillForm(page, { url: 'ftp://files.example.com/in' });
      response = await submit(page, page.getByRole('button', { name: 'Save' }));
      assert.equal(response.status(), 400);
      assert.equal((await page.getByRole('alert').textContent()).trim(), 'Subscriber URL must be an absolute http or https URL');
      assert.ok(await page.getByLabel('BOOKING_CREATED', { exact: true }).isChecked());

      await fillForm(page, { url: 'https://hooks.example.com/in#part', secret: 'kept as typed' });
      response = await submit(page, page.getByRole('button', { name: 'Save' }));
      assert.equal(response.status(), 400);
      assert.equal((await page.getByRole('alert').textContent()).trim(), 'Subscriber URL must not contain a fragment');
      assert.equal(await page.getByLabel('Secret', { exact: true }).inputValue(), 'kept as typed');
      assert.deepEqual((await api('GET', '/v2/webhooks', null, apiKey)).json.data, []);

      // A second webhook to the same URL: 409, the first one untouched.
      await createWebhook(page, { url: `${receiver.url}/twice` });
      await page.goto(server.appUrl + kSettings);
      await fillForm(page, { url: `${receiver.url}/twice`, triggers: ['BOOKING_RESCHEDULED'] });
      response = await submit(page, page.getByRole('button', { name: 'Save' }));
      assert.equal(response.status(), 409);
      assert.match(await page.getByRole('alert').textContent(), /already have a webhook with this subscriber URL/);
      const list = (await api('GET', '/v2/webhooks', null, apiKey)).json.data;
      assert.equal(list.length, 1);
      assert.deepEqual(list[0].triggers, ['BOOKING_CREATED']);

      // Deleting needs the confirmation box (the browser requires it; the server too).
      const r = await page.request.post(`${server.appUrl}${kSettings}/${list[0].id}/delete`, {
        form: { csrf_token: await page.locator('input[name="csrf_token"]').first().inputValue() }, maxRedirects: 0,
      });
      assert.equal(r.status(), 400);
      assert.match(await r.text(), /Tick the box to confirm the deletion/);
      assert.equal((await api('GET', '/v2/webhooks', null, apiKey)).json.data.length, 1);
      assert.deepEqual(page.dialogs, []);
      await context.close();
    });
});
