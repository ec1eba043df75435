/**
 * Runs `mount` and `umount` through one long-lived bash helper process
 * instead of a child process per command.
 *
 * Why: creating a child process from the agent copies the agent's page tables
 * (fork), which blocks the calling thread for about as long as the process is
 * large: ~20 ms at 250 MB. On the main thread, one per tmpfs volume, that
 * stalls the syncLoop (bench/results/volumes.md). The helper is small, so its
 * own forks are cheap, and the agent only writes a request to its stdin.
 *
 * Protocol (NUL-separated fields): request `id cmd argc arg...`, answer
 * `id exitCode output`. Only `mount` and `umount` are run. Requests are
 * answered in order, one at a time. A helper that dies or does not answer
 * within the deadline is killed; its pending requests fail and the next
 * request starts a new helper.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { MountError } from './errors.js';

const SCRIPT = `set -u
while IFS= read -r -d '' id && IFS= read -r -d '' cmd && IFS= read -r -d '' argc; do
  args=()
  for ((i = 0; i < argc; i++)); do IFS= read -r -d '' a; args+=("$a"); done
  case "$cmd" in
    mount|umount) out=$("$cmd" "\${args[@]}" 2>&1); rc=$? ;;
    *) out="command not allowed: $cmd"; rc=127 ;;
  esac
  printf '%s\\0%s\\0%s\\0' "$id" "$rc" "$out"
done`;

export type CommandRunner = (cmd: 'mount' | 'umount', args: string[]) => Promise<void>;

interface Pending {
  cmd: string;
  args: string[];
  resolve(): void;
  reject(err: Error): void;
  cancelTimer(): void;
}

export class MountHelper {
  private child: ChildProcessByStdio<Writable, Readable, null> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private buffer = '';

  constructor(
    private readonly timeoutMs = 60_000,
    private readonly setTimer: (ms: number, fn: () => void) => () => void = (ms, fn) => {
      const t = setTimeout(fn, ms);
      return () => clearTimeout(t);
    },
  ) {}

  /** Runs one command; rejects with MountError carrying its output on a non-zero exit. */
  readonly run: CommandRunner = (cmd, args) =>
    new Promise<void>((resolve, reject) => {
      const child = this.ensure();
      const id = this.nextId++;
      const cancelTimer = this.setTimer(this.timeoutMs, () =>
        this.fail(new MountError(`${cmd} did not finish within ${this.timeoutMs} ms (command: ${cmd} ${args.join(' ')})`)),
      );
      this.pending.set(id, { cmd, args, resolve, reject, cancelTimer });
      child.stdin.write([String(id), cmd, String(args.length), ...args].map((f) => `${f}\0`).join(''));
    });

  /** Starts the helper now, while the agent is still small (a later start costs one large fork). */
  start(): void {
    this.ensure();
  }

  /** Stops the helper; pending commands fail. */
  close(): void {
    this.fail(new MountError('the mount helper was stopped'));
  }

  private ensure(): ChildProcessByStdio<Writable, Readable, null> {
    if (this.child) return this.child;
    const child = spawn('bash', ['-c', SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => this.receive(chunk));
    child.on('exit', (code, signal) => {
      if (this.child === child) this.fail(new MountError(`the mount helper exited (${signal ?? code})`));
    });
    child.on('error', (err) => {
      if (this.child === child) this.fail(new MountError(`the mount helper failed: ${err.message}`, { cause: err }));
    });
    child.stdin.on('error', () => undefined);
    // The helper must not keep the agent alive on its own.
    child.unref();
    (child.stdout as Readable & { unref?: () => void }).unref?.();
    (child.stdin as Writable & { unref?: () => void }).unref?.();
    this.child = child;
    return child;
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    for (;;) {
      const fields: string[] = [];
      let start = 0;
      for (let k = 0; k < 3; k++) {
        const end = this.buffer.indexOf('\0', start);
        if (end < 0) return;
        fields.push(this.buffer.slice(start, end));
        start = end + 1;
      }
      this.buffer = this.buffer.slice(start);
      const [id, rc, out] = fields as [string, string, string];
      const p = this.pending.get(Number(id));
      if (!p) continue;
      this.pending.delete(Number(id));
      p.cancelTimer();
      if (rc === '0') p.resolve();
      else p.reject(new MountError(`${p.cmd} failed: ${out.trim() || `exit status ${rc}`} (command: ${p.cmd} ${p.args.join(' ')})`));
    }
  }

  private fail(err: Error): void {
    const child = this.child;
    this.child = undefined;
    this.buffer = '';
    child?.kill('SIGKILL');
    for (const p of this.pending.values()) {
      p.cancelTimer();
      p.reject(err);
    }
    this.pending.clear();
  }
}
