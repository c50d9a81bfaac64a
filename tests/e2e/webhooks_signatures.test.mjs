// Webhook signatures checked by the reference Standard Webhooks library (`standardwebhooks`): a
// receiver on an ephemeral loopback port gets real deliveries from the real server (a public
// booking, then its cancellation) and verifies each with `new Webhook(key).verify(body, headers)`.
// Our HMAC key is the secret's UTF-8 bytes as given (DESIGN §6), never base64-decoded, so the
// library is handed exactly those bytes: as a raw key, and as the `whsec_<base64>` spelling that
// decodes to them. A tampered body, id or timestamp, and a wrong key, fail verification. After a
// secret rotation, pings verify with the old and the new secret during the grace, and with the
// new one alone after a rotation without grace.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';

import { Webhook, WebhookVerificationError } from 'standardwebhooks';

import { TestServer } from './harness.mjs';

const kTestTimeoutMs = 90_000;
const kAwaitMs = 20_000;
const kPassword = 'correct horse battery staple';
// Non-ASCII on purpose: the key is the UTF-8 bytes, which a string spelling could get wrong.
const kSecret = 'sécret-ключ-🔑';
// Looks like a Standard Webhooks secret; we still use its characters as the key, not what they decode to.
const kWhsecLike = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const kAttendee = 'Zoë "Q" 日本';

let server;
let receiver;
let apiKey;
let eventTypeId;
const received = [];  // {path, headers, body: Buffer}

function startReceiver() {
  const srv = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url, headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
    });
  });
  return new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => resolve({ srv, url: `http://127.0.0.1:${srv.address().port}` }));
  });
}

async function api(method, path, body, token = apiKey) {
  const headers = { 'Content-Type': 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(`${server.apiUrl}${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null, text };
}

async function createWebhook(body) {
  const r = await api('POST', '/v2/webhooks', { active: true, triggers: ['BOOKING_CREATED', 'BOOKING_CANCELLED'], ...body });
  assert.equal(r.status, 201, r.text);
  return r.json.data;
}

// Deliveries to `path`, waiting (bounded) until there are `count` of them.
async function awaitDeliveries(path, count) {
  const deadline = Date.now() + kAwaitMs;
  for (;;) {
    const got = received.filter((d) => d.path === path);
    if (got.length >= count) return got;
    if (Date.now() > deadline) assert.fail(`${path}: ${got.length} of ${count} deliveries within ${kAwaitMs} ms`);
    await delay(50);
  }
}

// "YYYY-MM-DD" of the first Monday at least a week ahead (UTC): inside the implicit working hours.
function nextMonday() {
  const d = new Date(Date.now() + 7 * 86_400_000);
  while (d.getUTCDay() !== 1) d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

function hmacHex(key, body) {
  return createHmac('sha256', Buffer.from(key, 'utf8')).update(body).digest('hex');
}

function assertRefused(wh, body, headers, why) {
  assert.throws(() => wh.verify(body, headers), WebhookVerificationError, why);
}

before(async () => {
  receiver = await startReceiver();
  server = await TestServer.start({
    plugins: '  webhooks:\n    allow_private_networks: true\n    retry_schedule: [1, 1]\n',
  });
  const owner = await server.createUser({ email: 'owner@example.com', name: 'Olga Owner', password: kPassword });
  apiKey = await server.createApiKey(owner.id);
  const et = await api('POST', '/v2/event-types', { title: 'Intro', slug: 'intro', lengthInMinutes: 30 });
  assert.equal(et.status, 201, et.text);
  eventTypeId = et.json.data.id;
}, { timeout: kTestTimeoutMs });

after(async () => {
  if (server) await server.stop();
  if (receiver) await new Promise((resolve) => receiver.srv.close(resolve));
});

test('every delivery verifies with the standardwebhooks library; tampering does not', { timeout: kTestTimeoutMs }, async () => {
  await createWebhook({ subscriberUrl: `${receiver.url}/json`, secret: kSecret });
  await createWebhook({ subscriberUrl: `${receiver.url}/whsec`, secret: kWhsecLike });
  await createWebhook({
    subscriberUrl: `${receiver.url}/text`,
    secret: kSecret,
    payloadTemplate: 'Booking for {{attendees.0.name}} ({{triggerEvent}})',
  });

  const booked = await api('POST', '/v2/bookings', {
    start: `${nextMonday()}T09:00:00.000Z`,
    eventTypeId,
    attendee: { name: kAttendee, email: 'zoe@example.com', timeZone: 'UTC' },
  }, '');
  assert.equal(booked.status, 201, booked.text);
  const { uid } = booked.json.data;
  const cancelled = await api('POST', `/v2/bookings/${uid}/cancel`, { cancellationReason: 'Ill' }, '');
  assert.equal(cancelled.status, 200, cancelled.text);

  // The secret's UTF-8 bytes, handed over as a raw key and as the whsec_ spelling that decodes to them.
  const keyBytes = new TextEncoder().encode(kSecret);
  const verifiers = [
    new Webhook(keyBytes, { format: 'raw' }),
    new Webhook(`whsec_${Buffer.from(kSecret, 'utf8').toString('base64')}`),
  ];
  const wrongKey = new Webhook(new TextEncoder().encode('not-the-secret'), { format: 'raw' });

  const json = await awaitDeliveries('/json', 2);
  assert.deepEqual(json.map((d) => JSON.parse(d.body).triggerEvent).sort(), ['BOOKING_CANCELLED', 'BOOKING_CREATED']);
  for (const d of json) {
    assert.equal(d.headers['content-type'], 'application/json');
    for (const wh of verifiers) {
      const event = wh.verify(d.body, d.headers);
      assert.equal(event.payload.uid, uid);
      assert.equal(event.payload.attendees[0].name, kAttendee);
    }
    assert.equal(d.headers['x-cal-signature-256'], hmacHex(kSecret, d.body));
    assertRefused(verifiers[0], Buffer.concat([d.body, Buffer.from(' ')]), d.headers, 'a body with a byte added');
    const altered = Buffer.from(d.body.toString('utf8').replace('Olga Owner', 'Olga 0wner'));
    assert.notDeepEqual(altered, d.body);
    assertRefused(verifiers[0], altered, d.headers, 'a body with a letter changed');
    assertRefused(verifiers[0], d.body, { ...d.headers, 'webhook-id': `${d.headers['webhook-id']}x` }, 'another webhook-id');
    assertRefused(verifiers[0], d.body, { ...d.headers, 'webhook-timestamp': String(Number(d.headers['webhook-timestamp']) - 1) },
      'another timestamp');
    assertRefused(wrongKey, d.body, d.headers, 'another key');
  }
  // Two events, two ids.
  assert.notEqual(json[0].headers['webhook-id'], json[1].headers['webhook-id']);

  // A non-JSON rendering is signed over the same bytes it is sent as.
  for (const d of await awaitDeliveries('/text', 2)) {
    assert.equal(d.headers['content-type'], 'text/plain');
    assert.match(d.body.toString('utf8'), /^Booking for Zoë \\"Q\\" 日本 \(BOOKING_(CREATED|CANCELLED)\)$/);
    for (const wh of verifiers) assert.equal(wh.verify(d.body, d.headers, { jsonParse: false }), undefined);
    assertRefused(verifiers[0], Buffer.from(`${d.body.toString('utf8')}!`), d.headers, 'a text body with a character added');
  }

  // A whsec_-looking secret is still used as the characters it is: the library verifies with those
  // bytes as a raw key, and refuses when it base64-decodes them as its default spelling would.
  for (const d of await awaitDeliveries('/whsec', 2)) {
    assert.equal(new Webhook(new TextEncoder().encode(kWhsecLike), { format: 'raw' }).verify(d.body, d.headers).payload.uid, uid);
    assertRefused(new Webhook(kWhsecLike), d.body, d.headers, 'the base64-decoded spelling');
    assert.equal(d.headers['x-cal-signature-256'], hmacHex(kWhsecLike, d.body));
  }
});

test('after a rotation both secrets verify during the grace; with grace 0 only the new one', { timeout: kTestTimeoutMs }, async () => {
  const hook = await createWebhook({ subscriberUrl: `${receiver.url}/rotated`, secret: kSecret });
  const raw = (key) => new Webhook(new TextEncoder().encode(key), { format: 'raw' });
  let pings = 0;
  const ping = async () => {
    const r = await api('POST', `/v2/webhooks/${hook.id}/ping`, {});
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.ok, true, r.text);
    pings += 1;
    const got = await awaitDeliveries('/rotated', pings);
    return got[pings - 1];
  };

  const rotated = await api('POST', `/v2/webhooks/${hook.id}/secret/rotate`, {});
  assert.equal(rotated.status, 200, rotated.text);
  const fresh = rotated.json.data.secret;
  assert.notEqual(fresh, kSecret);
  const during = await ping();
  assert.equal(during.headers['webhook-signature'].split(' ').length, 2, during.headers['webhook-signature']);
  for (const key of [fresh, kSecret]) assert.equal(raw(key).verify(during.body, during.headers).triggerEvent, 'PING');
  assert.equal(during.headers['x-cal-signature-256'], hmacHex(fresh, during.body));
  assertRefused(raw('not-the-secret'), during.body, during.headers, 'another key');

  const again = await api('POST', `/v2/webhooks/${hook.id}/secret/rotate`, { graceSeconds: 0 });
  assert.equal(again.status, 200, again.text);
  const newest = again.json.data.secret;
  const after = await ping();
  assert.equal(raw(newest).verify(after.body, after.headers).triggerEvent, 'PING');
  assertRefused(raw(fresh), after.body, after.headers, 'the secret replaced without grace');
  assertRefused(raw(kSecret), after.body, after.headers, 'the first secret');
});
