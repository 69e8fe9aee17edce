// The page: an unmodified PowerSync web client (@powersync/web) in a browser tab, on an origin other
// than Ackpoint's. It connects over streaming HTTP, inserts a row, uploads it through its connector,
// and must see the write acknowledged through Ackpoint (upload queue empty, lastSyncedAt advanced,
// and the core's own record: target checkpoint <= last applied checkpoint).
// Parameters come in the URL's fragment (never sent to the static server):
//   index.html#endpoint=http://127.0.0.1:PORT&token=JWT&mode=legacy|requests&workers=0|1&timeout=MS
// The outcome is published as window.__result = {ok, mode, message, ...} for the driver.
import {
  PowerSyncDatabase,
  Schema,
  SyncStreamConnectionMethod,
  Table,
  WASQLiteVFS,
  column
} from '@powersync/web';

const params = new URLSearchParams(location.hash.slice(1));
const endpoint = params.get('endpoint');
const token = params.get('token');
const mode = params.get('mode') ?? 'legacy';
// workers=1: the SDK's defaults (database and sync client in shared workers) instead of in-tab.
const workers = params.get('workers') === '1';
const timeoutMs = Number(params.get('timeout') ?? 60_000);
const deadline = Date.now() + timeoutMs;

const log = (message) => {
  console.log(`[page ${mode}] ${message}`);
  const line = document.createElement('div');
  line.textContent = message;
  document.getElementById('log')?.append(line);
};

const schema = new Schema({ todos: new Table({ description: column.text }) });
const uploaded = [];
const connector = {
  async fetchCredentials() {
    return { endpoint, token };
  },
  async uploadData(db) {
    // The app backend would write these to the source database; Ackpoint only needs the checkpoint.
    let tx;
    while ((tx = await db.getNextCrudTransaction())) {
      uploaded.push(...tx.crud.map((c) => c.id));
      await tx.complete();
    }
  }
};

// By default here no web workers and no shared sync worker: the database (wa-sqlite with the
// PowerSync core, on IndexedDB) and the sync client run in the tab itself. With workers=1 the SDK's
// own defaults apply: the database (IndexedDB) and the sync client each in a shared worker
// (dist/worker.js, the SDK's prebuilt worker, where a bundler would put it). The network side, which
// is what Ackpoint sees, is the same fetch-based client either way.
const db = new PowerSyncDatabase({
  schema,
  database: workers
    ? { dbFilename: `ackpoint-browser-${mode}-workers.db` }
    : {
        dbFilename: `ackpoint-browser-${mode}.db`,
        vfs: WASQLiteVFS.IDBBatchAtomicVFS,
        useWebWorker: false,
        enableMultiTabs: false
      }
});

class Failure extends Error {}

// The SDK's status without error stacks (the browser events printed on failure have those).
function status() {
  return JSON.stringify(db.currentStatus.toJSON(), (key, value) => (key === 'stack' ? undefined : value));
}

async function until(what, check, more = () => '') {
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Failure(`timed out waiting for ${what}; status ${status()} ${more()}`.trim());
}

async function run() {
  if (!endpoint || !token) throw new Failure('missing endpoint or token in the URL fragment');
  if (new URL(endpoint).origin === location.origin) {
    throw new Failure(`the page must not share Ackpoint's origin (${location.origin})`);
  }
  await db.init();
  log(`initialized; core ${(await db.get('SELECT powersync_rs_version() AS v')).v}`);
  await db.connect(connector, { connectionMethod: SyncStreamConnectionMethod.HTTP, checkpointMode: mode });
  await until('the first sync', async () => db.currentStatus.hasSynced === true);
  // Taken just before the write: with workers the tab's status trails the sync worker's, and a
  // checkpoint applied before the write must not count as the write's acknowledgement.
  const syncedBefore = db.currentStatus.lastSyncedAt?.getTime() ?? 0;
  log(`first sync at ${syncedBefore}`);

  await db.execute('INSERT INTO todos (id, description) VALUES (uuid(), ?)', ['written from a browser']);
  await until('the upload', async () => uploaded.length === 1);
  log('uploaded');
  // The write sets the core's target to MAX_OP_ID; only the checkpoint requested after the upload
  // makes it concrete, and the write is acknowledged once that checkpoint is applied (the core's own
  // record: target <= last applied), the queue is empty and lastSyncedAt has moved past the write.
  let kv = {};
  await until('the acknowledgement of the write', async () => {
    const queue = await db.getUploadQueueStats();
    const synced = db.currentStatus.lastSyncedAt?.getTime() ?? 0;
    kv = Object.fromEntries((await db.getAll('SELECT key, value FROM ps_kv')).map((r) => [r.key, r.value]));
    const target = BigInt(kv.target_checkpoint_request_id ?? -1);
    const applied = BigInt(kv.last_applied_checkpoint_request_id ?? -1);
    return (
      queue.count === 0 &&
      synced > syncedBefore &&
      !db.currentStatus.dataFlowStatus.uploading &&
      target >= 1n &&
      target < 9223372036854775807n &&
      applied >= target
    );
  }, () => `ps_kv ${JSON.stringify(kv)}`);
  const target = BigInt(kv.target_checkpoint_request_id);
  const applied = BigInt(kv.last_applied_checkpoint_request_id);
  log(`acknowledged at checkpoint ${applied}`);
  return { target: String(target), applied: String(applied) };
}

const started = performance.now();
run()
  .then(
    (details) => ({
      ok: true,
      mode,
      message: `the write was acknowledged through Ackpoint at checkpoint ${details.applied}`,
      ...details
    }),
    (error) => ({
      ok: false,
      mode,
      message: error instanceof Failure ? error.message : `${error?.name}: ${error?.message}\n${error?.stack}`
    })
  )
  .then(async (result) => {
    result.ms = Math.round(performance.now() - started);
    try {
      const closing = (async () => {
        await db.disconnectAndClear();
        await db.close();
      })();
      const limit = new Promise((_, reject) => setTimeout(() => reject(new Error('timed out')), 5_000));
      await Promise.race([closing, limit]);
    } catch (error) {
      result.closeError = String(error);
    }
    window.__result = result;
  });
