/**
 * The CI subset of upstream's [NodeConformance] e2e tests (25 of them, about
 * 2 minutes; test/conformance/conformance-subset.ts) against kubelet-ts as
 * the only node of the real control plane, on containerd, through
 * scripts/conformance.sh (which builds e2e.test and the test images when they
 * are missing). The full focus is `npm run conformance`.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { CI_SUBSET } from '../conformance/conformance-subset.js';
import type { TestResult } from '../conformance/junit.js';
import { describeCluster } from './cluster-env.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const out = join(root, '.run', 'conformance', 'ci');

describeCluster('upstream [NodeConformance] e2e tests, CI subset, on kubelet-ts', () => {
  it('passes every test of the subset', async () => {
    const log: string[] = [];
    const code = await new Promise<number>((res) => {
      const child = spawn('bash', [join(root, 'scripts/conformance.sh'), 'run', '--agent', 'ts', '--subset', 'ci', '--out', out], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const keep = (b: Buffer) => log.push(...b.toString().split('\n').filter(Boolean));
      child.stdout.on('data', keep);
      child.stderr.on('data', keep);
      child.on('close', (c) => res(c ?? 1));
    });
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { results: TestResult[] };
    const failed = summary.results.filter((r) => r.outcome !== 'passed').map((r) => `${r.name}: ${r.outcome} ${r.reason ?? ''}`);
    expect(failed, log.slice(-40).join('\n')).toEqual([]);
    for (const t of CI_SUBSET) {
      expect(
        summary.results.filter((r) => new RegExp(t.pattern).test(r.name)).map((r) => r.outcome),
        t.pattern,
      ).toEqual(['passed']);
    }
    expect(summary.results).toHaveLength(CI_SUBSET.length);
    expect(code).toBe(0);
  }, 1_200_000);
});
