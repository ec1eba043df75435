/**
 * The node's disk trouble while its pods start: the root, pod-log and
 * container-log directories (each on a small tmpfs of its own) filled to the
 * last block and inode ('full'), or the two log directories remounted
 * read-only ('log-dir-readonly'), held for `holdMs`, then undone (the files
 * removed, or the directories remounted read-write). Recovery is timed from
 * the undoing. Meanwhile the agent must keep every running pod, report each
 * cause once (not once per pod per retry) and, afterwards, start what it
 * could not: `reports` keeps what it logged during the hold for each run.
 */
import type { Fault, FaultContext } from '../fault.js';
import { fill, free, remount } from '../disk-fill.js';

export type DiskFaultKind = 'full' | 'log-dir-readonly';

/** What the agent logged at warning or error level while the fault held. */
export interface HoldReport {
  holdMs: number;
  /** Warning and error lines. */
  lines: number;
  /** The most lines with one message (a per-pod report makes it at least the pods that hit the fault). */
  maxSameMessage: number;
  sameMessage: string;
  /** The causes the agent named (cause="…" of its once-per-cause lines). */
  causes: string[];
  /** Of those, the ones it said had cleared by the end of the run. */
  cleared: string[];
}

const LINE = /^[EW]\d{4} [\d:.]+ +\d+ [^\]]*\] "((?:[^"\\]|\\.)*)"/;
const CAUSE = /cause="((?:[^"\\]|\\.)*)"/;

export function diskFault(kind: DiskFaultKind, pods: number, holdMs: number): Fault & { reports: HoldReport[] } {
  const reports: HoldReport[] = [];
  let holdFrom = 0;
  let holdTo = 0;
  const logDirs = (ctx: Pick<FaultContext, 'node'>) => ctx.node.stateDirs.slice(1);
  return {
    id: kind === 'full' ? 'disk-full-start-sim' : 'log-dir-readonly-start-sim',
    title: (n) =>
      kind === 'full'
        ? `root, pod-log and container-log dirs full (tmpfs, blocks and inodes) for ${holdMs / 1000} s during the start of ${n} pods (simulated runtime)`
        : `pod-log and container-log dirs read-only for ${holdMs / 1000} s during the start of ${n} pods (simulated runtime)`,
    moment: 'start',
    node: { runtime: 'sim', pods, dirsOnTmpfs: { bytes: 32 << 20, inodes: 20_000 } },
    recoveryFrom: 'recover',
    reports,
    inject: async ({ node }) => {
      // The serving certificate is written at start-up: an agent that cannot write it does not start (as upstream).
      await node.agent.until('the agent to run', () => node.agent.logs.some((l) => l.includes('kubelet-ts is running')));
      holdFrom = Date.now();
      if (kind === 'full') for (const d of node.stateDirs) fill(d);
      else for (const d of logDirs({ node })) remount(d, 'ro');
      await new Promise((r) => setTimeout(r, holdMs));
    },
    recover: async ({ node }) => {
      if (kind === 'full') for (const d of node.stateDirs) free(d);
      else for (const d of logDirs({ node })) remount(d, 'rw');
      holdTo = Date.now();
    },
    notes: ({ node }) => {
      const r = holdReport(node.agent.timedLogs, holdFrom, holdTo);
      reports.push(r);
      return [
        `while held: ${r.lines} warning/error lines, at most ${r.maxSameMessage} of one message (${r.sameMessage}); ` +
          `causes named ${r.causes.length}, cleared after ${r.cleared.length}`,
      ];
    },
  };
}

/** What the agent logged between `from` and `to` (ms), and which named causes it said cleared afterwards. */
export function holdReport(logs: readonly { at: number; line: string }[], from: number, to: number): HoldReport {
  const counts = new Map<string, number>();
  const causes = new Set<string>();
  let lines = 0;
  for (const { at, line } of logs) {
    if (at < from || at > to) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    lines++;
    counts.set(m[1], (counts.get(m[1]) ?? 0) + 1);
    const c = CAUSE.exec(line)?.[1];
    if (c) causes.add(c);
  }
  const cleared = new Set(
    logs.filter((l) => l.at >= from && l.line.includes('A failure cause has cleared')).map((l) => CAUSE.exec(l.line)?.[1] ?? ''),
  );
  const [sameMessage, maxSameMessage] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? ['', 0];
  return { holdMs: to - from, lines, maxSameMessage, sameMessage, causes: [...causes], cleared: [...causes].filter((c) => cleared.has(c)) };
}
