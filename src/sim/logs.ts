/**
 * Container output in the CRI log format the kubelet reads:
 *   `<RFC3339Nano timestamp> <stdout|stderr> <F|P> <line>\n`
 * F marks a full line, P a partial one (output without a trailing newline).
 * Writes are appended per file in order; the path is reopened on every
 * write, so a rotated (renamed) log continues in a new file at the same path.
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Stream } from './behaviour.js';

/** Go's time.RFC3339Nano in UTC: fraction with trailing zeros trimmed, none when zero. */
export function formatRfc3339Nano(ns: bigint): string {
  const sec = ns / 1_000_000_000n;
  const frac = ns % 1_000_000_000n;
  const base = new Date(Number(sec) * 1000).toISOString().slice(0, 19);
  if (frac === 0n) return `${base}Z`;
  return `${base}.${frac.toString().padStart(9, '0').replace(/0+$/, '')}Z`;
}

export function criLogLines(ns: bigint, stream: Stream, text: string): string {
  if (text === '') return '';
  const ts = formatRfc3339Nano(ns);
  const parts = text.split('\n');
  const last = parts.pop()!;
  let out = '';
  for (const p of parts) out += `${ts} ${stream} F ${p}\n`;
  if (last !== '') out += `${ts} ${stream} P ${last}\n`;
  return out;
}

export class LogWriter {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly madeDirs = new Set<string>();
  failures = 0;

  append(file: string, data: string): void {
    if (file === '' || data === '') return;
    this.enqueue(file, data);
  }

  /** Creates the file when it does not exist (containerd opens the log at start and on reopen), behind earlier writes. */
  open(file: string): void {
    if (file !== '') this.enqueue(file, '');
  }

  /** open(), resolved once the file exists. */
  touch(file: string): Promise<void> {
    this.open(file);
    return this.chains.get(file) ?? Promise.resolve();
  }

  /** Queues the write behind the file's earlier ones; write() never rejects (it counts failures), so neither does the chain. */
  private enqueue(file: string, data: string): void {
    const prev = this.chains.get(file) ?? Promise.resolve();
    const next: Promise<void> = prev.then(async () => {
      await this.write(file, data);
      if (this.chains.get(file) === next) this.chains.delete(file);
    });
    this.chains.set(file, next);
  }

  /** Resolves when every queued write has been attempted. */
  async flush(): Promise<void> {
    while (this.chains.size > 0) await Promise.all([...this.chains.values()]);
  }

  private async write(file: string, data: string): Promise<void> {
    try {
      const dir = dirname(file);
      if (!this.madeDirs.has(dir)) {
        await mkdir(dir, { recursive: true });
        this.madeDirs.add(dir);
      }
      await appendFile(file, data);
    } catch {
      // A removed directory (e.g. the kubelet deleted the pod's logs) is retried once with mkdir.
      try {
        this.madeDirs.delete(dirname(file));
        await mkdir(dirname(file), { recursive: true });
        await appendFile(file, data);
      } catch {
        this.failures++;
      }
    }
  }
}
