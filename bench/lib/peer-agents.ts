/**
 * The two kubelets of the peer benchmark behind one interface: the upstream
 * Go kubelet v1.20.2 (GoKubelet, https with anonymous auth) and kubelet-ts
 * (the built CLI through the e2e AgentProcess harness). Both run standalone
 * with a static pod directory on the same CRI endpoint, one at a time (each
 * kills runtime pods it does not know).
 *
 * Contract: `start()` resolves once the agent answers /healthz; `cleanup()`
 * stops it and removes every pod of its namespace from the runtime, on every
 * path. `pods()` is the agent's own /pods (for static pods both kubelets put
 * the status manager's status there when standalone).
 */
import { readFileSync, readdirSync } from 'node:fs';
import type { Pod } from '../../src/api/pod.js';
import { makeScraper, type Scraper } from '../../src/compare/scrape.js';
import { AgentProcess } from '../../test/e2e/agent-harness.js';
import { GoKubelet } from './go-kubelet.js';

export type PeerKind = 'go' | 'ts';

export interface PeerAgent {
  readonly kind: PeerKind;
  readonly namespace: string;
  writeManifest(file: string, pod: Record<string, unknown>): void;
  deleteManifest(file: string): void;
  start(): Promise<void>;
  readonly pid: number | undefined;
  metrics(): Promise<string>;
  pods(): Promise<Pod[]>;
  tail(n?: number): string;
  logs(): string[];
  /** Stops the process (its pods keep running). */
  stop(): Promise<void>;
  cleanup(): Promise<void>;
}

export interface PeerAgentOptions {
  endpoint: string;
  nodeName: string;
  namespace: string;
  maxPods: number;
  /** Extra kubelet-ts flags (later flags win). */
  tsArgs?: readonly string[];
  /** Another build's bin/kubelet-ts.js for the ts agent (an A/B baseline); default this checkout's. */
  tsBin?: string;
}

class GoPeer implements PeerAgent {
  readonly kind = 'go' as const;
  private readonly kubelet: GoKubelet;
  private scrape: Scraper | undefined;

  constructor(
    readonly namespace: string,
    o: PeerAgentOptions,
  ) {
    this.kubelet = new GoKubelet({ endpoint: o.endpoint, nodeName: o.nodeName, namespace, maxPods: o.maxPods });
  }

  writeManifest(file: string, pod: Record<string, unknown>): void {
    this.kubelet.writeManifest(file, pod);
  }

  deleteManifest(file: string): void {
    this.kubelet.deleteManifest(file);
  }

  async start(): Promise<void> {
    await this.kubelet.start();
    this.scrape = makeScraper({ ca: readFileSync(this.kubelet.pki.caCert), timeoutMs: 30_000 });
  }

  get pid(): number | undefined {
    return this.kubelet.pid;
  }

  private get(path: string): Promise<string> {
    if (!this.scrape) throw new Error('the Go kubelet is not started');
    return this.scrape(`https://127.0.0.1:${this.kubelet.port}${path}`);
  }

  metrics(): Promise<string> {
    return this.get('/metrics');
  }

  async pods(): Promise<Pod[]> {
    // Go marshals an empty list as null.
    return (JSON.parse(await this.get('/pods')) as { items: Pod[] | null }).items ?? [];
  }

  tail(n?: number): string {
    return this.kubelet.tail(n);
  }

  logs(): string[] {
    return this.kubelet.logs;
  }

  stop(): Promise<void> {
    return this.kubelet.stop();
  }

  cleanup(): Promise<void> {
    return this.kubelet.cleanup();
  }
}

class TsPeer implements PeerAgent {
  readonly kind = 'ts' as const;
  private readonly agent: AgentProcess;

  constructor(
    readonly namespace: string,
    o: PeerAgentOptions,
  ) {
    // cgroupsPerQOS false, as the Go peer runs (go-kubelet.ts): both do the same work per pod.
    this.agent = new AgentProcess(o.endpoint, o.nodeName, namespace, [
      `--max-pods=${o.maxPods}`,
      '--v=1',
      '--cgroups-per-qos=false',
      ...(o.tsArgs ?? []),
    ]);
    if (o.tsBin) this.agent.bin = o.tsBin;
  }

  writeManifest(file: string, pod: Record<string, unknown>): void {
    this.agent.writeManifest(file, pod);
  }

  deleteManifest(file: string): void {
    this.agent.deleteManifest(file);
  }

  start(): Promise<void> {
    return this.agent.start();
  }

  get pid(): number | undefined {
    return this.agent.pid;
  }

  metrics(): Promise<string> {
    return this.agent.metrics();
  }

  pods(): Promise<Pod[]> {
    return this.agent.pods();
  }

  tail(n?: number): string {
    return this.agent.tail(n);
  }

  logs(): string[] {
    return this.agent.logs;
  }

  stop(): Promise<void> {
    return this.agent.stop();
  }

  cleanup(): Promise<void> {
    return this.agent.cleanup();
  }
}

export function peerAgent(kind: PeerKind, namespace: string, o: PeerAgentOptions): PeerAgent {
  return kind === 'go' ? new GoPeer(namespace, o) : new TsPeer(namespace, o);
}

/** Resident and peak resident memory (MiB) of a process and, summed, of its descendants; NaN when gone. */
export function memoryMiB(pid: number | undefined): { rss: number; hwm: number; childrenRss: number } {
  const read = (p: number) => {
    try {
      const s = readFileSync(`/proc/${p}/status`, 'utf8');
      const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? Number.NaN);
      return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
    } catch {
      return { rss: Number.NaN, hwm: Number.NaN };
    }
  };
  if (!pid) return { rss: Number.NaN, hwm: Number.NaN, childrenRss: Number.NaN };
  const parents = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parents.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // exited meanwhile
    }
  }
  const descendants: number[] = [];
  const frontier = [pid];
  while (frontier.length) {
    const p = frontier.pop()!;
    for (const [child, parent] of parents) {
      if (parent === p) {
        descendants.push(child);
        frontier.push(child);
      }
    }
  }
  const own = read(pid);
  return { ...own, childrenRss: descendants.reduce((sum, p) => sum + (read(p).rss || 0), 0) };
}
