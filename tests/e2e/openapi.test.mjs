// The API description (GET /v2/openapi.json, written in docs/openapi.yaml) against the real server:
// - it passes a standard OpenAPI 3.1 validator (@readme/openapi-parser);
// - its paths and methods are exactly the routes the server registers on the api listener (the
//   route table it logs at debug level), both ways: a route without a description fails, and so
//   does a description of a route that does not exist;
// - every answer of the traffic below (each route, a success and an error) is checked against the
//   document: the status must be one the operation lists, and the body must match that answer's
//   JSON schema (ajv, draft 2020-12, which OpenAPI 3.1's schemas are), with the headers the
//   document requires. Every operation must have been seen answering both a 2xx/3xx and a 4xx,
//   except the few listed with their reason;
// - the deliveries a loopback receiver gets (pings, a booking event) match the `webhooks` section.
import assert from 'node:assert/strict';
import http from 'node:http';
import { createRequire } from 'node:module';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';

import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

import { TestServer, fetchPages, nextMonday } from './harness.mjs';

const kTestTimeoutMs = 120_000;
const kAwaitMs = 15_000;
const kPassword = 'correct horse battery staple';

// Described before their route is registered here (built on another branch): allowed to be
// absent from the route table; once registered they are checked like every other route.
const kDescribedAhead = new Set(['POST /v2/auth/oauth2/par']);

// Operations whose success or error this traffic cannot reach, and why.
const kNoSuccess = new Map([
  ['GET /v2/calendars/google/save', 'a success needs a code from Google (tests/integration/calendar_connect_test)'],
  ['GET /v2/calendars/{calendar}/event/{eventUid}', 'a success needs an event in Google Calendar (calendar_routes_test)'],
  ['PUT /v2/destination-calendars', 'a destination is a connected Google calendar (calendar_routes_test)'],
]);
const kNoError = new Map([
  ['GET /healthz', 'liveness: always 200'],
  ['GET /readyz', 'its error is 503 while the database is down (tests/integration/core_lifecycle_test)'],
  ['GET /metrics', 'always 200'],
  ['GET /.well-known/oauth-authorization-server', 'always 200'],
]);

let server;
let receiver;
let doc;
let mailDir;
let ajv;
let validation;  // the validator's verdict, computed while the traffic runs (it takes seconds)
const registered = new Set();  // "METHOD /template" of every route the api listener registered
const delivered = [];  // {path, headers, body} of every request the receiver got
const seen = new Map();  // "METHOD /template" -> Set of statuses checked
const failures = [];

// The validator works synchronously for seconds: on a thread of its own it runs while the traffic
// test waits on the server. Resolves to {valid, text}.
function validateInWorker(document) {
  const parser = createRequire(import.meta.url).resolve('@readme/openapi-parser');
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { validate, compileErrors } = require(workerData.parser);
    validate(workerData.document).then((result) => {
      parentPort.postMessage({ valid: result.valid, text: result.valid ? '' : compileErrors(result) });
    }).catch((e) => parentPort.postMessage({ valid: false, text: String(e && e.stack || e) }));`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: { parser, document } });
    worker.once('message', (m) => { resolve(m); worker.terminate(); });
    worker.once('error', reject);
  });
}

function startReceiver() {
  const srv = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      delivered.push({ path: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (req.url.startsWith('/fail')) res.writeHead(500).end('no');
      else if (req.url.startsWith('/feed.ics')) {
        res.writeHead(200, { 'Content-Type': 'text/calendar' }).end(
          'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nEND:VCALENDAR\r\n');
      } else res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
    });
  });
  return new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => resolve({ srv, url: `http://127.0.0.1:${srv.address().port}` }));
  });
}

// JSON pointer of a path inside the document.
function pointer(...parts) {
  return `#/${parts.map((p) => String(p).replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
}

// Follows a local $ref (response objects); returns [object, its pointer].
function follow(obj, ptr) {
  let o = obj;
  let p = ptr;
  for (let i = 0; i < 8 && o && o.$ref; i += 1) {
    p = o.$ref;
    o = p.slice(2).split('/').map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce((at, key) => at?.[key], doc);
  }
  return [o, p];
}

// Checks one real answer against the document; records what failed instead of stopping, so one
// run names every mismatch.
function conform(method, template, status, headers, text) {
  const contentType = headers.get('content-type');
  const op = `${method} ${template}`;
  const operation = doc.paths?.[template]?.[method.toLowerCase()];
  if (!operation) {
    failures.push(`${op}: no description in the document (answered ${status})`);
    return;
  }
  if (!seen.has(op)) seen.set(op, new Set());
  seen.get(op).add(status);
  const key = operation.responses?.[String(status)] ? String(status) : (operation.responses?.default ? 'default' : null);
  if (!key) {
    failures.push(`${op}: answered ${status}, which the document does not list (${Object.keys(operation.responses ?? {}).join(', ')})`);
    return;
  }
  const [response, at] = follow(operation.responses[key], pointer('paths', template, method.toLowerCase(), 'responses', key));
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    if (follow(header, '')[0].required && !headers.has(name)) failures.push(`${op} ${status}: no ${name} header, which the document requires`);
  }
  const media = (contentType ?? '').split(';')[0].trim();
  if (!response.content) {
    if (text) failures.push(`${op} ${status}: the document describes no body, got ${media}: ${text.slice(0, 200)}`);
    return;
  }
  if (!response.content[media]) {
    failures.push(`${op} ${status}: answered ${media || 'no content type'}, documented ${Object.keys(response.content).join(', ')}`);
    return;
  }
  if (!media.endsWith('json')) return;
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    failures.push(`${op} ${status}: not JSON: ${text.slice(0, 200)}`);
    return;
  }
  const schemaRef = `openapi${at}/content/${media.replaceAll('/', '~1')}/schema`;
  const check = ajv.getSchema(schemaRef) ?? ajv.compile({ $ref: schemaRef });
  if (!check(body)) {
    failures.push(`${op} ${status}: the body does not match ${at}: ${ajv.errorsText(check.errors, { separator: '; ' })}\n  body: ${text.slice(0, 400)}`);
  }
}

// One request, checked against the document. `template` is the documented path ("/v2/x/{id}").
async function call(method, template, { params = {}, query, body, form, token, headers = {}, contentType, expect } = {}) {
  let pathname = template;
  for (const [k, v] of Object.entries(params)) pathname = pathname.replace(`{${k}}`, encodeURIComponent(v));
  const url = new URL(server.apiUrl + pathname);
  if (query) for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const h = { ...headers };
  let payload;
  if (form) {
    h['Content-Type'] = 'application/x-www-form-urlencoded';
    payload = new URLSearchParams(form).toString();
  } else if (body !== undefined) {
    h['Content-Type'] = 'application/json';
    payload = typeof body === 'string' ? body : JSON.stringify(body);
  }
  if (contentType) h['Content-Type'] = contentType;
  if (token) h.Authorization = `Bearer ${token}`;
  const res = await fetch(url, { method, headers: h, body: payload, redirect: 'manual' });
  const text = await res.text();
  if (process.env.RDV_OPENAPI_DUMP) console.log(`${method} ${pathname} -> ${res.status} ${res.headers.get('content-type')}\n${text.slice(0, 1500)}`);
  conform(method, template, res.status, res.headers, text);
  if (expect !== undefined) assert.equal(res.status, expect, `${method} ${pathname}: ${text}`);
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, json, text, headers: res.headers };
}

// The last 6-digit code sent to `to`, from the mail or SMS log.
async function awaitCode(log, to) {
  const deadline = Date.now() + kAwaitMs;
  for (;;) {
    const text = await readFile(path.join(mailDir, log), 'utf8').catch(() => '');
    const lines = text.split('\n').filter((l) => l.includes(to));
    const m = lines.length ? lines.at(-1).match(/\b(\d{6})\b/) : null;
    if (m) return m[1];
    if (Date.now() > deadline) assert.fail(`no code for ${to} in ${log} within ${kAwaitMs} ms`);
    await delay(50);
  }
}

// A browser's part of the authorization code flow, spoken with fetch: sign in, then Allow on the
// consent page. Answers the code the redirect carries.
async function authorizationCode({ email, password, clientId, redirectUri, scope }) {
  const { page } = fetchPages(server.appUrl);
  const hidden = (html) => Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)]
    .map(([, k, v]) => [k, v.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>')]));
  const post = (url, fields) => page(url, {
    method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString(),
  });
  const login = await page('/auth/login?next=%2F');
  const signedIn = await post('/auth/login', { ...hidden(login.html), email, password });
  assert.equal(signedIn.status, 302, `sign-in: ${signedIn.html.slice(0, 300)}`);
  const query = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope, state: 'st' });
  const consent = await page(`/auth/oauth2/authorize?${query}`);
  assert.equal(consent.status, 200, `consent page: ${consent.html.slice(0, 300)}`);
  const allowed = await post('/auth/oauth2/authorize', { ...hidden(consent.html), decision: 'allow' });
  assert.equal(allowed.status, 302, `allow: ${allowed.html.slice(0, 300)}`);
  const code = new URL(allowed.location).searchParams.get('code');
  assert.ok(code, `a code in ${allowed.location}`);
  return code;
}

before(async () => {
  receiver = await startReceiver();
  mailDir = await mkdtemp(path.join(tmpdir(), 'rdv-openapi-mail-'));
  server = await TestServer.start({
    logLevel: 'debug',
    extra: [`mail: { log_file: "${path.join(mailDir, 'mail.log')}" }`,
      `sms: { log_file: "${path.join(mailDir, 'sms.log')}" }`].join('\n'),
    plugins: [
      '  oauth: {}',
      '  bookings: {}',
      // Google's endpoints point at the loopback receiver: nothing leaves the machine.
      '  calendar:',
      '    ics_allow_private_networks: true',
      `    google: { client_id: "test-client", client_secret: "test-secret", auth_url: "${receiver.url}/auth",`,
      `              token_url: "${receiver.url}/fail/token", api_base_url: "${receiver.url}/fail/calendar" }`,
      '  webhooks: { allow_private_networks: true, retry_schedule: [1] }',
    ].join('\n'),
  });
  const res = await fetch(`${server.apiUrl}/v2/openapi.json`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^application\/json/);
  doc = await res.json();
  for (const line of server.log) {
    let e;
    try { e = JSON.parse(line); } catch { continue; }
    if (e.msg === 'route' && e.listener === 'api') registered.add(`${e.method} ${e.pattern.replace(/:([A-Za-z]+)/g, '{$1}')}`);
  }
  ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'openapi');
  validation = validateInWorker(doc);
}, { timeout: kTestTimeoutMs });

after(async () => {
  if (server) await server.stop();
  if (receiver) await new Promise((resolve) => receiver.srv.close(resolve));
  if (mailDir) await rm(mailDir, { recursive: true, force: true });
});

test('the document describes exactly the routes the api listener registers', async () => {
  assert.ok(registered.size > 40, `the route table was logged (${registered.size} routes)`);
  const described = new Set();
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const m of ['get', 'put', 'post', 'delete', 'patch', 'head', 'options']) if (item[m]) described.add(`${m.toUpperCase()} ${p}`);
  }
  const undescribed = [...registered].filter((r) => !described.has(r));
  const unrouted = [...described].filter((d) => !registered.has(d) && !kDescribedAhead.has(d));
  assert.deepEqual(undescribed, [], 'routes without a description in docs/openapi.yaml');
  assert.deepEqual(unrouted, [], 'described operations the server does not route');
});

test('every answer of every route matches the document', { timeout: kTestTimeoutMs }, async () => {
  // Each admin command starts the binary: two at a time.
  const [owner, other] = await Promise.all([
    server.createUser({ email: 'owner@example.com', name: 'Olga Owner', password: kPassword }),
    server.createUser({ email: 'other@example.com', name: 'Otto Other', password: kPassword }),
  ]);
  const [key, otherKey] = await Promise.all([server.createApiKey(owner.id), server.createApiKey(other.id)]);

  // Built-in and discovery routes.
  await call('GET', '/healthz', { expect: 200 });
  await call('GET', '/readyz', { expect: 200 });
  await call('GET', '/metrics', { expect: 200 });
  await call('GET', '/v2/openapi.json', { expect: 200 });
  await call('GET', '/v2/openapi.json', { headers: { 'service-api-version': '1999-01-01' }, expect: 400 });
  await call('GET', '/.well-known/oauth-authorization-server', { expect: 200 });

  // Profile.
  await call('GET', '/v2/me', { token: key, expect: 200 });
  await call('GET', '/v2/me', { expect: 401 });
  await call('PATCH', '/v2/me', { token: key, body: { name: 'Olga O. Owner' }, expect: 200 });
  await call('PATCH', '/v2/me', { token: key, body: { timeZone: 'Mars/Olympus' }, expect: 400 });
  await call('PATCH', '/v2/me', { token: key, body: { username: 'olga', timeFormat: 24 }, expect: 200 });
  await call('PATCH', '/v2/me', { token: otherKey, body: { username: 'olga' }, expect: 409 });
  await call('PATCH', '/v2/me', { token: key, body: { timeFormat: 13 }, expect: 400 });
  await call('PATCH', '/v2/me', { token: key, body: 'name=Olga', contentType: 'application/x-www-form-urlencoded', expect: 415 });

  // Event types.
  const et = await call('POST', '/v2/event-types', { token: key, body: { title: 'Intro', slug: 'intro', lengthInMinutes: 30 }, expect: 201 });
  const etId = et.json.data.id;
  const etConfirm = await call('POST', '/v2/event-types', {
    token: key, body: { title: 'Review', slug: 'review', lengthInMinutes: 30, requiresConfirmation: true }, expect: 201,
  });
  await call('POST', '/v2/event-types', { token: key, body: { title: 'No length' }, expect: 400 });
  await call('POST', '/v2/event-types', {
    token: key,
    body: {
      title: 'Settings', slug: 'settings', lengthInMinutes: 30, disableGuests: true, lockTimeZoneToggleOnBookingPage: true,
      forwardParamsSuccessRedirect: false, successRedirectUrl: 'https://example.com/thanks', metadata: { team: 'sales' },
      price: 0, currency: 'eur', isInstantEvent: false, recurrence: null, bookingLimitsCount: { week: 2 },
    },
    expect: 201,
  });
  const plan = { type: 'select', slug: 'plan', label: 'Plan', required: true, options: ['Free', 'Pro'] };
  const asked = await call('POST', '/v2/event-types', {
    token: key, body: { title: 'Asked', slug: 'asked', lengthInMinutes: 30, bookingFields: [plan] }, expect: 201,
  });
  await call('POST', '/v2/event-types', {
    token: key, body: { title: 'Bad', slug: 'bad', lengthInMinutes: 30, bookingFields: [{ ...plan, options: [] }] }, expect: 400,
  });
  const priced = await call('POST', '/v2/event-types', { token: key, body: { title: 'Paid', slug: 'paid', lengthInMinutes: 30, price: 5 }, expect: 400 });
  assert.equal(priced.json.error.code, 'payments_not_supported');
  await call('GET', '/v2/event-types', { token: key, expect: 200 });
  await call('GET', '/v2/event-types', { expect: 401 });
  await call('GET', '/v2/event-types/{id}', { token: key, params: { id: etId }, expect: 200 });
  await call('GET', '/v2/event-types/{id}', { token: otherKey, params: { id: etId }, expect: 404 });
  await call('PATCH', '/v2/event-types/{id}', { token: key, params: { id: etId }, body: { description: 'A first talk' }, expect: 200 });
  await call('PATCH', '/v2/event-types/{id}', { token: key, params: { id: etId }, body: { lengthInMinutes: -5 }, expect: 400 });
  const gone = await call('POST', '/v2/event-types', { token: key, body: { title: 'Gone', slug: 'gone', lengthInMinutes: 15 }, expect: 201 });
  await call('DELETE', '/v2/event-types/{id}', { token: key, params: { id: gone.json.data.id }, expect: 200 });
  await call('DELETE', '/v2/event-types/{id}', { token: key, params: { id: gone.json.data.id }, expect: 404 });

  // Schedules.
  await call('GET', '/v2/schedules/default', { token: key, expect: 200 });
  await call('GET', '/v2/schedules/default', { expect: 401 });
  const sched = await call('POST', '/v2/schedules', {
    token: key,
    body: { name: 'Weekdays', timeZone: 'UTC', availability: [{ days: ['Monday', 'Tuesday'], startTime: '09:00', endTime: '17:00' }] },
    expect: 201,
  });
  const schedId = sched.json.data.id;
  await call('POST', '/v2/schedules', { token: key, body: { name: 'Bad', timeZone: 'Nowhere/Land' }, expect: 400 });
  await call('GET', '/v2/schedules', { token: key, expect: 200 });
  // defaultScheduleId is the stored default's id now (a number, not null).
  const meWithSchedule = await call('GET', '/v2/me', { token: key, expect: 200 });
  assert.equal(typeof meWithSchedule.json.data.defaultScheduleId, 'number');
  await call('PATCH', '/v2/me', { token: key, body: { defaultScheduleId: schedId }, expect: 200 });
  await call('GET', '/v2/schedules', { expect: 401 });
  await call('GET', '/v2/schedules/{id}', { token: key, params: { id: schedId }, expect: 200 });
  await call('GET', '/v2/schedules/{id}', { token: otherKey, params: { id: schedId }, expect: 404 });
  await call('PATCH', '/v2/schedules/{id}', { token: key, params: { id: schedId }, body: { name: 'Early week' }, expect: 200 });
  await call('PATCH', '/v2/schedules/{id}', { token: key, params: { id: schedId }, body: { timeZone: 'Nowhere/Land' }, expect: 400 });
  await call('DELETE', '/v2/schedules/{id}', { token: key, params: { id: schedId }, expect: 200 });
  await call('DELETE', '/v2/schedules/{id}', { token: key, params: { id: schedId }, expect: 404 });

  // Slots and the public booking flow.
  const day = nextMonday();
  const slots = await call('GET', '/v2/slots', { query: { eventTypeId: etId, start: day, end: day, timeZone: 'UTC' }, expect: 200 });
  const starts = slots.json.data[day].map((s) => s.start);
  assert.ok(starts.length >= 6, `slots on ${day}`);
  await call('GET', '/v2/slots', { query: { eventTypeId: etId, start: 'soon', end: day }, expect: 400 });
  const attendee = { name: 'Ann Attendee', email: 'ann@example.com', timeZone: 'UTC' };
  const book = (start, eventTypeId = etId) => call('POST', '/v2/bookings', { body: { start, eventTypeId, attendee }, expect: 201 });
  const b1 = (await book(starts[0])).json.data;
  const b2 = (await book(starts[2])).json.data;
  const pending = (await book(starts[4], etConfirm.json.data.id)).json.data;
  const pending2 = (await book(starts[5], etConfirm.json.data.id)).json.data;
  await call('POST', '/v2/bookings', { body: { start: starts[0], eventTypeId: etId }, expect: 400 });
  const guested = await call('POST', '/v2/bookings', { body: { start: starts[11], eventTypeId: etId, attendee, guests: ['gus@example.com'] }, expect: 201 });
  assert.deepEqual(guested.json.data.guests, ['gus@example.com']);
  const askedBody = { start: starts[12], eventTypeId: asked.json.data.id, attendee };
  await call('POST', '/v2/bookings', { body: { ...askedBody, bookingFieldsResponses: { plan: 'Gold' } }, expect: 400 });
  const answered = await call('POST', '/v2/bookings', { body: { ...askedBody, bookingFieldsResponses: { plan: 'Pro' } }, expect: 201 });
  assert.equal(answered.json.data.bookingFieldsResponses.plan, 'Pro');
  await call('GET', '/v2/bookings', { token: key, expect: 200 });
  await call('GET', '/v2/bookings', { token: key, query: { take: 'many' }, expect: 400 });
  const listed = await call('GET', '/v2/bookings', { token: key, query: { status: 'upcoming,unconfirmed', attendeeEmail: attendee.email, eventTypeIds: `${etId},${etConfirm.json.data.id}`, sortStart: 'desc' }, expect: 200 });
  assert.equal(listed.json.pagination.total, listed.json.data.length);
  assert.ok(listed.json.data.length > 0);
  await call('GET', '/v2/bookings', { token: key, query: { status: 'soon' }, expect: 400 });
  await call('GET', '/v2/bookings/{uid}', { token: key, params: { uid: b1.uid }, expect: 200 });
  await call('GET', '/v2/bookings/{uid}', { token: otherKey, params: { uid: b1.uid }, expect: 404 });
  await call('GET', '/v2/bookings/{uid}/references', { token: key, params: { uid: b1.uid }, expect: 200 });
  await call('GET', '/v2/bookings/{uid}/references', { token: otherKey, params: { uid: b1.uid }, expect: 404 });
  await call('POST', '/v2/bookings/{uid}/confirm', { token: key, params: { uid: pending.uid }, body: {}, expect: 200 });
  await call('POST', '/v2/bookings/{uid}/confirm', { token: key, params: { uid: b1.uid }, body: {}, expect: 409 });
  await call('POST', '/v2/bookings/{uid}/decline', { token: key, params: { uid: pending2.uid }, body: { reason: 'Busy' }, expect: 200 });
  await call('POST', '/v2/bookings/{uid}/decline', { token: key, params: { uid: 'no-such-booking' }, body: {}, expect: 404 });
  // Absence is recorded once a booking has started: one brought over from the past.
  const past = await server.cli(['admin', 'booking', 'import', '--user-id', String(owner.id), '--event-type-id', String(etId),
    '--start', `${new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)}T09:00:00.000Z`,
    '--attendee-email', 'pat@example.com', '--attendee-name', 'Pat Past']);
  await call('POST', '/v2/bookings/{uid}/mark-absent', {
    token: key, params: { uid: past.uid }, body: { attendees: [{ email: 'pat@example.com', absent: true }] }, expect: 200,
  });
  await call('POST', '/v2/bookings/{uid}/mark-absent', { token: key, params: { uid: past.uid }, body: { host: 'yes' }, expect: 400 });
  await call('POST', '/v2/bookings/{uid}/cancel', { params: { uid: b2.uid }, body: { cancellationReason: 'Ill' }, expect: 200 });
  await call('POST', '/v2/bookings/{uid}/cancel', { params: { uid: 'no-such-booking' }, body: {}, expect: 404 });
  await call('POST', '/v2/bookings/{uid}/reopen', { token: key, params: { uid: b2.uid }, body: {}, expect: 200 });
  await call('POST', '/v2/bookings/{uid}/reopen', { token: key, params: { uid: b1.uid }, body: {}, expect: 409 });
  await call('POST', '/v2/bookings/{uid}/reschedule', { params: { uid: b1.uid }, body: { start: starts[7] }, expect: 201 });
  await call('POST', '/v2/bookings/{uid}/reschedule', { params: { uid: b2.uid }, body: {}, expect: 400 });

  // Slot reservations: held, read, moved, booked by the holder; another held and deleted.
  const held = (await call('POST', '/v2/slots/reservations', { body: { eventTypeId: etId, slotStart: starts[13] }, expect: 201 })).json.data;
  await call('POST', '/v2/slots/reservations', { body: { eventTypeId: etId, slotStart: 'soon' }, expect: 400 });
  await call('POST', '/v2/slots/reservations', { body: { eventTypeId: etId, slotStart: starts[14], reservationDuration: 10 }, expect: 401 });
  await call('GET', '/v2/slots/reservations/{uid}', { params: { uid: held.reservationUid }, expect: 200 });
  await call('GET', '/v2/slots/reservations/{uid}', { params: { uid: 'no-such-reservation' }, expect: 404 });
  await call('PATCH', '/v2/slots/reservations/{uid}', { params: { uid: held.reservationUid }, token: key, body: { eventTypeId: etId, slotStart: starts[14], reservationDuration: 10 }, expect: 200 });
  await call('PATCH', '/v2/slots/reservations/{uid}', { params: { uid: held.reservationUid }, body: { eventTypeId: etId, slotStart: starts[7] }, expect: 409 });
  await call('POST', '/v2/bookings', { body: { start: starts[14], eventTypeId: etId, attendee }, expect: 409 });
  await call('POST', '/v2/bookings', { body: { start: starts[14], eventTypeId: etId, attendee, reservationUid: held.reservationUid }, expect: 201 });
  const dropped = (await call('POST', '/v2/slots/reservations', { body: { eventTypeId: etId, slotStart: starts[13] }, expect: 201 })).json.data;
  await call('DELETE', '/v2/slots/reservations/{uid}', { params: { uid: dropped.reservationUid }, expect: 200 });
  await call('DELETE', '/v2/slots/reservations/{uid}', { params: { uid: dropped.reservationUid }, expect: 404 });

  // Webhooks of a user and of an event type.
  const hookBody = { subscriberUrl: `${receiver.url}/hook`, triggers: ['BOOKING_CREATED'], active: true, secret: 's3cret' };
  const hook = (await call('POST', '/v2/webhooks', { token: key, body: hookBody, expect: 201 })).json.data;
  await call('POST', '/v2/webhooks', { token: key, body: { ...hookBody, triggers: ['NOT_A_TRIGGER'] }, expect: 400 });
  await call('GET', '/v2/webhooks', { token: key, expect: 200 });
  await call('GET', '/v2/webhooks', { expect: 401 });
  await call('GET', '/v2/webhooks/{id}', { token: key, params: { id: hook.id }, expect: 200 });
  await call('GET', '/v2/webhooks/{id}', { token: otherKey, params: { id: hook.id }, expect: 404 });
  await call('PATCH', '/v2/webhooks/{id}', { token: key, params: { id: hook.id }, body: { triggers: ['BOOKING_CREATED', 'BOOKING_CANCELLED'] }, expect: 200 });
  await call('PATCH', '/v2/webhooks/{id}', { token: key, params: { id: hook.id }, body: { active: 'no' }, expect: 400 });
  await call('POST', '/v2/webhooks/{id}/ping', { token: key, params: { id: hook.id }, body: {}, expect: 200 });
  await call('POST', '/v2/webhooks/{id}/ping', { token: otherKey, params: { id: hook.id }, body: {}, expect: 404 });
  await call('POST', '/v2/webhooks/{id}/secret/rotate', { token: key, params: { id: hook.id }, body: { graceSeconds: 60 }, expect: 200 });
  await call('POST', '/v2/webhooks/{id}/secret/rotate', { token: key, params: { id: hook.id }, body: { graceSeconds: -1 }, expect: 400 });
  const since = new Date(Date.now() - 3_600_000).toISOString();
  await call('POST', '/v2/webhooks/{id}/recover', { token: key, params: { id: hook.id }, body: { since }, expect: 202 });
  await call('POST', '/v2/webhooks/{id}/recover', { token: key, params: { id: hook.id }, body: { since: 'yesterday' }, expect: 400 });
  // A receiver that fails: its ping is a failed delivery, which can be retried.
  const failing = (await call('POST', '/v2/webhooks', {
    token: key, body: { ...hookBody, subscriberUrl: `${receiver.url}/fail` }, expect: 201,
  })).json.data;
  await call('POST', '/v2/webhooks/{id}/ping', { token: key, params: { id: failing.id }, body: {}, expect: 200 });
  const deliveries = await call('GET', '/v2/webhooks/{id}/deliveries', { token: key, params: { id: failing.id }, expect: 200 });
  await call('GET', '/v2/webhooks/{id}/deliveries', { token: otherKey, params: { id: failing.id }, expect: 404 });
  const failed = deliveries.json.data.find((d) => d.status === 'failed') ?? deliveries.json.data[0];
  assert.ok(failed, `a delivery of the failing receiver: ${deliveries.text}`);
  const retried = await call('POST', '/v2/webhooks/{id}/deliveries/{deliveryId}/retry',
    { token: key, params: { id: failing.id, deliveryId: failed.id }, body: {} });
  assert.ok(retried.status < 300, `retry of ${JSON.stringify(failed)}: ${retried.text}`);
  await call('POST', '/v2/webhooks/{id}/deliveries/{deliveryId}/retry',
    { token: key, params: { id: failing.id, deliveryId: 999999 }, body: {}, expect: 404 });
  await call('DELETE', '/v2/webhooks/{id}', { token: key, params: { id: failing.id }, expect: 200 });
  await call('DELETE', '/v2/webhooks/{id}', { token: key, params: { id: failing.id }, expect: 404 });

  const etHooks = '/v2/event-types/{eventTypeId}/webhooks';
  const etHook = (await call('POST', etHooks, { token: key, params: { eventTypeId: etId }, body: hookBody, expect: 201 })).json.data;
  await call('POST', etHooks, { token: otherKey, params: { eventTypeId: etId }, body: hookBody, expect: 404 });
  await call('GET', etHooks, { token: key, params: { eventTypeId: etId }, expect: 200 });
  await call('GET', etHooks, { token: otherKey, params: { eventTypeId: etId }, expect: 404 });
  const etHookOne = `${etHooks}/{id}`;
  await call('GET', etHookOne, { token: key, params: { eventTypeId: etId, id: etHook.id }, expect: 200 });
  await call('GET', etHookOne, { token: key, params: { eventTypeId: etId, id: 999999 }, expect: 404 });
  await call('PATCH', etHookOne, { token: key, params: { eventTypeId: etId, id: etHook.id }, body: { triggers: ['BOOKING_CANCELLED'] }, expect: 200 });
  await call('PATCH', etHookOne, { token: key, params: { eventTypeId: etId, id: etHook.id }, body: { triggers: 'all' }, expect: 400 });
  await call('DELETE', etHookOne, { token: key, params: { eventTypeId: etId, id: etHook.id }, expect: 200 });
  await call('DELETE', etHookOne, { token: key, params: { eventTypeId: etId, id: etHook.id }, expect: 404 });
  await call('DELETE', etHooks, { token: key, params: { eventTypeId: etId }, expect: 200 });
  await call('DELETE', etHooks, { token: otherKey, params: { eventTypeId: etId }, expect: 404 });

  // A booking after the webhooks exist: its BOOKING_CREATED is delivered to /hook.
  const b3 = (await book(starts[9])).json.data;

  // Calendars (no Google account connected: Google itself is never called).
  await call('GET', '/v2/calendars', { token: key, expect: 200 });
  await call('GET', '/v2/calendars', { expect: 401 });
  await call('GET', '/v2/calendars/google/connect', { token: key, expect: 200 });
  await call('GET', '/v2/calendars/google/connect', { expect: 401 });
  await call('GET', '/v2/calendars/google/check', { token: key });
  await call('GET', '/v2/calendars/google/check', { expect: 401 });
  await call('POST', '/v2/calendars/google/disconnect', { token: key });
  await call('POST', '/v2/calendars/google/disconnect', { expect: 401 });
  await call('GET', '/v2/calendars/google/save', { query: { code: 'c', state: 'unknown' } });
  await call('POST', '/v2/calendars/google/disconnect', { token: key, body: { id: 'x' }, expect: 400 });
  await call('GET', '/v2/calendars/ics-feed/check', { token: key, expect: 400 });
  await call('POST', '/v2/calendars/ics-feed/save', { token: key, body: { urls: [`${receiver.url}/feed.ics`] }, expect: 201 });
  await call('GET', '/v2/calendars/ics-feed/check', { token: key, expect: 200 });
  await call('POST', '/v2/calendars/ics-feed/save', { token: key, body: { urls: 'not a list' }, expect: 400 });
  await call('GET', '/v2/calendars/busy-times', { token: key, query: { dateFrom: day, dateTo: day }, expect: 200 });
  await call('GET', '/v2/calendars/busy-times', { token: key, query: { dateFrom: 'later' }, expect: 400 });
  await call('PUT', '/v2/destination-calendars', { token: key, body: { integration: 'google_calendar', externalId: 'nope' } });
  await call('GET', '/v2/calendars/{calendar}/event/{eventUid}', { token: key, params: { calendar: 'outlook', eventUid: 'e1' }, expect: 400 });
  await call('GET', '/v2/calendars/{calendar}/event/{eventUid}', { token: key, params: { calendar: 'google', eventUid: 'e1' } });

  // Verified e-mails and phone numbers.
  const emails = '/v2/verified-resources/emails';
  await call('POST', `${emails}/verification-code/request`, { token: key, body: { email: 'olga.work@example.com' }, expect: 200 });
  await call('POST', `${emails}/verification-code/request`, { token: key, body: { email: 'not an address' }, expect: 400 });
  const code = await awaitCode('mail.log', 'olga.work@example.com');
  const verified = await call('POST', `${emails}/verification-code/verify`, {
    token: key, body: { email: 'olga.work@example.com', code }, expect: 200,
  });
  await call('POST', `${emails}/verification-code/verify`, { token: key, body: { email: 'olga.work@example.com', code: 'abc' }, expect: 400 });
  await call('GET', emails, { token: key, expect: 200 });
  await call('GET', emails, { expect: 401 });
  await call('GET', `${emails}/{id}`, { token: key, params: { id: verified.json.data.id }, expect: 200 });
  await call('GET', `${emails}/{id}`, { token: otherKey, params: { id: verified.json.data.id }, expect: 404 });
  const phones = '/v2/verified-resources/phones';
  const phone = '+14155550100';
  await call('POST', `${phones}/verification-code/request`, { token: key, body: { phone }, expect: 200 });
  await call('POST', `${phones}/verification-code/request`, { token: key, body: { phone: '12' }, expect: 400 });
  const phoneCode = await awaitCode('sms.log', phone);
  const phoneOne = await call('POST', `${phones}/verification-code/verify`, { token: key, body: { phone, code: phoneCode }, expect: 200 });
  await call('POST', `${phones}/verification-code/verify`, { token: key, body: { phone, code: 'abc' }, expect: 400 });
  await call('GET', phones, { token: key, expect: 200 });
  await call('GET', phones, { expect: 401 });
  await call('GET', `${phones}/{id}`, { token: key, params: { id: phoneOne.json.data.id }, expect: 200 });
  await call('GET', `${phones}/{id}`, { token: key, params: { id: 999999 }, expect: 404 });

  // OAuth: a confidential client, the authorization code flow, then the token endpoint's grants.
  const client = await server.cli(['admin', 'oauth-client', 'create', '--owner-id', String(owner.id), '--name', 'Planner',
    '--redirect-uri', 'https://planner.example/cb', '--scope', 'PROFILE_READ']);
  await server.cli(['admin', 'oauth-client', 'review', client.client_id, '--accept']);
  const creds = { client_id: client.client_id, client_secret: client.client_secret };
  const token = '/v2/auth/oauth2/token';
  const authCode = await authorizationCode({
    email: 'owner@example.com', password: kPassword, clientId: client.client_id, redirectUri: 'https://planner.example/cb', scope: 'PROFILE_READ',
  });
  const exchange = { ...creds, grant_type: 'authorization_code', code: authCode, redirect_uri: 'https://planner.example/cb' };
  const granted = await call('POST', token, { body: exchange, expect: 200 });
  const refreshed = await call('POST', token, {
    form: { ...creds, grant_type: 'refresh_token', refresh_token: granted.json.refresh_token }, expect: 200,
  });
  await call('POST', token, { body: { ...creds, grant_type: 'password' }, expect: 400 });
  await call('POST', token, { body: 'grant_type=refresh_token', contentType: 'text/plain' });
  await call('POST', token, { form: { ...creds, client_secret: 'wrong', grant_type: 'refresh_token', refresh_token: 'x' }, expect: 401 });
  const accessToken = refreshed.json.access_token;
  // The token reads the profile, and may not change it: 403 insufficient_scope.
  await call('GET', '/v2/me', { token: accessToken, expect: 200 });
  const refused = await call('PATCH', '/v2/me', { token: accessToken, body: { name: 'X' }, expect: 403 });
  assert.equal(refused.json.error.code, 'insufficient_scope');
  await call('POST', '/v2/auth/oauth2/introspect', { form: { ...creds, token: accessToken }, expect: 200 });
  await call('POST', '/v2/auth/oauth2/introspect', { form: { ...creds, client_secret: 'wrong', token: accessToken }, expect: 401 });
  await call('POST', '/v2/auth/oauth2/revoke', { form: { ...creds, token: accessToken }, expect: 200 });
  await call('POST', '/v2/auth/oauth2/revoke', { form: { client_id: client.client_id, token: accessToken }, expect: 401 });
  // A code is used once (its replay also revokes the grant's tokens).
  await call('POST', token, { form: exchange, expect: 400 });
  // Pushed authorization requests, once the route exists.
  if (registered.has('POST /v2/auth/oauth2/par')) {
    await call('POST', '/v2/auth/oauth2/par', {
      form: { ...creds, response_type: 'code', redirect_uri: 'https://planner.example/cb', scope: 'PROFILE_READ', state: 's' }, expect: 201,
    });
    await call('POST', '/v2/auth/oauth2/par', { form: { client_id: client.client_id, redirect_uri: 'https://planner.example/cb' }, expect: 401 });
  }

  // The client's own webhooks, under its own credentials.
  const asClient = { 'x-cal-client-id': client.client_id, 'x-cal-secret-key': client.client_secret };
  const wrongSecret = { ...asClient, 'x-cal-secret-key': 'wrong' };
  const clientHooks = '/v2/oauth-clients/{clientId}/webhooks';
  const clientHookOne = `${clientHooks}/{id}`;
  const ofClient = { clientId: client.client_id };
  const clientHook = (await call('POST', clientHooks, { headers: asClient, params: ofClient, body: { ...hookBody, subscriberUrl: `${receiver.url}/client` }, expect: 201 })).json.data;
  await call('POST', clientHooks, { headers: wrongSecret, params: ofClient, body: hookBody, expect: 401 });
  await call('GET', clientHooks, { headers: asClient, params: ofClient, query: { take: 10, skip: 0 }, expect: 200 });
  await call('GET', clientHooks, { headers: wrongSecret, params: ofClient, expect: 401 });
  await call('GET', clientHookOne, { headers: asClient, params: { ...ofClient, id: clientHook.id }, expect: 200 });
  await call('GET', clientHookOne, { headers: asClient, params: { ...ofClient, id: 999999 }, expect: 404 });
  await call('PATCH', clientHookOne, { headers: asClient, params: { ...ofClient, id: clientHook.id }, body: { active: false }, expect: 200 });
  await call('PATCH', clientHookOne, { headers: asClient, params: { ...ofClient, id: clientHook.id }, body: { active: 'no' }, expect: 400 });
  await call('DELETE', clientHookOne, { headers: asClient, params: { ...ofClient, id: clientHook.id }, expect: 200 });
  await call('DELETE', clientHookOne, { headers: asClient, params: { ...ofClient, id: clientHook.id }, expect: 404 });
  await call('DELETE', clientHooks, { headers: asClient, params: ofClient, expect: 200 });
  await call('DELETE', clientHooks, { headers: wrongSecret, params: ofClient, expect: 401 });
  await call('GET', '/v2/timezones', { expect: 200 });
  await call('GET', '/v2/timezones', { headers: { 'service-api-version': '1999-01-01' }, expect: 400 });

  // Managed users of a platform client (its own credentials in x-cal-client-id / x-cal-secret-key).
  const [platform, unapproved] = await Promise.all(['Platform', 'Unreviewed'].map((name) => server.cli([
    'admin', 'oauth-client', 'create', '--owner-id', String(owner.id), '--name', name,
    '--redirect-uri', 'https://platform.example/cb', '--scope', 'PROFILE_READ'])));
  await server.cli(['admin', 'oauth-client', 'review', platform.client_id, '--accept']);
  const pc = { 'x-cal-client-id': platform.client_id, 'x-cal-secret-key': platform.client_secret };
  const users = '/v2/oauth-clients/{clientId}/users';
  const one = `${users}/{userId}`;
  const onPlatform = { clientId: platform.client_id };
  const mu = await call('POST', users, {
    params: onPlatform, headers: pc, expect: 201,
    body: { email: 'mu@example.com', name: 'Mu', timeZone: 'Europe/Paris', timeFormat: 24, weekStart: 'Sunday', locale: 'fr' },
  });
  const muUser = { ...onPlatform, userId: mu.json.data.user.id };
  await call('POST', users, { params: onPlatform, headers: pc, body: { email: 'nameless@example.com' }, expect: 400 });
  await call('POST', users, {
    params: onPlatform, headers: { ...pc, 'x-cal-secret-key': 'wrong' }, body: { email: 'w@example.com', name: 'W' }, expect: 401,
  });
  await call('POST', users, {
    params: { clientId: unapproved.client_id },
    headers: { 'x-cal-client-id': unapproved.client_id, 'x-cal-secret-key': unapproved.client_secret },
    body: { email: 'u@example.com', name: 'U' }, expect: 403,
  });
  await call('GET', users, { params: onPlatform, headers: pc, query: { limit: 10, offset: 0 }, expect: 200 });
  await call('GET', users, { params: onPlatform, headers: pc, query: { limit: 0 }, expect: 400 });
  await call('GET', one, { params: muUser, headers: pc, expect: 200 });
  await call('GET', one, { params: { ...onPlatform, userId: owner.id }, headers: pc, expect: 404 });
  await call('PATCH', one, { params: muUser, headers: pc, body: { name: 'Mu Two', locale: 'de' }, expect: 200 });
  await call('PATCH', one, { params: muUser, headers: pc, body: { locale: 'xx' }, expect: 400 });
  const forced = await call('POST', `${one}/force-refresh`, { params: muUser, headers: pc, expect: 200 });
  await call('POST', `${one}/force-refresh`, { params: { ...onPlatform, userId: owner.id }, headers: pc, expect: 404 });
  await call('GET', '/v2/me', { token: forced.json.data.accessToken, expect: 200 });
  const refreshPath = '/v2/oauth/{clientId}/refresh';
  const secretOnly = { 'x-cal-secret-key': platform.client_secret };
  await call('POST', refreshPath, { params: onPlatform, headers: secretOnly, body: { refreshToken: forced.json.data.refreshToken }, expect: 200 });
  await call('POST', refreshPath, { params: onPlatform, headers: secretOnly, body: { refreshToken: forced.json.data.refreshToken }, expect: 400 });
  await call('DELETE', one, { params: muUser, headers: pc, expect: 200 });
  await call('DELETE', one, { params: muUser, headers: pc, expect: 404 });

  // What the receiver got matches the document's `webhooks`: the pings, and the booking's event.
  const deadline = Date.now() + kAwaitMs;
  while (!delivered.some((d) => d.body.includes(b3.uid)) && Date.now() < deadline) await delay(50);
  const kinds = new Set();
  for (const d of delivered) {
    if (!d.headers['webhook-id']) continue;  // the ICS feed's fetches
    const body = JSON.parse(d.body);
    const name = body.triggerEvent === 'PING' ? 'ping' : 'bookingEvent';
    kinds.add(name);
    for (const p of doc.webhooks[name].post.parameters) {
      if (p.required && !d.headers[p.name.toLowerCase()]) failures.push(`webhook ${name}: no ${p.name} header`);
    }
    const ref = `openapi${pointer('webhooks', name, 'post', 'requestBody', 'content', 'application/json', 'schema')}`;
    const check = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
    if (!check(body)) failures.push(`webhook ${name}: the delivered body does not match: ${ajv.errorsText(check.errors)}\n  body: ${d.body.slice(0, 400)}`);
  }
  assert.deepEqual([...kinds].sort(), ['bookingEvent', 'ping'], 'a ping and a booking event were delivered');

  if (process.env.RDV_OPENAPI_SHOW) console.log(JSON.stringify([...seen].map(([k, v]) => [k, [...v]])));

  // Every described operation answered both ways (but the ones listed with a reason).
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const m of ['get', 'put', 'post', 'delete', 'patch']) {
      if (!item[m]) continue;
      const op = `${m.toUpperCase()} ${p}`;
      if (kDescribedAhead.has(op) && !registered.has(op)) continue;
      const statuses = [...(seen.get(op) ?? [])];
      if (!statuses.some((s) => s < 400) && !kNoSuccess.has(op)) failures.push(`${op}: no success answer was checked`);
      if (!statuses.some((s) => s >= 400 && s < 500) && !kNoError.has(op)) failures.push(`${op}: no error answer was checked`);
    }
  }
  assert.deepEqual(failures, [], `answers that do not match docs/openapi.yaml:\n${failures.join('\n')}`);
});

test('the document passes the OpenAPI 3.1 validator', async () => {
  assert.equal(doc.openapi, '3.1.0');
  const result = await validation;
  assert.ok(result.valid, result.text);
  // Served from memory with a validator: the same bytes again answer 304.
  const first = await fetch(`${server.apiUrl}/v2/openapi.json`);
  const etag = first.headers.get('etag');
  assert.ok(etag, 'an ETag');
  await first.arrayBuffer();
  const again = await fetch(`${server.apiUrl}/v2/openapi.json`, { headers: { 'If-None-Match': etag } });
  assert.equal(again.status, 304);
});
