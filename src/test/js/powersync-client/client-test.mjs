// An unmodified PowerSync client against Ackpoint: it connects, inserts a row, uploads it, and must
// see the write acknowledged (ps_crud empty and the write checkpoint applied) through Ackpoint.
// Usage: ENDPOINT=http://127.0.0.1:PORT TOKEN=jwt MODE=legacy|requests node client-test.mjs
import { PowerSyncDatabase, Schema, Table, column } from '@powersync/node';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const endpoint = process.env.ENDPOINT;
const token = process.env.TOKEN;
const mode = process.env.MODE ?? 'legacy';
const deadline = Date.now() + 60_000;

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

const db = new PowerSyncDatabase({
  schema,
  database: { dbFilename: 'client.db', dbLocation: mkdtempSync(join(tmpdir(), 'ackpoint-ps-')) }
});

function fail(message) {
  console.error(`FAIL (${mode}): ${message}`);
  process.exit(1);
}

async function until(what, check) {
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  fail(`timed out waiting for ${what}; status ${JSON.stringify(db.currentStatus.toJSON())}`);
}

await db.init();
await db.connect(connector, { checkpointMode: mode });
await until('the first sync', async () => db.currentStatus.hasSynced === true);
const syncedBefore = db.currentStatus.lastSyncedAt?.getTime() ?? 0;

await db.execute('INSERT INTO todos (id, description) VALUES (uuid(), ?)', ['written through Ackpoint']);
await until('the upload', async () => uploaded.length === 1);
await until('the acknowledgement of the write', async () => {
  const queue = await db.getUploadQueueStats();
  const synced = db.currentStatus.lastSyncedAt?.getTime() ?? 0;
  return queue.count === 0 && synced > syncedBefore && !db.currentStatus.dataFlowStatus.uploading;
});
// The core's own record: the write's target checkpoint was applied (target <= last applied).
const kv = Object.fromEntries((await db.getAll('SELECT key, value FROM ps_kv')).map((r) => [r.key, r.value]));
const target = BigInt(kv.target_checkpoint_request_id ?? -1);
const applied = BigInt(kv.last_applied_checkpoint_request_id ?? -1);
if (target < 1n || target >= 9223372036854775807n || applied < target) {
  fail(`the local write is not acknowledged: ${JSON.stringify(kv)}`);
}

console.log(`PASS (${mode}): the write was acknowledged through Ackpoint at checkpoint ${applied}`);
await db.disconnectAndClear();
await db.close();
process.exit(0);
