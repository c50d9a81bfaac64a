// A fake Google on loopback for the node tests, speaking as tests/support/fake_google.cpp does: the
// OAuth token and revoke endpoints and the Calendar API's calendarList, freeBusy and events (get,
// insert, patch, delete; a Meet link for `conferenceData.createRequest`). Tokens are opaque
// counters; codes are issued with issueCode() and valid once.
import http from 'node:http';

const kMaxBody = 1 << 20;

export class FakeGoogle {
  constructor() {
    this.counter = 0;
    this.clientId = 'fake-client-id';
    this.clientSecret = 'fake-client-secret';
    this.codes = new Map();  // code -> account
    this.access = new Map();  // token -> account
    this.refresh = new Map();  // token -> account
    this.calendars = new Map();  // account -> calendarList items
    this.events = new Map();  // calendar id -> Map(event id -> event)
    this.busy = new Map();  // calendar id -> [{start, end}]
    this.requests = [];  // "METHOD /path" of every request
    this.srv = null;
    this.url = '';
  }

  static async start() {
    const g = new FakeGoogle();
    g.srv = http.createServer((req, res) => g.handle(req, res));
    await new Promise((resolve, reject) => {
      g.srv.once('error', reject);
      g.srv.listen(0, '127.0.0.1', resolve);
    });
    g.url = `http://127.0.0.1:${g.srv.address().port}`;
    return g;
  }

  stop() {
    return new Promise((resolve) => { this.srv.closeAllConnections?.(); this.srv.close(resolve); });
  }

  // YAML lines of the calendar plugin's `google:` section pointing at this fake (indent: spaces).
  pluginYaml(indent) {
    const pad = ' '.repeat(indent);
    return [`${pad}google:`, `${pad}  client_id: "${this.clientId}"`, `${pad}  client_secret: "${this.clientSecret}"`,
      `${pad}  auth_url: "${this.url}/o/oauth2/auth"`, `${pad}  token_url: "${this.url}/token"`,
      `${pad}  api_base_url: "${this.url}/calendar/v3"`].join('\n');
  }

  issueCode(account = 'default') {
    const code = `4/fake-code-${++this.counter}`;
    this.codes.set(code, account);
    return code;
  }

  addCalendar(entry, account = 'default') {
    if (!this.calendars.has(account)) this.calendars.set(account, []);
    this.calendars.get(account).push(entry);
  }

  addBusy(calendarId, start, end) {
    if (!this.busy.has(calendarId)) this.busy.set(calendarId, []);
    this.busy.get(calendarId).push({ start, end });
  }

  liveEvents(calendarId) {
    return [...(this.events.get(calendarId)?.values() ?? [])].filter((e) => e.status !== 'cancelled');
  }

  mint(account) {
    const token = `ya29.fake-access-${++this.counter}`;
    this.access.set(token, account);
    return token;
  }

  handle(req, res) {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size <= kMaxBody) chunks.push(c);
    });
    req.on('end', () => {
      const url = new URL(req.url, this.url);
      this.requests.push(`${req.method} ${url.pathname}`);
      const body = Buffer.concat(chunks).toString('utf8');
      const [status, answer] = size > kMaxBody ? [413, { error: 'too large' }] : this.route(req, url, body);
      if (answer === null) res.writeHead(status).end();
      else res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
    });
  }

  route(req, url, body) {
    const apiError = (status, message) => [status, { error: { code: status, message } }];
    if (req.method === 'POST' && url.pathname === '/token') return this.token(new URLSearchParams(body));
    if (req.method === 'POST' && url.pathname === '/revoke') {
      const token = new URLSearchParams(body).get('token');
      const account = this.refresh.get(token) ?? this.access.get(token);
      if (account === undefined) return [400, { error: 'invalid_token' }];
      this.refresh.delete(token);
      for (const [t, a] of this.access) if (a === account) this.access.delete(t);
      return [200, null];
    }
    const seg = url.pathname.split('/').slice(1).map(decodeURIComponent);
    if (seg[0] !== 'calendar' || seg[1] !== 'v3') return apiError(404, 'Not Found');
    const auth = req.headers.authorization ?? '';
    const account = auth.startsWith('Bearer ') ? this.access.get(auth.slice(7)) : undefined;
    if (account === undefined) return apiError(401, 'Invalid Credentials');
    const own = this.calendars.get(account) ?? [];
    const owns = (id) => own.some((c) => c.id === id);
    if (req.method === 'GET' && seg.length === 5 && seg[2] === 'users' && seg[4] === 'calendarList') {
      return [200, { kind: 'calendar#calendarList', items: own }];
    }
    if (req.method === 'POST' && seg.length === 3 && seg[2] === 'freeBusy') {
      let q;
      try { q = JSON.parse(body); } catch { return apiError(400, 'Parse Error'); }
      const calendars = {};
      for (const item of q.items ?? []) {
        calendars[item.id] = owns(item.id) ? { busy: this.busy.get(item.id) ?? [] }
          : { errors: [{ domain: 'global', reason: 'notFound' }] };
      }
      return [200, { kind: 'calendar#freeBusy', timeMin: q.timeMin, timeMax: q.timeMax, calendars }];
    }
    if (seg.length >= 5 && seg[2] === 'calendars' && seg[4] === 'events') {
      const calendar = seg[3];
      if (!owns(calendar)) return apiError(404, 'Not Found');
      if (!this.events.has(calendar)) this.events.set(calendar, new Map());
      const events = this.events.get(calendar);
      if (req.method === 'GET' && seg.length === 6) {
        return events.has(seg[5]) ? [200, events.get(seg[5])] : apiError(404, 'Not Found');
      }
      let input = {};
      if (req.method !== 'DELETE') {
        try { input = JSON.parse(body); } catch { return apiError(400, 'Parse Error'); }
      }
      const meet = (event) => {
        const requestId = input.conferenceData?.createRequest?.requestId;
        if (url.searchParams.get('conferenceDataVersion') !== '1' || !requestId) return;
        const code = `${requestId.replace(/[^a-z]/gi, 'x').toLowerCase()}xxxxxxxxxx`.slice(0, 10);
        const uri = `https://meet.google.com/${code.slice(0, 3)}-${code.slice(3, 7)}-${code.slice(7, 10)}`;
        event.hangoutLink = uri;
        event.conferenceData = {
          createRequest: { requestId, status: { statusCode: 'success' } },
          entryPoints: [{ entryPointType: 'video', uri, label: uri.slice(8) }],
          conferenceSolution: { key: { type: 'hangoutsMeet' }, name: 'Google Meet' },
          conferenceId: code,
        };
      };
      if (req.method === 'POST' && seg.length === 5) {
        const id = input.id || `fakeevent${++this.counter}`;
        if (events.has(id)) return apiError(409, 'The requested identifier already exists.');
        const event = { ...input, kind: 'calendar#event', id, status: input.status ?? 'confirmed',
          organizer: { email: calendar, self: true }, creator: { email: calendar, self: true } };
        delete event.conferenceData;
        meet(event);
        events.set(id, event);
        return [200, event];
      }
      const event = events.get(seg[5]);
      if (seg.length !== 6 || !event) return apiError(404, 'Not Found');
      if (req.method === 'DELETE') {
        if (event.status === 'cancelled') return apiError(410, 'Resource has been deleted');
        event.status = 'cancelled';
        return [204, null];
      }
      if (req.method === 'PATCH') {
        for (const [k, v] of Object.entries(input)) if (k !== 'conferenceData' && k !== 'id') event[k] = v;
        meet(event);
        return [200, event];
      }
    }
    return apiError(404, 'Not Found');
  }

  token(form) {
    if (form.get('client_id') !== this.clientId || form.get('client_secret') !== this.clientSecret) {
      return [401, { error: 'invalid_client' }];
    }
    if (form.get('grant_type') === 'authorization_code') {
      const account = this.codes.get(form.get('code'));
      if (account === undefined) return [400, { error: 'invalid_grant' }];
      this.codes.delete(form.get('code'));
      const refresh = `1//fake-refresh-${++this.counter}`;
      this.refresh.set(refresh, account);
      return [200, { access_token: this.mint(account), expires_in: 3599, refresh_token: refresh,
        scope: 'https://www.googleapis.com/auth/calendar', token_type: 'Bearer' }];
    }
    if (form.get('grant_type') === 'refresh_token') {
      const account = this.refresh.get(form.get('refresh_token'));
      if (account === undefined) return [400, { error: 'invalid_grant' }];
      return [200, { access_token: this.mint(account), expires_in: 3599, token_type: 'Bearer' }];
    }
    return [400, { error: 'unsupported_grant_type' }];
  }
}
