import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { PodStatusCache } from '../../src/shared/pod-status-cache.js';
import { checkStatus, CONTROL_START, CONTROL_STOP, makeStatus } from './fixtures/torn-read-status.js';

const SLOTS = 8;
const READS_PER_WORKER = 70_000;
const READS_ON_MAIN = 60_000; // 200k reads in total

// On Node 20 a Worker ignores `--import` in execArgv (the preload never runs), so
// the worker registers tsx itself through its API, then imports the .ts script.
const workerUrl = new URL('./fixtures/torn-read-worker.ts', import.meta.url).href;
const tsxApi = import.meta.resolve('tsx/esm/api');
const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(workerUrl)}); })`;
const workers: Worker[] = [];

function start(data: object): { ready: Promise<void>; done: Promise<Record<string, unknown>> } {
  const worker = new Worker(bootstrap, { eval: true, workerData: data });
  workers.push(worker);
  let failed: (err: Error) => void = () => undefined;
  const failure = new Promise<never>((_, reject) => {
    failed = reject;
  });
  failure.catch(() => undefined);
  worker.once('error', (err) => failed(err));
  worker.once('exit', (code) => failed(new Error(`worker exited with code ${code} before reporting`)));
  const message = (type: string) =>
    Promise.race([
      new Promise<Record<string, unknown>>((resolve) => {
        worker.on('message', (m: { type: string }) => {
          if (m.type === type) resolve(m);
        });
      }),
      failure,
    ]);
  const ready = message('ready').then(() => undefined);
  const done = message('done');
  ready.catch(() => undefined);
  done.catch(() => undefined);
  return { ready, done };
}

afterAll(async () => {
  await Promise.all(workers.map((w) => w.terminate()));
});

describe('pod status cache under concurrent writers', () => {
  it('never yields a torn status to readers on other threads or the main thread', async () => {
    const cache = PodStatusCache.create({ capacity: SLOTS, slotBytes: 4096 });
    const control = new Int32Array(new SharedArrayBuffer(8));
    const uids = Array.from({ length: SLOTS }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    for (const uid of uids) cache.write(cache.allocate(uid), makeStatus(uid, 0));
    const common = { cache: cache.buffer, control: control.buffer, uids };

    const writers = [0, 1].map((w) =>
      start({ ...common, role: 'writer', slots: uids.map((_, s) => s).filter((s) => s % 2 === w), reads: 0 }),
    );
    const readers = [0, 1].map(() => start({ ...common, role: 'reader', slots: [], reads: READS_PER_WORKER }));
    await Promise.all([...writers, ...readers].map((w) => w.ready));
    Atomics.store(control, CONTROL_START, 1);
    Atomics.notify(control, CONTROL_START);

    let mainTorn = 0;
    const mainErrors: string[] = [];
    const mainDistinct = new Set<number>();
    for (let i = 0; i < READS_ON_MAIN; i++) {
      const slot = i % SLOTS;
      const s = cache.read(slot, uids[slot]);
      expect(s).toBeDefined();
      const problem = checkStatus(s!, uids[slot]);
      if (problem !== undefined) {
        mainTorn++;
        if (mainErrors.length < 5) mainErrors.push(problem);
      } else mainDistinct.add(slot * 1e9 + s!.timestamp);
    }

    const readerResults = await Promise.all(readers.map((r) => r.done));
    Atomics.store(control, CONTROL_STOP, 1);
    const writerResults = await Promise.all(writers.map((w) => w.done));

    const torn = mainTorn + readerResults.reduce((n, r) => n + (r.torn as number), 0);
    const errors = [...mainErrors, ...readerResults.flatMap((r) => r.firstErrors as string[])];
    expect({ torn, errors }).toEqual({ torn: 0, errors: [] });
    for (const r of readerResults) expect(r.missing).toBe(0);
    // Not vacuous: writers made progress during the reads and readers saw many versions.
    for (const w of writerResults) expect(w.versions as number).toBeGreaterThan(100);
    const distinct = readerResults.map((r) => r.distinct as number);
    expect(Math.min(...distinct)).toBeGreaterThan(200);
    expect(mainDistinct.size).toBeGreaterThan(200);
  });
});
