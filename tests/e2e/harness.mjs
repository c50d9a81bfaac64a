// Test harness for the node tests: a scratch database on the CTest MariaDB, the real `rendezvous`
// binary (migrate, admin commands, serve) and Debian's chromium through playwright-core.
//
// Environment: RDV_BIN_DIR (folder of the built binary and plugins), RDV_TEST_DB_SOCKET (socket of
// the MariaDB started by the CTest fixture `mariadb`).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const kCommandTimeoutMs = 60_000;
const kStartTimeoutMs = 30_000;
const kStopTimeoutMs = 15_000;
// The server's credential encryption key (needed to store webhook secrets), fixed for tests
// unless the environment sets one; the same as the C++ tests' TestServer.
const kEncryptionKey = process.env.RENDEZVOUS_ENCRYPTION_KEY || 'cmVuZGV6dm91cy10ZXN0LWtleS0zMi1ieXRlcy0hISE=';

export const kChromium = process.env.RDV_CHROMIUM || '/usr/bin/chromium';

function requireEnv(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (the CTest registration sets it)`);
  return value;
}

// "YYYY-MM-DD" of the first Monday at least a week ahead: inside a user's default working hours.
export function nextMonday() {
  const d = new Date(Date.now() + 7 * 86_400_000);
  while (d.getUTCDay() !== 1) d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

// A browser's page loads spoken with fetch against `base` (redirects not followed): the cookies
// the server sets are kept in `jar` and sent back with every load. `page(url, init)` answers
// {status, location, html}.
export function fetchPages(base) {
  const jar = new Map();
  const page = async (url, init = {}) => {
    const headers = { ...(init.headers ?? {}), Cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') };
    const res = await fetch(new URL(url, base), { ...init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return { status: res.status, location: res.headers.get('location'), html: await res.text() };
  };
  return { jar, page };
}

// Runs a program to completion with a deadline; rejects with its stderr on a non-zero exit.
export function run(file, args, { timeoutMs = kCommandTimeoutMs } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], env: serverEnv() });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ out, err });
      else reject(new Error(`${path.basename(file)} ${args.join(' ')} failed (${signal ?? code}):\n${err}`));
    });
  });
}

function serverEnv() {
  return { ...process.env, RENDEZVOUS_ENCRYPTION_KEY: kEncryptionKey };
}

function mariadb(socket, sql) {
  return run('mariadb', ['--no-defaults', '-S', socket, '-uroot', '-N', '-B', '-e', sql]);
}

// A port the OS picks for a listener that is closed at once: for a server whose configured
// base_url must be the address it really listens on (DPoP proofs name the URL they were made for).
function probeFreePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

// `plugins` is the YAML of the `plugins:` section, indented by two spaces. `apiPort`: the api
// listener's port, and its base_url the matching address (default: a port the OS picks and a
// base_url that is not where it listens). `serverExtra`: more YAML of the `server:` section.
function configYaml({ socket, database, plugins, logLevel, extra, apiPort, serverExtra }) {
  const api = apiPort
    ? `  api: { listen: "127.0.0.1:${apiPort}", base_url: "http://127.0.0.1:${apiPort}" }`
    : '  api: { listen: "127.0.0.1:0", base_url: "http://127.0.0.1:8080" }';
  return [
    'server:',
    api,
    '  app: { listen: "127.0.0.1:0", app_url: "http://127.0.0.1:8081" }',
    '  io_threads: 2',
    '  worker_threads: 4',
    ...(serverExtra ? [serverExtra.trimEnd()] : []),
    'database:',
    `  socket: "${socket}"`,
    '  user: root',
    '  password: ""',
    `  name: ${database}`,
    '  pool_size: 4',
    `logging: { level: ${logLevel}, format: json }`,
    ...(extra ? [extra.trimEnd()] : []),
    'plugins:',
    plugins.trimEnd(),
    '',
  ].join('\n');
}

// One server on a fresh database. Create with TestServer.start(); always stop() it.
export class TestServer {
  constructor({ binDir, socket, dir, database }) {
    this.binary = path.join(binDir, 'rendezvous');
    this.socket = socket;
    this.dir = dir;
    this.database = database;
    this.config = path.join(dir, 'rendezvous.yaml');
    this.child = null;
    this.appUrl = '';
    this.apiUrl = '';
    this.log = [];
  }

  // `plugins`: the YAML of the `plugins:` section (each line indented by two spaces); `logLevel`
  // debug also logs the route table at start-up (one `route` line per route, kept in `log`);
  // `extra`: more top-level YAML (e.g. a `mail:` section). `exactBaseUrl`: the api listener's
  // configured base_url is the address it listens on. `serverExtra`: more lines of the `server:`
  // section (each indented by two spaces), e.g. `  version_header: cal-api-version`.
  static async start({ plugins = '  oauth: {}', logLevel = 'info', extra = '', exactBaseUrl = false, serverExtra = '' } = {}) {
    const binDir = requireEnv('RDV_BIN_DIR');
    const socket = requireEnv('RDV_TEST_DB_SOCKET');
    if (!existsSync(path.join(binDir, 'rendezvous'))) throw new Error(`no rendezvous binary in ${binDir}: build first`);
    const dir = await mkdtemp(path.join(tmpdir(), 'rdv-e2e-'));
    const database = `e2e_${randomBytes(6).toString('hex')}`;
    const server = new TestServer({ binDir, socket, dir, database });
    await mariadb(socket, `CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    try {
      const apiPort = exactBaseUrl ? await probeFreePort() : undefined;
      await writeFile(server.config, configYaml({ socket, database, plugins, logLevel, extra, apiPort, serverExtra }));
      await server.cli(['migrate']);
      await server.serve();
    } catch (e) {
      await server.stop();
      throw e;
    }
    return server;
  }

  // Runs `rendezvous <args> --config ...` and returns its JSON output.
  async cli(args) {
    const { out } = await run(this.binary, [...args, '--config', this.config]);
    return out.trim() ? JSON.parse(out) : null;
  }

  async createUser({ email, name, password, admin = false }) {
    const args = ['admin', 'user', 'create', '--email', email, '--name', name, '--password', password];
    if (admin) args.push('--admin');
    return this.cli(args);
  }

  // An API key of user `userId` (`admin api-key create`).
  async createApiKey(userId) {
    return (await this.cli(['admin', 'api-key', 'create', '--user-id', String(userId)])).key;
  }

  async dbQuery(sql) {
    const { out } = await mariadb(this.socket, `USE \`${this.database}\`; ${sql}`);
    return out;
  }

  serve() {
    return new Promise((resolve, reject) => {
      const child = spawn(this.binary, ['serve', '--config', this.config],
        { stdio: ['ignore', 'ignore', 'pipe'], env: serverEnv() });
      this.child = child;
      const ports = {};
      let ready = false;
      let settled = false;
      const settle = (error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      };
      const timer = setTimeout(() => settle(new Error(`server not ready within ${kStartTimeoutMs} ms:\n${this.log.join('\n')}`)), kStartTimeoutMs);
      readline.createInterface({ input: child.stderr }).on('line', (line) => {
        this.log.push(line);
        let entry;
        try { entry = JSON.parse(line); } catch { return; }
        if (entry.msg === 'listening' && entry.listener && entry.port) ports[entry.listener] = entry.port;
        if (entry.msg === 'ready') ready = true;
        if (ready && ports.app && ports.api) {
          this.appUrl = `http://127.0.0.1:${ports.app}`;
          this.apiUrl = `http://127.0.0.1:${ports.api}`;
          settle();
        }
      });
      child.on('exit', (code, signal) => {
        this.child = null;
        settle(new Error(`server exited (${signal ?? code}) before it was ready:\n${this.log.join('\n')}`));
      });
    });
  }

  // SIGTERM, then SIGKILL after a deadline; drops the database and the temporary folder.
  async stop() {
    const child = this.child;
    if (child) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), kStopTimeoutMs);
      await exited;
      clearTimeout(timer);
      this.child = null;
    }
    await mariadb(this.socket, `DROP DATABASE IF EXISTS \`${this.database}\``).catch(() => {});
    if (!process.env.RDV_E2E_KEEP) await rm(this.dir, { recursive: true, force: true });
  }
}

// Debian's chromium, headless, with a fresh profile (playwright gives every launch its own).
export async function launchBrowser() {
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch (e) {
    throw new Error(`playwright-core is not installed in tests/e2e: run \`make deps\` (npm ci in tests/e2e). ${e.message}`);
  }
  if (!existsSync(kChromium)) throw new Error(`${kChromium} is missing: run \`make deps\` (apt-get install chromium)`);
  return chromium.launch({
    executablePath: kChromium,
    headless: true,
    timeout: 30_000,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

// Signs in through the login page; leaves the page on `next`.
export async function signIn(page, server, { email, password }, next = '/settings/developer/oauth') {
  await page.goto(`${server.appUrl}/auth/login?next=${encodeURIComponent(next)}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await Promise.all([
    page.waitForURL((url) => url.pathname === next),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
}
