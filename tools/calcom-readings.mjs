// How Rendezvous reads Cal.com's OpenAPI document of its API v2 (../shared/peers/calcom-api-v2.openapi.json):
// the one place for it. Its readers:
// - tests/e2e/calcom_contract.test.mjs and tests/e2e/calcom_platform_backend.test.mjs validate the
//   server's real answers against Cal.com's schemas after applying `edit` of every entry below to
//   a copy of Cal.com's document;
// - tools/calcom-diff compares the two documents and marks a finding that an entry explains
//   (`finding`) instead of counting it as a difference.
//
// Two kinds of entries:
// - 'reading': an item of shared/peers/README.md, where Cal.com's document contradicts itself.
//   Items 1, 6, 7 and 9 are about request bodies (no answer is edited for them); item 10 is met
//   by the test's fixture (its user has a stored default schedule), so nothing is edited either.
// - 'exception': where the specification or DESIGN speaks and its shape is not Cal.com's (or
//   Cal.com's document contradicts itself in a way the README does not list yet). Each is
//   recorded with its reason in docs/calcom-compatibility.md, "Listed exceptions".
//
// `edit(doc)` changes Cal.com's document (OpenAPI 3.0: `nullable`, not 3.1's null type) in place.
// `finding` is matched against tools/calcom-diff's findings: `op` (Cal.com's "METHOD /path"),
// `where` (the member's dotted path) and `text` (the finding), each a RegExp; absent = any.

const schemas = (doc) => doc.components.schemas;

// Every component schema whose name matches `pattern`.
function each(doc, pattern, fn) {
  for (const [name, schema] of Object.entries(schemas(doc))) if (pattern.test(name)) fn(schema, name);
}

function dropRequired(schema, member) {
  if (Array.isArray(schema.required)) schema.required = schema.required.filter((r) => r !== member);
}

// Walks every object of the document.
function walk(node, fn) {
  if (Array.isArray(node)) node.forEach((n) => walk(n, fn));
  else if (node && typeof node === 'object') {
    fn(node);
    for (const v of Object.values(node)) walk(v, fn);
  }
}

const kWebhookOutputs = /^(User|EventType|Team|OAuthClient)WebhookOutputDto$/;
const kBookingOutputs = /^BookingOutput_2024_08_13$/;

export const kReadings = [
  // --- shared/peers/README.md --------------------------------------------------------------
  {
    id: 'webhook-triggers', kind: 'reading', item: 2,
    reason: 'webhook output `triggers` items are typed as objects: read as the trigger strings',
    edit: (doc) => each(doc, kWebhookOutputs, (s) => { if (s.properties.triggers) s.properties.triggers.items = { type: 'string' }; }),
    finding: { where: /(^|\.)triggers\[\]$/, text: /^type: Cal\.com object/ },
  },
  {
    id: 'webhook-payload-template', kind: 'reading', item: 3,
    reason: 'webhook output `payloadTemplate` is a required string; a template is optional: read as string or null',
    edit: (doc) => each(doc, kWebhookOutputs, (s) => { if (s.properties.payloadTemplate) s.properties.payloadTemplate.nullable = true; }),
    finding: { where: /(^|\.)payloadTemplate$/, text: /^ours may be null/ },
  },
  {
    id: 'schedule-days', kind: 'reading', item: 4,
    reason: 'schedule `days`: the day-name enum sits on the array as well as its items: kept on the items',
    edit: (doc) => walk(doc, (n) => {
      if (n.type === 'array' && Array.isArray(n.enum) && n.items?.enum) delete n.enum;
    }),
    finding: { where: /(^|\.)days$/, text: /^Cal\.com allows only/ },
  },
  {
    id: 'schedule-time-pattern', kind: 'reading', item: 5,
    reason: '`pattern: "TIME_FORMAT_HH_MM"` is a constant\'s name: read as HH:MM (00:00-23:59)',
    edit: (doc) => walk(doc, (n) => {
      if (n.pattern === 'TIME_FORMAT_HH_MM') n.pattern = '^([01][0-9]|2[0-3]):[0-5][0-9]$';
    }),
  },
  {
    id: 'event-type-length-options', kind: 'reading', item: 6,
    reason: 'event type input `lengthInMinutesOptions` is marked required although optional: read as optional',
    finding: { where: /^request body$/, text: /^required by Cal\.com, not taken by ours: lengthInMinutesOptions$/ },
  },
  {
    id: 'overlapping-one-of', kind: 'reading', item: 8,
    reason: '`oneOf` alternatives that overlap (no discriminator): read as `anyOf`',
    edit: (doc) => walk(doc, (n) => {
      if (Array.isArray(n.oneOf) && !n.discriminator) {
        n.anyOf = n.oneOf;
        delete n.oneOf;
      }
    }),
  },
  {
    id: 'reschedule-body', kind: 'reading', item: 9,
    reason: 'reschedule documents no body although its text asks for one: the body is ours',
    finding: { op: /^POST \/v2\/bookings\/\{[^}]+\}\/reschedule$/, where: /^request body$/,
               text: /^ours takes a body, Cal\.com documents none$/ },
  },
  {
    id: 'implicit-default-schedule', kind: 'reading', item: 10,
    reason: 'a user without a stored schedule has the implicit default (id null): only stored schedules are compared',
    finding: { op: /^[A-Z]+ \/v2\/schedules/, where: /^data(\[\])?\.id$/, text: /^ours may be null/ },
  },

  // --- Listed exceptions (docs/calcom-compatibility.md, "Listed exceptions") ----------------
  {
    id: 'booking-location-omitted', kind: 'exception',
    reason: 'DESIGN §9: an optional booking field without a value (location) is omitted, not null; ' +
            'Cal.com lists `location` as required but types it as a non-nullable string',
    edit: (doc) => each(doc, kBookingOutputs, (s) => dropRequired(s, 'location')),
    finding: { where: /^data(\[\])?$/, text: /^required by Cal\.com, optional in ours: location$/ },
  },
  {
    id: 'booking-status-completed', kind: 'exception',
    reason: 'DESIGN §9: a booking\'s status may be `completed` (an accepted booking whose end passed)',
    edit: (doc) => each(doc, kBookingOutputs, (s) => { s.properties.status.enum.push('completed'); }),
    finding: { where: /(^|\.)status$/, text: /^enum values Cal\.com does not have: completed$/ },
  },
  {
    id: 'webhook-secret-null', kind: 'exception',
    reason: 'specification §2.4: `secret` is present in every webhook answer; a webhook without one answers null',
    edit: (doc) => each(doc, kWebhookOutputs, (s) => { if (s.properties.secret) s.properties.secret.nullable = true; }),
    finding: { where: /(^|\.)secret$/, text: /^ours may be null/ },
  },
  {
    id: 'managed-user-default-schedule-null', kind: 'exception',
    reason: 'DESIGN §9: `defaultScheduleId` is null while the user has no stored schedule (the implicit ' +
            'default); Cal.com\'s MeOutput allows null, its ManagedUserOutput types a number',
    edit: (doc) => { schemas(doc).ManagedUserOutput.properties.defaultScheduleId.nullable = true; },
    finding: { where: /(^|\.)defaultScheduleId$/, text: /^ours may be null/ },
  },
  {
    id: 'event-type-settings-types', kind: 'exception',
    reason: 'Cal.com\'s EventTypeOutput_2024_06_14 types slotInterval, forwardParamsSuccessRedirect and ' +
            'successRedirectUrl as objects, which no number, boolean or URL is; its team output and its ' +
            'inputs type them number, boolean and string: read so',
    edit: (doc) => {
      const p = schemas(doc).EventTypeOutput_2024_06_14.properties;
      p.slotInterval = { type: 'number', nullable: true };
      p.forwardParamsSuccessRedirect = { type: 'boolean', nullable: true };
      p.successRedirectUrl = { type: 'string', nullable: true };
    },
    finding: { where: /(^|\.)(slotInterval|forwardParamsSuccessRedirect|successRedirectUrl)$/, text: /^type: Cal\.com object/ },
  },
  {
    id: 'booking-field-is-default', kind: 'exception',
    reason: 'Cal.com\'s booking field outputs type `isDefault` as object while their default, example and ' +
            'description say it is always true (default fields) or false (custom ones): read as a boolean',
    edit: (doc) => each(doc, /FieldOutput_2024_06_14$/, (s) => {
      if (s.properties?.isDefault) s.properties.isDefault = { type: 'boolean' };
    }),
    finding: { where: /(^|\.)isDefault$/, text: /^type: Cal\.com object/ },
  },
];

// The entry that explains a finding of tools/calcom-diff (undefined when none does).
export function explaining(calcomOp, finding) {
  return kReadings.find((r) => r.finding &&
    (!r.finding.op || r.finding.op.test(calcomOp)) &&
    (!r.finding.where || r.finding.where.test(finding.where)) &&
    (!r.finding.text || r.finding.text.test(finding.text)));
}

// A label for a finding's entry: "peers/README item N" or "listed exception <id>" or "pending <id>".
export function entryLabel(entry) {
  if (entry.kind === 'reading') return `read as peers/README item ${entry.item}`;
  return `${entry.kind === 'pending' ? 'pending' : 'listed exception'}: ${entry.id}`;
}

// Cal.com's document with the edits of every entry applied (but those whose id is in `skip`).
export function correctedCalcom(calcom, skip = new Set()) {
  const doc = structuredClone(calcom);
  for (const r of kReadings) if (r.edit && !skip.has(r.id)) r.edit(doc);
  return doc;
}

// --- Shared operations -----------------------------------------------------------------------

const kMethods = ['get', 'put', 'post', 'patch', 'delete'];
const isParam = (seg) => /^\{[^}]+\}$/.test(seg);

export function operations(doc) {
  const ops = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const m of kMethods) if (item?.[m]) ops.push({ method: m, path: p, op: item[m] });
  }
  return ops;
}

// How well Cal.com's template covers ours: -1 when it does not, else the count of Cal.com's
// parameters standing for our literals (lower is better). Two parameters match whatever their
// names; a parameter of Cal.com's matches a literal of ours (`{calendar}` covers `google`).
export function matchScore(theirs, ours) {
  const a = theirs.split('/');
  const b = ours.split('/');
  if (a.length !== b.length) return -1;
  let score = 0;
  for (let i = 0; i < a.length; ++i) {
    if (isParam(a[i]) && isParam(b[i])) continue;
    if (isParam(a[i])) { ++score; continue; }
    if (a[i] !== b[i]) return -1;
  }
  return score;
}

// [{t, o}]: each of our operations with the Cal.com operation that covers it best, and the rest.
export function sharedOperations(calcom, ours) {
  const theirOps = operations(calcom);
  const shared = [];
  const oursOnly = [];
  for (const o of operations(ours)) {
    let best = null;
    let bestScore = Infinity;
    for (const t of theirOps) {
      if (t.method !== o.method) continue;
      const score = matchScore(t.path, o.path);
      if (score >= 0 && score < bestScore) { best = t; bestScore = score; }
    }
    if (best) shared.push({ t: best, o });
    else oursOnly.push(o);
  }
  return { shared, oursOnly, theirOps };
}
