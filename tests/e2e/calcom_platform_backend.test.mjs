// A platform customer's backend written from Cal.com's API v2 document, run unchanged against
// Rendezvous. It speaks as such a backend does — plain fetch, Cal.com's paths and headers
// (`x-cal-client-id` and `x-cal-secret-key` for the OAuth client's own routes, `Authorization:
// Bearer <managed user's access token>` for the user's, `cal-api-version` with the date Cal.com's
// document asks for) — and does what a platform does before and during a booking:
//
//   1. (operator) an OAuth client is made with the admin command line and approved;
//   2. creates two managed users, lists them, refreshes one's tokens with
//      POST /v2/oauth/{clientId}/refresh and reads /v2/me with the new access token;
//   3. subscribes an OAuth-client webhook (a loopback receiver that verifies every delivery with
//      the `standardwebhooks` library and Cal.com's `x-cal-signature-256`);
//   4. makes an event type as the refreshed managed user (with its token);
//   5. a second, anonymous client lists /v2/slots and sees the slot; the backend reserves it
//      (POST /v2/slots/reservations, as the event type's owner); the second client's /v2/slots no
//      longer shows it and its booking of it is 409;
//   6. the backend books the slot as the holder (`reservationUid`, 201) and the receiver gets
//      BOOKING_CREATED for that managed user's booking.
//
// Every answer of an operation Cal.com's document has is validated against it (status and body;
// the document read as tools/calcom-readings.mjs says, as e2e_calcom_contract does), and the
// `cal-api-version` the script sends must be the date the document asks for. Slot reservations
// and GET /v2/slots are newer than the peers' document (shared/peers/README.md): their answers
// are validated against the shapes DESIGN §10 and docs/calcom-compatibility.md record (below).
// Error answers are not Cal.com's to describe (its document lists successes only): they are held
// to our envelope (DESIGN §4).
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';

import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { Webhook } from 'standardwebhooks';

import { correctedCalcom, kReadings, matchScore, operations } from '../../tools/calcom-readings.mjs';
import { calcomVersion, checkAnswer, loadCalcom, validatorFor } from './calcom_document.mjs';
import { TestServer, nextMonday } from './harness.mjs';

const kTestTimeoutMs = 120_000;
const kAwaitMs = 20_000;
const kWebhookSecret = 'whsec_platform-backend-secret';

// --- Shapes of the operations the peers' document does not have --------------------------------

const kIsoUtc = { type: 'string', format: 'date-time' };
// A success answer whose `data` validates against `data`.
const successWith = (data) => ({
  type: 'object', required: ['status', 'data'], properties: { status: { const: 'success' }, data },
});
// A reservation as DESIGN §10 and docs/calcom-compatibility.md ("Slot reservations", "Matches")
// record it, after Cal.com's current ReserveSlotOutput_2024_09_04 / GetReservedSlotOutput_2024_09_04:
// `data = {eventTypeId, slotStart, slotEnd, slotDuration, reservationUid, reservationDuration,
// reservationUntil}`, times ISO 8601 UTC, durations in minutes. Extra members are allowed, as
// Cal.com's schemas allow them.
const kReservationAnswer = successWith({
  type: 'object',
  required: ['eventTypeId', 'slotStart', 'slotEnd', 'slotDuration', 'reservationUid', 'reservationDuration', 'reservationUntil'],
  properties: {
    eventTypeId: { type: 'number' },
    slotStart: kIsoUtc,
    slotEnd: kIsoUtc,
    slotDuration: { type: 'number', minimum: 1 },
    reservationUid: { type: 'string', minLength: 1 },
    reservationDuration: { type: 'number', minimum: 1 },
    reservationUntil: kIsoUtc,
  },
});
// DELETE /v2/slots/reservations/{uid}: 200 `{"status":"success"}` (DESIGN §10).
const kSuccessOnly = { type: 'object', required: ['status'], properties: { status: { const: 'success' } } };
// GET /v2/slots (Cal.com's current slots, version 2024-09-04; docs/bookings.md, "Slots"): the free
// starts grouped by date, `data = {"YYYY-MM-DD": [{start}]}`.
const kSlotsAnswer = successWith({
  type: 'object',
  propertyNames: { pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
  additionalProperties: { type: 'array', items: { type: 'object', required: ['start'], properties: { start: kIsoUtc } } },
});
// Every error outside the token endpoint (DESIGN §4).
const kErrorEnvelope = {
  type: 'object',
  required: ['status', 'error'],
  properties: {
    status: { const: 'error' },
    error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } },
  },
};

let server;
let receiver;
let calcom;  // Cal.com's document as published
let calcomOps;  // Cal.com's operations, {method, path, op}
let calcomAjv;  // Cal.com's document, corrected
const calcomAnswers = [];  // {t, answer, label}: the answers validated against Cal.com's document
const ownAjv = new Ajv({ strict: false, allErrors: true, logger: false });
addFormats(ownAjv);
const failures = [];  // answers that do not validate
const checked = [];  // "METHOD path -> status (against what)"
const deliveries = [];  // {path, headers, body: Buffer}

function startReceiver() {
  const srv = http.createServer((req, res) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size <= 1 << 20) chunks.push(c);
    });
    req.on('end', () => {
      deliveries.push({ path: req.url, headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
    });
  });
  return new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => resolve({ srv, url: `http://127.0.0.1:${srv.address().port}` }));
  });
}

// Cal.com's operation a request of the script is (the most literal template that matches the path).
function calcomOperation(method, pathname) {
  let best;
  let bestScore = Infinity;
  for (const t of calcomOps) {
    if (t.method !== method.toLowerCase()) continue;
    const score = matchScore(t.path, pathname);
    if (score >= 0 && score < bestScore) { best = t; bestScore = score; }
  }
  return best;
}

// One request as the backend sends it. `version`: the `cal-api-version` the script sends (the
// date Cal.com's documentation asks for). `shape`: for an operation Cal.com's document does not
// have, the JSON schema its success answer must validate against. The answer is validated, and
// its status must be `expect`.
async function calApi(method, pathname, { version, headers = {}, body, query, bearer, shape, expect, what = '' } = {}) {
  const url = new URL(server.apiUrl + pathname);
  for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, String(v));
  const h = { ...headers };
  if (version) h['cal-api-version'] = version;
  if (bearer) h.Authorization = `Bearer ${bearer}`;
  if (body !== undefined) h['Content-Type'] = 'application/json';
  const res = await fetch(url, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  const answer = { status: res.status, json, text, contentType: res.headers.get('content-type') ?? '' };
  const label = `${method} ${pathname}${what ? ` (${what})` : ''} -> ${res.status}`;

  const t = calcomOperation(method, pathname);
  const required = t && calcomVersion(t.op);
  if (required) assert.equal(version, required, `${method} ${t.path}: Cal.com's document asks for cal-api-version ${required}`);
  let why;
  let against;
  if (res.status >= 400) {
    against = 'our error envelope';
    const validate = ownAjv.compile(kErrorEnvelope);
    if (!validate(json)) why = `${ownAjv.errorsText(validate.errors)}: ${text.slice(0, 300)}`;
  } else if (t) {
    against = `Cal.com ${t.method.toUpperCase()} ${t.path}`;
    why = checkAnswer(calcomAjv, t, answer);
    if (!why) calcomAnswers.push({ t, answer, label });
  } else {
    assert.ok(shape, `${method} ${pathname} is not in Cal.com's document: the script names the shape of its answer`);
    against = 'DESIGN §10 / docs/calcom-compatibility.md';
    const validate = ownAjv.compile(shape);
    if (!validate(json)) why = `${ownAjv.errorsText(validate.errors)}: ${text.slice(0, 300)}`;
  }
  checked.push(`${label} [${against}]`);
  if (why) failures.push(`${label}, against ${against}: ${why}`);
  assert.equal(res.status, expect, `${label}: ${text.slice(0, 600)}`);
  return json;
}

// Deliveries to `path`, waiting (bounded) until one satisfies `pred`.
async function awaitDelivery(path, pred) {
  const deadline = Date.now() + kAwaitMs;
  for (;;) {
    const got = deliveries.filter((d) => d.path === path).find(pred);
    if (got) return got;
    if (Date.now() > deadline) {
      assert.fail(`no matching delivery to ${path} within ${kAwaitMs} ms; got ${deliveries.map((d) => d.body.toString('utf8').slice(0, 200)).join(' | ')}`);
    }
    await delay(50);
  }
}

before(async () => {
  calcom = loadCalcom();
  calcomOps = operations(calcom);
  calcomAjv = validatorFor(correctedCalcom(calcom));
  receiver = await startReceiver();
  server = await TestServer.start({
    serverExtra: '  version_header: cal-api-version',
    plugins: ['  oauth: {}', '  bookings: {}', '  webhooks: { allow_private_networks: true }'].join('\n'),
  });
}, { timeout: kTestTimeoutMs });

after(async () => {
  if (server) await server.stop();
  if (receiver) await new Promise((resolve) => { receiver.srv.closeAllConnections?.(); receiver.srv.close(resolve); });
});

test('a backend written from Cal.com\'s document runs unchanged', { timeout: kTestTimeoutMs }, async () => {
  // 1. The operator makes the platform's OAuth client and approves it.
  const owner = await server.createUser({ email: 'platform-owner@example.com', name: 'Platform Owner', password: 'correct horse battery staple' });
  const client = await server.cli(['admin', 'oauth-client', 'create', '--owner-id', String(owner.id), '--name', 'Acme Platform',
    '--redirect-uri', 'https://acme.example/cal/callback', '--scope', 'PROFILE_READ', '--scope', 'EVENT_TYPE_READ',
    '--scope', 'EVENT_TYPE_WRITE', '--scope', 'BOOKING_READ', '--scope', 'BOOKING_WRITE']);
  await server.cli(['admin', 'oauth-client', 'review', client.client_id, '--accept']);

  // --- From here on: the platform's backend, with what the operator handed it. ---------------
  const clientId = client.client_id;
  const platform = { 'x-cal-client-id': clientId, 'x-cal-secret-key': client.client_secret };

  // 2. A managed user for each of the platform's own users.
  const created = {};
  for (const [key, email, name] of [['ann', 'ann@acme.example', 'Ann Acme'], ['ben', 'ben@acme.example', 'Ben Acme']]) {
    const made = await calApi('POST', `/v2/oauth-clients/${clientId}/users`, {
      headers: platform, expect: 201, what: key,
      body: { email, name, timeZone: 'Europe/Rome', timeFormat: 24, weekStart: 'Monday', locale: 'it' },
    });
    assert.equal(made.data.user.email, email);
    assert.ok(made.data.accessTokenExpiresAt > Date.now(), `an access token expiry in epoch ms: ${made.data.accessTokenExpiresAt}`);
    created[key] = made.data;
  }
  const listed = await calApi('GET', `/v2/oauth-clients/${clientId}/users`, { headers: platform, query: { limit: 10 }, expect: 200 });
  assert.deepEqual(listed.data.map((u) => u.id).sort((a, b) => a - b),
    [created.ann.user.id, created.ben.user.id].sort((a, b) => a - b), 'the client lists its two managed users');

  // Ben's tokens are refreshed (the platform keeps them fresh), and the new access token is his.
  const refreshed = (await calApi('POST', `/v2/oauth/${clientId}/refresh`, {
    headers: { 'x-cal-secret-key': client.client_secret }, body: { refreshToken: created.ben.refreshToken }, expect: 200,
  })).data;
  assert.notEqual(refreshed.accessToken, created.ben.accessToken);
  assert.notEqual(refreshed.refreshToken, created.ben.refreshToken);
  const benToken = refreshed.accessToken;
  const me = await calApi('GET', '/v2/me', { bearer: benToken, expect: 200, what: 'the refreshed token' });
  assert.equal(me.data.id, created.ben.user.id);

  // 3. One webhook for the bookings of every managed user.
  const hook = (await calApi('POST', `/v2/oauth-clients/${clientId}/webhooks`, {
    headers: platform, expect: 201,
    body: { subscriberUrl: `${receiver.url}/cal-webhooks`, triggers: ['BOOKING_CREATED'], active: true, secret: kWebhookSecret },
  })).data;
  assert.equal(hook.subscriberUrl, `${receiver.url}/cal-webhooks`);

  // 4. Ben's event type, made as Ben.
  const eventType = (await calApi('POST', '/v2/event-types', {
    version: '2024-06-14', bearer: benToken, expect: 201,
    body: { title: 'Consultation', slug: 'consultation', lengthInMinutes: 30, description: 'Talk to Ben' },
  })).data;
  assert.equal(eventType.ownerId, created.ben.user.id);

  // 5. A second client (another visitor's booking page, no credentials) sees Ben's slots.
  const day = nextMonday();
  const slotQuery = { eventTypeId: eventType.id, start: day, end: day, timeZone: 'Europe/Rome' };
  const visitorSlots = async (what) => (await calApi('GET', '/v2/slots', {
    version: '2024-09-04', query: slotQuery, shape: kSlotsAnswer, expect: 200, what,
  })).data[day]?.map((s) => s.start) ?? [];
  const offered = await visitorSlots('before the reservation');
  assert.ok(offered.length >= 2, `Ben's slots on ${day}: ${offered.join(', ')}`);
  const slotStart = offered[1];

  // The backend holds the slot while its user types their details (as the event type's owner,
  // so it may say for how long).
  const reservation = (await calApi('POST', '/v2/slots/reservations', {
    version: '2024-09-04', bearer: benToken, shape: kReservationAnswer, expect: 201,
    body: { eventTypeId: eventType.id, slotStart, reservationDuration: 10 },
  })).data;
  assert.equal(Date.parse(reservation.slotStart), Date.parse(slotStart));
  assert.equal(reservation.reservationDuration, 10);
  const held = (await calApi('GET', `/v2/slots/reservations/${reservation.reservationUid}`, {
    version: '2024-09-04', shape: kReservationAnswer, expect: 200,
  })).data;
  assert.equal(held.reservationUid, reservation.reservationUid);

  // Meanwhile the slot is invisible to the second client, and its booking of it is refused.
  const during = await visitorSlots('while held');
  assert.ok(!during.includes(slotStart), `the held slot ${slotStart} is not offered: ${during.join(', ')}`);
  assert.ok(during.includes(offered[0]), 'the other slots still are');
  const refused = await calApi('POST', '/v2/bookings', {
    version: '2024-08-13', expect: 409, what: 'second client, held slot',
    body: { start: slotStart, eventTypeId: eventType.id, attendee: { name: 'Val Visitor', email: 'val@example.com', timeZone: 'Europe/Rome' } },
  });
  assert.equal(refused.error.code, 'slot_unavailable', JSON.stringify(refused));

  // 6. The holder's booking, with the reservation's uid.
  const booking = (await calApi('POST', '/v2/bookings', {
    version: '2024-08-13', expect: 201, what: 'the holder',
    body: {
      start: slotStart, eventTypeId: eventType.id, reservationUid: reservation.reservationUid,
      attendee: { name: 'Hana Holder', email: 'hana@example.com', timeZone: 'Europe/Rome', language: 'it' },
    },
  })).data;
  assert.equal(Date.parse(booking.start), Date.parse(slotStart));
  const read = (await calApi('GET', `/v2/bookings/${booking.uid}`, { version: '2024-08-13', bearer: benToken, expect: 200 })).data;
  assert.equal(read.status, 'accepted');
  assert.deepEqual(read.hosts.map((x) => x.id), [created.ben.user.id], 'Ben hosts the booking');
  // The hold became the booking: it is gone.
  await calApi('GET', `/v2/slots/reservations/${reservation.reservationUid}`, { version: '2024-09-04', expect: 404, what: 'after the booking' });

  // The webhook receives BOOKING_CREATED for Ben's booking, signed with the webhook's secret.
  const delivery = await awaitDelivery('/cal-webhooks', (d) => {
    try { return JSON.parse(d.body).payload?.uid === booking.uid; } catch { return false; }
  });
  const event = new Webhook(new TextEncoder().encode(kWebhookSecret), { format: 'raw' }).verify(delivery.body, delivery.headers);
  assert.equal(event.triggerEvent, 'BOOKING_CREATED');
  assert.equal(event.payload.organizer.email, created.ben.user.email);
  assert.equal(event.payload.organizer.id, created.ben.user.id);
  assert.equal(delivery.headers['x-cal-signature-256'],
    createHmac('sha256', Buffer.from(kWebhookSecret, 'utf8')).update(delivery.body).digest('hex'), 'Cal.com\'s signature header');

  // Tidy up as the backend would: the hold of another slot, made and released.
  const spare = (await calApi('POST', '/v2/slots/reservations', {
    version: '2024-09-04', shape: kReservationAnswer, expect: 201, what: 'anonymous',
    body: { eventTypeId: eventType.id, slotStart: offered[0] },
  })).data;
  await calApi('DELETE', `/v2/slots/reservations/${spare.reservationUid}`, { version: '2024-09-04', shape: kSuccessOnly, expect: 200 });
  assert.ok((await visitorSlots('after the release')).includes(offered[0]), 'a released slot is offered again');

  // Where Rendezvous differs (docs/calcom-compatibility.md, "Slot reservations"): a hold's length
  // is the event type owner's to set (DESIGN §10), and a platform client's own headers are not the
  // owner's credentials, so a `reservationDuration` sent with them alone is 401 and nothing is held.
  await calApi('POST', '/v2/slots/reservations', {
    version: '2024-09-04', headers: platform, shape: kReservationAnswer, expect: 401, what: 'client headers and a duration',
    body: { eventTypeId: eventType.id, slotStart: offered[0], reservationDuration: 10 },
  });
  assert.ok((await visitorSlots('after the refused hold')).includes(offered[0]), 'a refused hold holds nothing');

  // Which readings and listed exceptions of tools/calcom-readings.mjs the answers needed: each
  // answer that passed is checked again without each entry.
  const needed = [];
  for (const r of kReadings.filter((x) => x.edit)) {
    const ajvWithout = validatorFor(correctedCalcom(calcom, new Set([r.id])));
    const ops = new Set(calcomAnswers.filter((a) => checkAnswer(ajvWithout, a.t, a.answer)).map((a) => `${a.t.method.toUpperCase()} ${a.t.path}`));
    if (ops.size) needed.push(`${r.kind === 'reading' ? `peers/README item ${r.item}` : `${r.kind} ${r.id}`} [${[...ops].sort().join(', ')}]`);
  }
  console.log(`answers checked (${checked.length}):\n  ${checked.join('\n  ')}\n` +
    `entries of tools/calcom-readings.mjs needed (${needed.length}):\n  ${needed.join('\n  ')}`);
  assert.deepEqual(failures, [], `answers that do not validate:\n${failures.join('\n')}`);
});
