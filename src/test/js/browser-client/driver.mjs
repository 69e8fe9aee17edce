// Drives headless Chromium (Debian's, through playwright-core) to the page in dist/, served by a
// static file server on its own loopback port, i.e. from an origin other than Ackpoint's, so every
// request the PowerSync web client makes to Ackpoint is a real cross-origin (CORS) request.
// One fresh browser context per variant; each must report its write acknowledged. Variants: legacy,
// requests (the checkpoint mode, client in the tab), legacy-workers, requests-workers (the SDK's
// default setup: the database and the sync client in shared workers).
// Usage: ENDPOINT=http://127.0.0.1:PORT TOKENS=legacy=JWT,requests=JWT node driver.mjs
// Optional: MODES=legacy,requests (the variants; each needs its token in TOKENS),
//           CHROMIUM=/usr/bin/chromium, PAGE_TIMEOUT_MS=60000 (per variant, inside the page)
// Prints one PASS/FAIL line per variant (the browser's console and its calls to Ackpoint on stderr when
// one fails) and exits 1 if any failed; scripts/browser-client-test prints the tally.
import { createServer } from 'node:http';
import { readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, 'dist');
const endpoint = process.env.ENDPOINT;
const tokens = Object.fromEntries(
  (process.env.TOKENS ?? '').split(',').filter(Boolean).map((pair) => {
    const at = pair.indexOf('=');
    return [pair.slice(0, at), pair.slice(at + 1)];
  })
);
const modes = (process.env.MODES ?? 'legacy,requests').split(',').filter(Boolean);
const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const pageTimeoutMs = Number(process.env.PAGE_TIMEOUT_MS ?? 60_000);

if (!endpoint || modes.some((mode) => !tokens[mode])) {
  console.error('usage: ENDPOINT=http://127.0.0.1:PORT TOKENS=legacy=JWT,requests=JWT node driver.mjs');
  process.exit(2);
}

// The whole run is bounded, whatever hangs.
const watchdog = setTimeout(() => {
  console.log('FAIL: the browser client test did not finish in time');
  process.exit(1);
}, (pageTimeoutMs + 30_000) * modes.length + 30_000);
watchdog.unref();

const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json',
  '.wasm': 'application/wasm'
};

// The page's origin: a plain static file server, no CORS headers of its own.
function serve() {
  const server = createServer((req, res) => {
    let file = null;
    try {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      file = normalize(join(root, path === '/' ? 'index.html' : path));
    } catch {
      // a malformed path is simply not found
    }
    if (!file?.startsWith(root + sep) || !statSync(file, { throwIfNoEntry: false })?.isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, {
      'content-type': types[extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-store'
    });
    res.end(readFileSync(file));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

if (!statSync(join(root, 'page.js'), { throwIfNoEntry: false })) {
  console.log(`FAIL: ${root} has no page: run node build.mjs first`);
  process.exit(1);
}
const server = await serve();
// Another port is another origin. Loopback is still a secure context, which the SDK needs
// (navigator.locks exists only there).
const pageOrigin = `http://127.0.0.1:${server.address().port}`;
const ackpointOrigin = new URL(endpoint).origin;
if (pageOrigin === ackpointOrigin) {
  console.error(`FAIL: the page's origin ${pageOrigin} is Ackpoint's`);
  process.exit(1);
}

let browser;
let passed = 0;
let failed = 0;
try {
  browser = await chromium.launch({
    executablePath,
    headless: true,
    timeout: 30_000,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync'
      // No --user-data-dir: playwright-core refuses it with launch(), and gives every launch a
      // fresh profile of its own under $TMPDIR (removed on close); each mode gets a new context.
    ]
  });
  console.error(`browser: Chromium ${browser.version()}; page at ${pageOrigin}, Ackpoint at ${ackpointOrigin}`);
  for (const mode of modes) {
    if (await runMode(mode)) passed++;
    else failed++;
  }
} catch (error) {
  console.log(`FAIL: ${error?.stack ?? error}`);
  failed = modes.length - passed;
} finally {
  await browser?.close().catch(() => {});
  server.close();
  server.closeAllConnections?.();
}
process.exit(failed === 0 ? 0 : 1);

async function runMode(variant) {
  // "legacy", "requests": the client in the tab; "legacy-workers", "requests-workers": the SDK's
  // default setup, the database and the sync client in shared workers.
  const [mode, suffix] = variant.split('-');
  const workers = suffix === 'workers';
  const context = await browser.newContext();
  const page = await context.newPage();
  // Everything the page said or suffered, in order, printed if the mode fails.
  const events = [];
  // What the page asked of Ackpoint, as the browser saw it (status and CORS header of each answer).
  const ackpointCalls = [];
  page.on('console', (msg) => events.push(`[console.${msg.type()}] ${msg.text()}`));
  page.on('pageerror', (error) => events.push(`[pageerror] ${error?.stack ?? error}`));
  page.on('requestfailed', (request) => {
    events.push(`[requestfailed] ${request.method()} ${request.url()}: ${request.failure()?.errorText}`);
  });
  page.on('response', async (response) => {
    const url = new URL(response.url());
    if (url.origin !== ackpointOrigin) return;
    const call = { method: response.request().method(), path: url.pathname, status: response.status() };
    ackpointCalls.push(call);
    call.allowOrigin = (await response.headerValue('access-control-allow-origin').catch(() => null)) ?? null;
    events.push(`[ackpoint] ${call.method} ${call.path} -> ${call.status} (allow-origin ${call.allowOrigin})`);
  });

  const fragment = new URLSearchParams({
    endpoint,
    token: tokens[variant],
    mode,
    workers: workers ? '1' : '0',
    timeout: String(pageTimeoutMs)
  });
  let result;
  try {
    await page.goto(`${pageOrigin}/index.html#${fragment}`, { waitUntil: 'load', timeout: 30_000 });
    const handle = await page.waitForFunction(() => window.__result, null, {
      timeout: pageTimeoutMs + 15_000,
      polling: 250
    });
    result = await handle.jsonValue();
  } catch (error) {
    result = { ok: false, mode, message: `no result from the page: ${error?.message ?? error}` };
  }

  // The tab itself must have talked to Ackpoint across origins, with Ackpoint's CORS consent. (With
  // workers the calls come from the shared sync worker, whose traffic Playwright does not show; its
  // origin is the page's all the same, and the page's own result is then the evidence.)
  const checkpointPath = mode === 'requests' ? '/sync/checkpoint-request' : '/write-checkpoint2.json';
  if (result.ok && !workers) {
    for (const path of ['/sync/stream', checkpointPath]) {
      const call = ackpointCalls.find((c) => c.path === path && c.status === 200);
      if (!call) {
        result = { ok: false, mode, message: `the browser made no successful ${path} request to Ackpoint` };
        break;
      }
      if (call.allowOrigin !== '*' && call.allowOrigin !== pageOrigin) {
        result = {
          ok: false,
          mode,
          message: `${path} answered without an Access-Control-Allow-Origin for ${pageOrigin}: ${call.allowOrigin}`
        };
        break;
      }
    }
  }

  if (result.ok) {
    console.log(`PASS (${variant}): ${result.message} in ${result.ms} ms`);
    if (result.closeError) console.error(`  note: closing the database failed: ${result.closeError}`);
  } else {
    const blocked = events.find((line) => line.includes('blocked by CORS policy'));
    if (blocked) {
      result.message += `\n  the browser blocked Ackpoint's answers: ${blocked.replace(/^\[console\.\w+\] /, '')}`;
    } else if (result.message.includes('Failed to fetch')) {
      result.message += workers
        ? "\n  (a network or CORS failure: the sync worker's console, which says which, is not shown here)"
        : '\n  (a network failure: the browser reported no CORS block)';
    }
    console.log(`FAIL (${variant}): ${result.message}`);
    console.error(`  last browser events (${variant}):`);
    for (const line of events.slice(-40)) console.error(`  ${line}`);
  }
  await context.close().catch(() => {});
  return result.ok;
}
