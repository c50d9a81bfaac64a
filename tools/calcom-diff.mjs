#!/usr/bin/env node
// Compares the operations docs/openapi.yaml shares with Cal.com's OpenAPI document of its API v2
// and prints where their schemas differ. A report, not a check; not part of `make test`.
//
//   tools/calcom-diff [--calcom PATH] [--ours PATH] [--strict]
//
// Defaults: ../shared/peers/calcom-api-v2.openapi.json beside the repository, and
// docs/openapi.yaml. The YAML reader is the one tests/e2e installs (`npm ci` there).
//
// An operation is shared when the method matches and the path templates match segment by
// segment: equal literals, two parameters whatever their names, or a parameter of Cal.com's
// where ours has a literal (`/v2/calendars/{calendar}/check` covers `/v2/calendars/google/check`);
// the most literal match wins. For each shared operation it compares the success answer's schema
// (the lowest 2xx with a JSON body; $ref and allOf resolved, `nullable` and 3.1's null type
// read alike, `integer` accepted where Cal.com says `number`, each of our oneOf/anyOf shapes held
// to the closest of Cal.com's) and the request body's required members. Findings marked
// "(narrower)" still validate against Cal.com's schema; those an entry of calcom-readings.mjs
// explains are marked with it: "(read as peers/README item N)" where Cal.com's document
// contradicts itself and we read it as that README says, "(listed exception: ID)" where the
// specification or DESIGN speaks, "(pending: ID)" for members built elsewhere (the same entries
// tests/e2e/calcom_contract.test.mjs applies to real answers); the others are the differences
// counted in the summary. Exit status: 0, or with --strict 1 when an operation differs; 2 for a
// bad argument or an unreadable document.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { entryLabel, explaining, sharedOperations } from './calcom-readings.mjs';

const kRepo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const kMaxDepth = 12;

function usage(code) {
  const out = code === 0 ? process.stdout : process.stderr;
  out.write('usage: tools/calcom-diff [--calcom PATH] [--ours PATH] [--strict]\n');
  process.exit(code);
}

function parseArgs(argv) {
  const opts = {
    calcom: path.resolve(kRepo, '..', 'shared', 'peers', 'calcom-api-v2.openapi.json'),
    ours: path.join(kRepo, 'docs', 'openapi.yaml'),
    strict: false,
  };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--strict') opts.strict = true;
    else if (a === '-h' || a === '--help') usage(0);
    else if (a === '--calcom' || a === '--ours') {
      if (i + 1 >= argv.length) usage(2);
      opts[a.slice(2)] = path.resolve(argv[++i]);
    } else usage(2);
  }
  return opts;
}

function loadYaml(file) {
  let yaml;
  try {
    yaml = createRequire(path.join(kRepo, 'tests', 'e2e', 'package.json'))('js-yaml');
  } catch {
    throw new Error('the YAML reader is missing: run `npm ci` in tests/e2e (or `make deps`)');
  }
  return yaml.load(readFileSync(file, 'utf8'));
}

function loadDocument(file) {
  let text;
  try {
    text = file.endsWith('.json') ? JSON.parse(readFileSync(file, 'utf8')) : loadYaml(file);
  } catch (e) {
    throw new Error(`cannot read ${file}: ${e.message}`);
  }
  if (!text || typeof text !== 'object' || typeof text.paths !== 'object') {
    throw new Error(`${file} is not an OpenAPI document (no paths)`);
  }
  return text;
}

// --- Schemas ---------------------------------------------------------------------------------

function deref(doc, schema, seen = new Set()) {
  let s = schema;
  for (let n = 0; s && typeof s === 'object' && typeof s.$ref === 'string'; ++n) {
    if (n > 32 || seen.has(s.$ref)) return {};
    seen.add(s.$ref);
    const ref = s.$ref;
    if (!ref.startsWith('#/')) return {};
    let target = doc;
    for (const part of ref.slice(2).split('/')) {
      target = target?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    // OpenAPI 3.0 ignores a $ref's siblings; 3.1 applies them.
    const siblings = { ...s };
    delete siblings.$ref;
    s = doc.openapi?.startsWith('3.0') ? target : { ...target, ...siblings };
  }
  return s && typeof s === 'object' ? s : {};
}

function typeList(t) {
  if (t === undefined) return [];
  return Array.isArray(t) ? t : [t];
}

// A schema read into one shape: {types: Set|null (null = any), nullable, properties, required,
// items, enum, additional (false when closed), alternatives (count of a union that stays one)}.
function normalize(doc, schema, depth = 0) {
  const s = deref(doc, schema);
  const n = {
    types: null, nullable: false, properties: new Map(), required: new Set(), items: null,
    enum: null, additional: true, alternatives: 0, alternativeSchemas: [],
  };
  if (depth > kMaxDepth) return n;
  const addTypes = (list) => {
    for (const t of list) {
      if (t === 'null') n.nullable = true;
      else (n.types ??= new Set()).add(t);
    }
  };
  if (s.type !== undefined) n.types = new Set();
  addTypes(typeList(s.type));
  if (s.nullable === true) n.nullable = true;
  if (Array.isArray(s.enum)) {
    n.enum = s.enum.filter((v) => v !== null);
    if (s.enum.includes(null)) n.nullable = true;
  }
  if (s.const !== undefined) {
    if (s.const === null) n.nullable = true;
    else n.enum = [s.const];
  }
  if (s.properties) for (const [k, v] of Object.entries(s.properties)) n.properties.set(k, v);
  for (const r of s.required ?? []) n.required.add(r);
  if (s.items) n.items = s.items;
  if (s.additionalProperties === false) n.additional = false;
  if ((n.properties.size || n.required.size) && !n.types) n.types = new Set(['object']);

  for (const part of s.allOf ?? []) merge(n, normalize(doc, part, depth + 1));

  const union = s.oneOf ?? s.anyOf;
  if (Array.isArray(union)) {
    const parts = union.map((p) => normalize(doc, p, depth + 1));
    const real = parts.filter((p) => !(p.types === null && p.nullable && !p.properties.size) &&
                                      !(p.types?.size === 0));
    if (parts.some((p) => p.nullable)) n.nullable = true;
    if (real.length === 1) {
      merge(n, real[0]);
    } else if (real.length > 1) {
      n.alternatives = real.length;
      n.alternativeSchemas = union.filter((_, i) => real.includes(parts[i]));
      for (const p of real) {
        if (p.types === null) n.types = null;
        else if (n.types !== null || s.type === undefined) {
          for (const t of p.types) (n.types ??= new Set()).add(t);
        }
      }
    }
  }
  // An enum or const without a type has the type of its values.
  if (!n.types && n.enum?.length) {
    n.types = new Set(n.enum.map((v) => (Number.isInteger(v) ? 'integer' : typeof v)));
  }
  return n;
}

function merge(into, from) {
  if (from.types) for (const t of from.types) (into.types ??= new Set()).add(t);
  if (from.nullable) into.nullable = true;
  for (const [k, v] of from.properties) {
    into.properties.set(k, into.properties.has(k) ? { allOf: [into.properties.get(k), v] } : v);
  }
  for (const r of from.required) into.required.add(r);
  into.items ??= from.items;
  into.enum ??= from.enum;
  if (from.additional === false) into.additional = false;
  if (from.alternatives > into.alternatives) {
    into.alternatives = from.alternatives;
    into.alternativeSchemas = from.alternativeSchemas;
  }
}

function refName(schema) {
  return typeof schema?.$ref === 'string' ? ` (${schema.$ref.split('/').pop()})` : '';
}

function typeText(n) {
  const list = n.types ? [...n.types].sort() : ['any'];
  if (n.nullable) list.push('null');
  return list.join('|') || 'nothing';
}

// Types of ours that Cal.com's schema does not accept (an integer is a number).
function extraTypes(theirs, ours) {
  if (theirs.types === null) return [];
  if (ours.types === null) return ['any'];
  return [...ours.types].filter(
      (t) => !theirs.types.has(t) && !(t === 'integer' && theirs.types.has('number')));
}

// Compares an answer's schema: what would make our answer fail Cal.com's schema, and where ours
// is narrower. Appends {where, text, narrower} to findings.
function compareResponse(calcom, ours, cs, os, where, findings, depth = 0) {
  if (depth > kMaxDepth) return;
  const t = normalize(calcom, cs);
  const o = normalize(ours, os);
  const at = where || '(body)';
  const add = (text, narrower = false) => findings.push({ where: at, text, narrower });

  const extra = extraTypes(t, o);
  if (extra.length) add(`type: Cal.com ${typeText(t)}, ours ${typeText(o)}`);
  if (o.nullable && !t.nullable) add('ours may be null, Cal.com\'s may not');
  else if (t.nullable && !o.nullable && t.types !== null) {
    add('Cal.com\'s may be null, ours is never null', true);
  }

  if (t.enum) {
    if (!o.enum) {
      if (!extra.length) add(`Cal.com allows only [${t.enum.join(', ')}], ours any value`);
    } else {
      const more = o.enum.filter((v) => !t.enum.includes(v));
      const fewer = t.enum.filter((v) => !o.enum.includes(v));
      if (more.length) add(`enum values Cal.com does not have: ${more.join(', ')}`);
      if (fewer.length) add(`enum values only Cal.com has: ${fewer.join(', ')}`, true);
    }
  }
  if (t.alternatives > 1 || o.alternatives > 1) {
    // Each of our shapes is held to the closest of Cal.com's.
    const theirAlts = t.alternatives > 1 ? t.alternativeSchemas : [cs];
    const ourAlts = o.alternatives > 1 ? o.alternativeSchemas : [os];
    ourAlts.forEach((oa, oi) => {
      let best = null;
      theirAlts.forEach((ta, ti) => {
        const sub = [];
        compareResponse(calcom, ours, ta, oa, where, sub, depth + 1);
        // A shape of another type is the farthest match.
        const count = sub.filter((f) => !f.narrower).length +
                      (sub.some((f) => f.where === at && f.text.startsWith('type:')) ? 1000 : 0);
        if (!best || count < best.count) best = { count, sub, ti };
      });
      const ourName = ourAlts.length > 1 ? `our shape ${oi + 1} of ${ourAlts.length}` : 'ours';
      const theirName = theirAlts.length > 1
        ? `Cal.com's shape ${best.ti + 1} of ${theirAlts.length}${refName(theirAlts[best.ti])}`
        : 'Cal.com\'s';
      add(`${ourName} compared with ${theirName}`, true);
      findings.push(...best.sub);
    });
    return;
  }

  const isObject = (n) => n.types?.has('object') || n.properties.size > 0;
  if (isObject(t) && isObject(o)) {
    const missing = [];
    const optional = [];
    for (const name of t.required) {
      if (!o.properties.has(name)) missing.push(name);
      else if (!o.required.has(name)) optional.push(name);
    }
    if (missing.length) add(`required by Cal.com, missing from ours: ${missing.join(', ')}`);
    if (optional.length) add(`required by Cal.com, optional in ours: ${optional.join(', ')}`);
    const absent = [...t.properties.keys()].filter((k) => !t.required.has(k) && !o.properties.has(k));
    if (absent.length) add(`optional in Cal.com, not in ours: ${absent.join(', ')}`, true);
    const added = [...o.properties.keys()].filter((k) => !t.properties.has(k));
    if (added.length) {
      if (t.additional === false) add(`ours adds (Cal.com's schema forbids them): ${added.join(', ')}`);
      else add(`ours adds: ${added.join(', ')}`, true);
    }
    for (const [name, schema] of t.properties) {
      if (!o.properties.has(name)) continue;
      compareResponse(calcom, ours, schema, o.properties.get(name), where ? `${where}.${name}` : name,
                      findings, depth + 1);
    }
  } else if (t.types?.has('array') && o.types?.has('array') && t.items && o.items) {
    compareResponse(calcom, ours, t.items, o.items, `${where || ''}[]`, findings, depth + 1);
  }
}

// Compares a request body's required members: what a client written for Cal.com sends (or
// leaves out) that ours would refuse.
function compareRequest(calcom, ours, cs, os, findings) {
  const add = (text, narrower = false) => findings.push({ where: 'request body', text, narrower });
  if (!cs && !os) return;
  if (!cs) { add('ours takes a body, Cal.com documents none'); return; }
  if (!os) { add('Cal.com takes a body, ours documents none'); return; }
  const t = normalize(calcom, cs);
  const o = normalize(ours, os);
  if (t.alternatives > 1 || o.alternatives > 1) {
    // Each of Cal.com's shapes is held to the closest of ours.
    const theirAlts = t.alternatives > 1 ? t.alternativeSchemas : [cs];
    const ourAlts = o.alternatives > 1 ? o.alternativeSchemas : [os];
    theirAlts.forEach((ta, ti) => {
      let best = null;
      for (const oa of ourAlts) {
        const sub = [];
        compareRequest(calcom, ours, ta, oa, sub);
        const count = sub.filter((f) => !f.narrower).length;
        if (!best || count < best.count) best = { count, sub };
      }
      const name = theirAlts.length > 1
        ? `Cal.com's shape ${ti + 1} of ${theirAlts.length}${refName(ta)}`
        : 'Cal.com\'s';
      for (const f of best.sub) findings.push({ ...f, text: `${name}: ${f.text}` });
    });
    return;
  }
  const notTaken = [...t.required].filter((k) => !o.properties.has(k));
  const optional = [...t.required].filter((k) => o.properties.has(k) && !o.required.has(k));
  const stricter = [...o.required].filter((k) => !t.required.has(k));
  if (notTaken.length) add(`required by Cal.com, not taken by ours: ${notTaken.join(', ')}`);
  if (stricter.length) add(`required by ours, optional in Cal.com: ${stricter.join(', ')}`);
  if (optional.length) add(`required by Cal.com, optional in ours: ${optional.join(', ')}`, true);
  if (o.additional === false) {
    const refused = [...t.properties.keys()].filter((k) => !o.properties.has(k) && !t.required.has(k));
    if (refused.length) add(`Cal.com members ours does not take (closed body): ${refused.join(', ')}`);
  }
}

// A finding explained by tools/calcom-readings.mjs (a peers/README item, a listed exception or
// a pending member) is printed with its label and not counted.
function reading(calcomOp, finding) {
  if (finding.narrower) return undefined;
  const entry = explaining(calcomOp, finding);
  return entry ? entryLabel(entry) : undefined;
}

// --- Operations ------------------------------------------------------------------------------

function jsonContent(content) {
  if (!content) return undefined;
  const key = Object.keys(content).find((k) => /json/i.test(k));
  return key ? content[key] : undefined;
}

function success(doc, op) {
  const codes = Object.keys(op.responses ?? {}).filter((c) => /^2\d\d$/.test(c)).sort();
  for (const code of codes) {
    const r = deref(doc, op.responses[code]);
    const c = jsonContent(r.content);
    if (c?.schema) return { code, schema: c.schema };
  }
  return { code: codes[0], schema: undefined };
}

function requestSchema(doc, op) {
  if (!op.requestBody) return undefined;
  return jsonContent(deref(doc, op.requestBody).content)?.schema;
}

const label = (x) => `${x.method.toUpperCase()} ${x.path}`;

function main() {
  const opts = parseArgs(process.argv.slice(2));
  let calcom;
  let ours;
  try {
    calcom = loadDocument(opts.calcom);
    ours = loadDocument(opts.ours);
  } catch (e) {
    process.stderr.write(`calcom-diff: ${e.message}\n`);
    process.exit(2);
  }

  const { shared, oursOnly, theirOps } = sharedOperations(calcom, ours);
  const matchedTheirs = new Set(shared.map(({ t }) => `${t.method} ${t.path}`));
  const theirsOnly = theirOps.filter((t) => !matchedTheirs.has(`${t.method} ${t.path}`));

  let differing = 0;
  let narrowerOnly = 0;
  let findingsTotal = 0;
  console.log(`Cal.com: ${opts.calcom}\nours:    ${opts.ours}\n`);
  for (const { t, o } of shared) {
    const findings = [];
    const ts = success(calcom, t.op);
    const os = success(ours, o.op);
    if (ts.code !== os.code) {
      const text = `success status: Cal.com ${ts.code ?? 'none'}, ours ${os.code ?? 'none'}`;
      findings.push({ where: 'status', text, narrower: false });
    }
    if (ts.schema && os.schema) compareResponse(calcom, ours, ts.schema, os.schema, '', findings);
    else if (ts.schema) {
      findings.push({ where: '(body)', text: 'Cal.com documents a JSON answer, ours none', narrower: false });
    }
    compareRequest(calcom, ours, requestSchema(calcom, t.op), requestSchema(ours, o.op), findings);

    for (const f of findings) f.reading = reading(label(t), f);
    const real = findings.filter((f) => !f.narrower && !f.reading);
    if (real.length) ++differing;
    else if (findings.length) ++narrowerOnly;  // narrower, or places read per the README
    findingsTotal += real.length;
    const name = t.path === o.path ? label(o) : `${label(o)}  (Cal.com ${t.path})`;
    if (!findings.length) {
      console.log(`= ${name}: same\n`);
      continue;
    }
    console.log(`${real.length ? '!' : '~'} ${name}`);
    for (const f of findings) {
      const tag = f.narrower ? ' (narrower)' : f.reading ? ` (${f.reading})` : '';
      console.log(`    ${f.where}: ${f.text}${tag}`);
    }
    console.log('');
  }

  // Ours only: under a resource Cal.com has (same first two segments), or elsewhere.
  const resources = new Set(theirOps.map((t) => t.path.split('/').slice(0, 3).join('/')));
  const calcomLike = oursOnly.filter((o) => resources.has(o.path.split('/').slice(0, 3).join('/')));
  const elsewhere = oursOnly.length - calcomLike.length;
  if (calcomLike.length) {
    console.log('Ours under Cal.com\'s resources, absent from Cal.com\'s document:');
    for (const o of calcomLike) console.log(`    ${label(o)}`);
    console.log('');
  }
  console.log('Cal.com only:');
  for (const t of theirsOnly) console.log(`    ${label(t)}`);
  console.log('');

  console.log('Summary');
  console.log(`  shared operations:                 ${shared.length}`);
  console.log(`  ... that differ:                   ${differing} (${findingsTotal} differences)`);
  console.log(`  ... narrower or read only:         ${narrowerOnly}`);
  console.log(`  ... same:                          ${shared.length - differing - narrowerOnly}`);
  console.log(`  Cal.com only:                      ${theirsOnly.length} of ${theirOps.length}`);
  console.log(`  ours only, under Cal.com's paths:  ${calcomLike.length}`);
  console.log(`  ours only, elsewhere:              ${elsewhere}`);
  process.exit(opts.strict && differing > 0 ? 1 : 0);
}

main();
