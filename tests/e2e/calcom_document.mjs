// Cal.com's OpenAPI document of its API v2 for the node tests: where it is read from, the
// `cal-api-version` date it asks for on an operation, and the check of a real answer against it.
// Used by calcom_contract.test.mjs and calcom_platform_backend.test.mjs; the document is read as
// tools/calcom-readings.mjs says (its `correctedCalcom`).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import Ajv from 'ajv';
import addFormats from 'ajv-formats';

const kRepo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

// Cal.com's document is not part of this repository: it is read where the project's shared folder
// keeps it beside the checkout, or where RDV_CALCOM_OPENAPI names it (the CTest registration sets it).
export const kCalcomDocument = process.env.RDV_CALCOM_OPENAPI ||
  path.resolve(kRepo, '..', 'shared', 'peers', 'calcom-api-v2.openapi.json');

// Cal.com's document as published; a missing document fails the test.
export function loadCalcom() {
  assert.ok(existsSync(kCalcomDocument), `Cal.com's document is not at ${kCalcomDocument} (set RDV_CALCOM_OPENAPI)`);
  return JSON.parse(readFileSync(kCalcomDocument, 'utf8'));
}

// The `cal-api-version` date Cal.com's document asks for on an operation ("Must be set to `…`").
export function calcomVersion(op) {
  const p = (op.parameters ?? []).find((x) => x.in === 'header' && x.name === 'cal-api-version');
  return p?.description?.match(/`(\d{4}-\d{2}-\d{2})`/)?.[1];
}

// Cal.com's OpenAPI 3.0 schemas as JSON Schema draft-07: `nullable` becomes a null type, and
// what sits beside a `$ref` is dropped (3.0 ignores it).
export function toJsonSchema(node) {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (!node || typeof node !== 'object') return node;
  if (typeof node.$ref === 'string') return { $ref: node.$ref };
  const out = {};
  for (const [k, v] of Object.entries(node)) out[k] = toJsonSchema(v);
  if (out.nullable === true && (out.type === undefined || typeof out.type === 'string')) {
    delete out.nullable;
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

// An ajv instance holding `doc` (a corrected Cal.com document) under the id `calcom`.
export function validatorFor(doc) {
  const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  ajv.addSchema(toJsonSchema(doc), 'calcom');
  return ajv;
}

const esc = (s) => String(s).replaceAll('~', '~0').replaceAll('/', '~1');

// Checks one answer ({status, json, text, contentType}) of Cal.com's operation `t` ({method,
// path, op}, as tools/calcom-readings.mjs lists them) against the document `ajv` holds. Returns
// null when it conforms, else the reason.
export function checkAnswer(ajv, t, answer) {
  const responses = t.op.responses ?? {};
  if (!responses[String(answer.status)]) {
    return `answered ${answer.status}, Cal.com documents ${Object.keys(responses).join(', ')}: ${answer.text.slice(0, 300)}`;
  }
  const response = responses[String(answer.status)];
  const media = Object.keys(response.content ?? {}).find((k) => /json/.test(k));
  if (!media) return null;  // Cal.com documents no body (e.g. GET /v2/calendars/{calendar}/save)
  if (answer.json === null) return `not JSON (${answer.contentType}): ${answer.text.slice(0, 200)}`;
  const ref = `calcom#/paths/${esc(t.path)}/${t.method}/responses/${answer.status}/content/${esc(media)}/schema`;
  const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
  if (validate(answer.json)) return null;
  return `${ajv.errorsText(validate.errors, { separator: '; ' })}\n    body: ${answer.text.slice(0, 500)}`;
}
