import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { rmSync, statSync } from 'node:fs';
import { mkdtemp, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Registry } from 'prom-client';
import { realClock, type Clock } from '../../src/common/clock.js';
import { FileSource } from '../../src/main/podconfig/file-source.js';
import { PodConfig } from '../../src/main/podconfig/pod-config.js';
import type { PodUpdate } from '../../src/main/podconfig/types.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { waitFor } from '../helpers/wait-for.js';

const manifest = (name: string, image = 'nginx:1.25', uid?: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
${uid ? `  uid: ${uid}\n` : ''}spec:
  containers:
  - name: c
    image: ${image}
`;

interface Harness {
  config: PodConfig;
  source: FileSource;
  got: PodUpdate[];
  logs: Record<string, unknown>[];
  registry: Registry;
  /** SETs the source has emitted (re-lists that changed something; h.source.relists counts them all). */
  sets: number;
  /** The consumer of config.updates. */
  consumed: Promise<void>;
}

let dir: string;
let harnesses: Harness[] = [];
let stops: (() => void)[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kts-file-source-'));
});

afterEach(async () => {
  for (const stop of stops) stop();
  for (const h of harnesses) {
    h.config.stop();
    await h.consumed;
  }
  harnesses = [];
  stops = [];
  await rm(dir, { recursive: true, force: true });
});

/** Writes via a dot-file and rename, so the source never sees a partial file. */
async function put(name: string, content: string): Promise<void> {
  const tmp = join(dir, `.${name}.tmp`);
  await writeFile(tmp, content);
  await rename(tmp, join(dir, name));
}

function start(opts: { path?: string; clock?: Clock; watch?: boolean; checkFrequencyMs?: number } = {}): Harness {
  const logs: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _e, cb) {
      logs.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      cb();
    },
  });
  const logger = pino({ level: 'debug' }, stream);
  const clock = opts.clock ?? realClock;
  const registry = new Registry();
  const config = new PodConfig({ clock, logger });
  const source = new FileSource({
    path: opts.path ?? dir,
    nodeName: 'node1',
    clock,
    logger,
    registry,
    watch: opts.watch,
    checkFrequencyMs: opts.checkFrequencyMs,
    watchDebounceMs: 20,
  });
  const got: PodUpdate[] = [];
  // Ends when config.stop() closes the queue; awaited in afterEach.
  const consumed = (async () => {
    for await (const u of config.updates) got.push(u);
  })();
  const h: Harness = { config, source, got, logs, registry, sets: 0, consumed };
  const ch = config.channel(source.name);
  const ctl = new AbortController();
  source.start(ctl.signal, (u) => {
    h.sets++;
    ch(u);
  });
  stops.push(() => ctl.abort());
  harnesses.push(h);
  return h;
}

const ops = (got: PodUpdate[]) => got.map((u) => `${u.op}:${u.pods.map((p) => p.metadata.name).join(',')}`);
const has = (got: PodUpdate[], entry: string) => ops(got).includes(entry);

describe('FileSource through PodConfig (fs.watch)', () => {
  it('add, modify and delete a manifest → ADD, UPDATE, REMOVE', async () => {
    const h = start();
    await waitFor(() => h.config.seenAllSources(), { what: 'file source seen' });
    await put('web.yaml', manifest('web', 'nginx:1.25', 'uid-web'));
    await waitFor(() => has(h.got, 'ADD:web-node1'), { what: 'ADD' });
    await put('web.yaml', manifest('web', 'nginx:1.26', 'uid-web'));
    await waitFor(() => has(h.got, 'UPDATE:web-node1'), { what: 'UPDATE' });
    expect(h.got.find((u) => u.op === 'UPDATE')!.pods[0].spec.containers[0].image).toBe('nginx:1.26');
    await rm(join(dir, 'web.yaml'));
    await waitFor(() => has(h.got, 'REMOVE:web-node1'), { what: 'REMOVE' });
    expect(ops(h.got)).toEqual(['ADD:', 'ADD:web-node1', 'UPDATE:web-node1', 'REMOVE:web-node1']);
    expect(h.got.every((u) => u.source === 'file')).toBe(true);
  });

  it('a content change without an explicit uid replaces the pod (REMOVE then ADD, new UID)', async () => {
    await put('web.yaml', manifest('web'));
    const h = start();
    await waitFor(() => has(h.got, 'ADD:web-node1'));
    const uid1 = h.got[0].pods[0].metadata.uid;
    await put('web.yaml', manifest('web', 'nginx:1.26'));
    await waitFor(() => h.got.length >= 3, { what: 'replacement' });
    expect(ops(h.got)).toEqual(['ADD:web-node1', 'REMOVE:web-node1', 'ADD:web-node1']);
    expect(h.got[2].pods[0].metadata.uid).not.toBe(uid1);
  });

  it('a malformed manifest is logged with its path, counted once, skipped; a fix is picked up', async () => {
    await put('good.yaml', manifest('good'));
    await put('bad.yaml', 'apiVersion: v1\nkind: Pod\nmetadata: {name: bad\n');
    await put('.hidden.yaml', manifest('hidden'));
    const h = start({ checkFrequencyMs: 50 });
    await waitFor(() => has(h.got, 'ADD:good-node1'));
    const badPath = join(dir, 'bad.yaml');
    await waitFor(() => h.logs.some((l) => l['level'] === 50 && l['file'] === badPath));
    const errLog = h.logs.find((l) => l['file'] === badPath)!;
    expect((errLog['err'] as { message: string }).message).toMatch(/bad\.yaml: not valid YAML or JSON/);
    // Several periodic re-lists later: still one log line and one count.
    const relists = h.source.relists;
    await waitFor(() => h.source.relists >= relists + 3, { what: 'three more re-lists' });
    expect(h.logs.filter((l) => l['file'] === badPath && l['level'] === 50)).toHaveLength(1);
    expect(await h.registry.getSingleMetricAsString('kubelet_ts_static_pod_manifest_errors_total')).toContain('{source="file"} 1');
    expect(ops(h.got)).toEqual(['ADD:good-node1']);

    await put('bad.yaml', manifest('bad'));
    await waitFor(() => has(h.got, 'ADD:bad-node1'), { what: 'fixed manifest ADD' });
    expect(ops(h.got)).toEqual(['ADD:good-node1', 'ADD:bad-node1']);
  });

  it('an invalid pod (validation error) is skipped with the field error', async () => {
    await put(
      'dup.yaml',
      'apiVersion: v1\nkind: Pod\nmetadata: {name: dup}\nspec:\n  containers: [{name: a, image: x:1}, {name: a, image: y:1}]\n',
    );
    const h = start();
    await waitFor(() => h.logs.some((l) => l['level'] === 50));
    const msg = (h.logs.find((l) => l['level'] === 50)!['err'] as { message: string }).message;
    expect(msg).toContain('dup.yaml: invalid pod: spec.containers[1].name: Duplicate value: "a"');
  });
});

describe('FileSource unknown fields (as kubectl apply --validate)', () => {
  it('a pod with a misspelt field runs, with one warning naming the field, its path and the closest name, once per content', async () => {
    await put('web.yaml', `${manifest('web')}    comand: [sleep, "1"]\n`);
    const h = start({ checkFrequencyMs: 50 });
    await waitFor(() => has(h.got, 'ADD:web-node1'));
    const relists = h.source.relists;
    await waitFor(() => h.source.relists >= relists + 3, { what: 'three more re-lists' });
    const warnings = h.logs.filter((l) => l['level'] === 40);
    expect(warnings.map((l) => [l['msg'], l['file'], l['field'], l['hint']])).toEqual([
      ['Unknown field in static pod manifest, ignored', join(dir, 'web.yaml'), 'spec.containers[0].comand', 'did you mean command?'],
    ]);
  });
});

describe('FileSource periodic re-list', () => {
  it('with watching disabled, a change is picked up on the next fileCheckFrequency tick', async () => {
    const clock = new FakeClock();
    const h = start({ clock, watch: false, checkFrequencyMs: 20_000 });
    await waitFor(() => h.config.seenAllSources() && h.source.idle);
    await put('web.yaml', manifest('web'));
    const sets = h.sets;
    clock.step(19_000);
    expect(h.source.idle).toBe(true);
    expect(h.sets).toBe(sets);
    expect(ops(h.got)).toEqual(['ADD:']);
    clock.step(1_000);
    await waitFor(() => has(h.got, 'ADD:web-node1'), { what: 're-list ADD' });
    await waitFor(() => h.source.idle);
    await rm(join(dir, 'web.yaml'));
    clock.step(20_000);
    await waitFor(() => has(h.got, 'REMOVE:web-node1'), { what: 're-list REMOVE' });
  });
});

describe('FileSource re-lists of an unchanged directory', () => {
  it('sends no SET while nothing changed; a same-size rewrite of a stable file is picked up by its stat', async () => {
    const clock = new FakeClock();
    await put('a.yaml', manifest('a', 'nginx:1.25', 'uid-a'));
    await put('b.yaml', manifest('b'));
    // Past STABLE_AFTER_MS (2 s): the files' ctime is then old enough for their stat to stand for their content.
    const written = statSync(join(dir, 'a.yaml')).ctimeMs;
    await waitFor(() => Date.now() - written > 2_500, { what: 'the manifests to age past 2 s', timeoutMs: 10_000 });
    const h = start({ clock, watch: false, checkFrequencyMs: 20_000 });
    await waitFor(() => has(h.got, 'ADD:a-node1,b-node1') && h.source.idle, { what: 'first SET' });
    // A re-list is over once the source is idle with its next period's timer set (the only timer: no watch).
    const settled = () => h.source.idle && clock.pendingTimers() === 1;
    const relisted = async (n: number) => {
      await waitFor(settled, { what: `before re-list ${n}` });
      clock.step(20_000);
      expect(h.source.idle).toBe(false);
      await waitFor(settled, { what: `re-list ${n}` });
    };
    expect(h.source.reads).toBe(2);
    await relisted(1);
    await relisted(2);
    expect(h.sets).toBe(1);
    expect(h.source.reads).toBe(2);
    // The same size, so only the stat's times and inode tell.
    await put('a.yaml', manifest('a', 'nginx:1.26', 'uid-a'));
    await relisted(3);
    await waitFor(() => has(h.got, 'UPDATE:a-node1'), { what: 'UPDATE from the rewrite' });
    expect(h.sets).toBe(2);
    expect(h.source.reads).toBe(3);
    expect(h.got.find((u) => u.op === 'UPDATE')!.pods[0].spec.containers[0].image).toBe('nginx:1.26');
  });

  it('a file rewritten in place with the same size right after a read is read again (too young to trust its stat)', async () => {
    const clock = new FakeClock();
    const file = join(dir, 'a.yaml');
    await writeFile(file, manifest('a', 'nginx:1.25', 'uid-a'));
    const h = start({ clock, watch: false, checkFrequencyMs: 20_000 });
    await waitFor(() => has(h.got, 'ADD:a-node1') && h.source.idle, { what: 'first SET' });
    // In place: the inode stays, and mtime and ctime may fall in the same timestamp tick as the first write.
    await writeFile(file, manifest('a', 'nginx:1.26', 'uid-a'));
    await waitFor(() => h.source.idle && clock.pendingTimers() === 1, { what: 'the next period set' });
    clock.step(20_000);
    await waitFor(() => has(h.got, 'UPDATE:a-node1'), { what: 'UPDATE from the in-place rewrite' });
    expect(h.got.find((u) => u.op === 'UPDATE')!.pods[0].spec.containers[0].image).toBe('nginx:1.26');
  });
});

describe('FileSource empty and missing paths', () => {
  it('a directory of many manifests, some bad, becomes one SET of the good pods in file-name order', async () => {
    // More than one read slice (64 files), and entries off the one-read path: a manifest over 16 KiB, a
    // symlink to a manifest, a FIFO (skipped, never blocks) and a directory (not recursed into).
    const names = Array.from({ length: 150 }, (_, i) => `p${String(i).padStart(3, '0')}`);
    for (const n of names) await put(`${n}.yaml`, n.endsWith('7') ? 'kind: Pod\nmetadata: {name: [\n' : manifest(n));
    await put('q-big.yaml', manifest('q-big').replace('metadata:\n', `metadata:\n  annotations: {note: "${'x'.repeat(20_000)}"}\n`));
    const outside = await mkdtemp(join(tmpdir(), 'kts-file-source-link-'));
    stops.push(() => rmSync(outside, { recursive: true, force: true }));
    await writeFile(join(outside, 'm.yaml'), manifest('r-link'));
    await symlink(join(outside, 'm.yaml'), join(dir, 'r-link.yaml'));
    execFileSync('mkfifo', [join(dir, 's-fifo.yaml')]);
    await mkdir(join(dir, 'sub.yaml'));
    const h = start();
    await waitFor(() => h.got.length > 0, { what: 'first update' });
    const good = [...names.filter((n) => !n.endsWith('7')), 'q-big', 'r-link'].map((n) => `${n}-node1`);
    expect(ops(h.got)[0]).toBe(`ADD:${good.join(',')}`);
    expect(h.got[0].pods.find((p) => p.metadata.name === 'q-big-node1')?.metadata.annotations?.['note']).toHaveLength(20_000);
    await waitFor(() => h.logs.filter((l) => l['level'] === 50).length === 15, { what: 'one error per bad manifest' });
  });

  it('a 50 MB manifest is refused at the 10 MiB limit without being read; the other manifests run', async () => {
    await put('good.yaml', manifest('good'));
    await put('huge.yaml', `${manifest('huge')}# ${'x'.repeat(50 * 1000 * 1000)}\n`);
    const h = start({ checkFrequencyMs: 50 });
    await waitFor(() => has(h.got, 'ADD:good-node1'));
    await waitFor(() => h.logs.some((l) => JSON.stringify(l).includes('over the 10485760-byte limit')), { what: 'the size error' });
    const line = h.logs.find((l) => JSON.stringify(l).includes('over the 10485760-byte limit'))!;
    expect(JSON.stringify(line)).toContain(
      `${join(dir, 'huge.yaml')}: manifest is 50000105 bytes, over the 10485760-byte limit; shrink it`,
    );
    expect(ops(h.got)).toEqual(['ADD:good-node1']);
  });

  it('a directory, a FIFO, a device and a broken symlink are skipped, each logged and counted once and again when it changes', async () => {
    await put('good.yaml', manifest('good'));
    await mkdir(join(dir, 'a-dir.yaml'));
    execFileSync('mkfifo', [join(dir, 'b-fifo.yaml')]);
    await symlink('/dev/zero', join(dir, 'c-zero.yaml'));
    await symlink('d-loop.yaml', join(dir, 'd-loop.yaml'));
    await symlink(join(dir, 'missing'), join(dir, 'e-dangling.yaml'));
    const h = start({ checkFrequencyMs: 50 });
    await waitFor(() => has(h.got, 'ADD:good-node1'));
    const relists = h.source.relists;
    await waitFor(() => h.source.relists >= relists + 3, { what: 'three more re-lists' });
    const skips = () =>
      h.logs
        .filter((l) => l['level'] === 40)
        .map((l) => [String(l['file']).slice(dir.length + 1), l['reason'], l['fileType'] ?? l['errno'], l['msg']]);
    expect(skips()).toEqual([
      ['a-dir.yaml', 'directory', undefined, 'Not recursing into manifest path'],
      ['b-fifo.yaml', 'not_regular_file', 'FIFO', 'Manifest path is not a directory or regular file, skipping it'],
      ['c-zero.yaml', 'not_regular_file', 'character device', 'Manifest path is not a directory or regular file, skipping it'],
      ['d-loop.yaml', 'stat_failed', 'ELOOP', 'Cannot get metadata for manifest path, skipping it'],
      ['e-dangling.yaml', 'stat_failed', 'ENOENT', 'Cannot get metadata for manifest path, skipping it'],
    ]);
    const metric = await h.registry.getSingleMetricAsString('kubelet_ts_static_pod_manifest_skipped_entries_total');
    expect(metric).toContain('{reason="directory"} 1');
    expect(metric).toContain('{reason="not_regular_file"} 2');
    expect(metric).toContain('{reason="stat_failed"} 2');
    expect(h.logs.filter((l) => l['level'] === 50)).toEqual([]);
    expect(ops(h.got)).toEqual(['ADD:good-node1']);

    await rm(join(dir, 'a-dir.yaml'), { recursive: true });
    execFileSync('mkfifo', [join(dir, 'a-dir.yaml')]);
    await waitFor(() => skips().length === 6, { what: 'the changed entry logged again' });
    expect(skips()[5]).toEqual(['a-dir.yaml', 'not_regular_file', 'FIFO', 'Manifest path is not a directory or regular file, skipping it']);
    const again = h.source.relists;
    await waitFor(() => h.source.relists >= again + 3, { what: 'three more re-lists' });
    expect(skips()).toHaveLength(6);
    expect(ops(h.got)).toEqual(['ADD:good-node1']);
  });

  it('an empty directory sends an empty SET and marks the source seen', async () => {
    const h = start();
    await waitFor(() => h.config.seenAllSources());
    expect(ops(h.got)).toEqual(['ADD:']);
  });

  it('a missing directory sends an empty SET; creating it later is picked up', async () => {
    const missing = join(dir, 'manifests');
    const h = start({ path: missing, checkFrequencyMs: 50 });
    await waitFor(() => h.config.seenAllSources(), { what: 'seen with missing dir' });
    expect(ops(h.got)).toEqual(['ADD:']);
    await mkdir(missing);
    await writeFile(join(missing, 'web.yaml'), manifest('web'));
    await waitFor(() => has(h.got, 'ADD:web-node1'), { what: 'ADD after mkdir' });
  });

  it('a single manifest file path works', async () => {
    await put('one.yaml', manifest('one'));
    const h = start({ path: join(dir, 'one.yaml') });
    await waitFor(() => has(h.got, 'ADD:one-node1'));
  });
});
