/**
 * Structured logging on pino, with klog-style verbosity.
 *
 * Formats:
 * - 'json': upstream's JSON shape (component-base logs/json), one object per
 *   line: {"ts":<epoch seconds>,"msg":…,"v":<verbosity>, …key/values}; error
 *   lines have no "v" (upstream's ErrorS), and an error value is its message.
 *   Re-serialised from pino's line in-process, so a key set twice (a child's
 *   binding over its parent's) appears once, with the innermost value.
 * - 'text': klog-like single lines, formatted in-process and synchronously
 *   (a plain write() shim between pino and the destination; no pino.transport,
 *   so no extra thread and output order equals call order):
 *     I1121 23:28:32.123456   12345 file-source] "Pod added" pod="default/web-node1" source="file"
 *   severity letter (I/W/E/F), MMDD, local time with microseconds, pid padded
 *   to 7, component, quoted message, then key=value pairs (strings quoted).
 *
 * Verbosity (`--v=N`):
 * - pino level is 'info' for N <= 3, 'debug' for N = 4, 'trace' for N >= 5.
 *   So `logger.debug` is V(4) and `logger.trace` is V(5); guard costly
 *   arguments with `logger.isLevelEnabled('debug')`.
 * - For klog's V(1)..V(3) use `v(logger, n).info(...)`: it returns the logger
 *   itself when N >= n and a shared silent logger otherwise; `vEnabled(logger, n)`
 *   is the boolean form. V-gated lines are emitted at info severity.
 *
 * Components: `logger.child({ component: 'file-source' })`; the text format
 * prints it in klog's file:line slot, JSON keeps it as a field.
 *
 * Output goes to stderr (fd 2, synchronous) unless `destination` is given, as klog does.
 */
import { performance } from 'node:perf_hooks';
import { pino, type DestinationStream, type Level, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;
export type LogFormat = 'text' | 'json';

export interface LoggerOptions {
  format: LogFormat;
  /** klog-style verbosity, >= 0. */
  verbosity: number;
  /** Where lines go; anything with a synchronous write(string). Default: stderr, synchronous. */
  destination?: DestinationStream;
  /** Component shown in text lines when a record has none. Default 'kubelet'. */
  component?: string;
  /** Epoch milliseconds (fractional for microseconds). Injectable for tests. */
  now?: () => number;
  /** Process id to report. Injectable for tests. */
  pid?: number;
}

const VERBOSITY = Symbol('kubelet-ts.verbosity');
const ROOT = Symbol('kubelet-ts.root');
const CHILDREN = Symbol('kubelet-ts.children');
type WithVerbosity = Logger & { [VERBOSITY]?: number };
type WithRoot = WithVerbosity & { [ROOT]?: WithRoot; [CHILDREN]?: Set<WeakRef<Logger>> };

/** The pino level for a klog verbosity. */
export function levelForVerbosity(verbosity: number): Level {
  if (verbosity >= 5) return 'trace';
  if (verbosity >= 4) return 'debug';
  return 'info';
}

/** Wall-clock epoch ms with sub-millisecond precision. */
function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

export function createLogger(options: LoggerOptions): Logger {
  const verbosity = Math.max(0, Math.floor(options.verbosity));
  const destination = options.destination ?? pino.destination({ dest: 2, sync: true });
  const now = options.now ?? (options.format === 'text' ? preciseNow : undefined);
  const component = options.component ?? 'kubelet';
  const stream = reformatStream(destination, options.format === 'text' ? (r) => formatKlogLine(r, component) : formatJsonLine);
  const children = new Set<WeakRef<Logger>>();
  const logger = pino(
    {
      level: levelForVerbosity(verbosity),
      // Registered so that setVerbosity reaches every child (pino copies the level into a child at creation).
      onChild: (child: Logger) => void children.add(new WeakRef(child)),
      base: options.format === 'text' ? { pid: options.pid ?? process.pid } : {},
      serializers: { err: serializeErr },
      ...(now ? { timestamp: () => `,"time":${now().toFixed(3)}` } : {}),
    },
    stream,
  ) as WithVerbosity;
  // Children are created with Object.create(parent), so they inherit this.
  logger[VERBOSITY] = verbosity;
  // Children inherit ROOT through their prototype chain.
  (logger as WithRoot)[ROOT] = logger;
  (logger as WithRoot)[CHILDREN] = children;
  return logger;
}

/**
 * pino's error serializer, with a message that adds each cause's message only
 * when it is not in the text already: pino appends every cause's message, so
 * an error wrapping a cause whose message it already quotes (the usual
 * `new Error(`…: ${err.message}`, { cause: err })`) was printed two or three
 * times over in one line.
 */
function serializeErr(err: unknown): unknown {
  const out = pino.stdSerializers.err(err as Error);
  if (!(err instanceof Error) || typeof out !== 'object' || out === null) return out;
  let message = err.message;
  const seen = new Set<unknown>([err]);
  for (let c: unknown = err.cause; c instanceof Error && !seen.has(c); c = c.cause) {
    seen.add(c);
    if (!message.includes(c.message)) message += `: ${c.message}`;
  }
  return { ...out, message };
}

let silent: Logger | undefined;

/** A logger that discards everything. */
export function silentLogger(): Logger {
  return (silent ??= pino({ level: 'silent' }));
}

/** klog V(level).Enabled(). */
export function vEnabled(logger: Logger, level: number): boolean {
  const verbosity = (logger as WithVerbosity)[VERBOSITY];
  if (verbosity !== undefined) return verbosity >= level;
  // A logger not made by createLogger: fall back to its pino level.
  return level <= 3 ? logger.isLevelEnabled('info') : logger.isLevelEnabled(level >= 5 ? 'trace' : 'debug');
}

const vChildren = new WeakMap<Logger, Logger[]>();

/**
 * klog V(level): when enabled, a child of the logger whose lines carry
 * `v: level` (cached per logger and level); otherwise a silent logger. Log
 * through it at info.
 */
export function v(logger: Logger, level: number): Logger {
  if (!vEnabled(logger, level)) return silentLogger();
  if (level <= 0) return logger;
  let children = vChildren.get(logger);
  if (!children) vChildren.set(logger, (children = []));
  return (children[level] ??= logger.child({ v: level }));
}

/** Changes the verbosity of a logger made by createLogger (and its children) at run time (/debug/flags/v). */
export function setVerbosity(logger: Logger, verbosity: number): void {
  const root: WithRoot = (logger as WithRoot)[ROOT] ?? logger;
  const level = levelForVerbosity(Math.max(0, Math.floor(verbosity)));
  root[VERBOSITY] = Math.max(0, Math.floor(verbosity));
  root.level = level;
  const children = root[CHILDREN];
  for (const ref of children ?? []) {
    const child = ref.deref();
    if (child) child.level = level;
    else children!.delete(ref);
  }
}

/** The current verbosity of a logger made by createLogger. */
export function verbosityOf(logger: Logger): number {
  return (logger as WithVerbosity)[VERBOSITY] ?? 0;
}

// ---------------------------------------------------------------------------
// Text format

/** Record keys that the klog header already shows (and the V level, which klog text does not print). */
const HEADER_KEYS = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'component', 'name', 'v']);

function severity(level: number): string {
  if (level >= 60) return 'F';
  if (level >= 50) return 'E';
  if (level >= 40) return 'W';
  return 'I';
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
/** A klog header field: a string or number as text; anything else counts as absent. */
const headerField = (v: unknown): string | undefined => (typeof v === 'string' || typeof v === 'number' ? String(v) : undefined);

function formatValue(key: string, value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value === null || value === undefined) return 'null';
  // pino's error serializer yields {type, message, stack}; klog prints err="message".
  if (key === 'err' || key === 'error') {
    const message = (value as { message?: unknown }).message;
    if (typeof message === 'string') return JSON.stringify(message);
  }
  return JSON.stringify(value);
}

/** Formats one pino record (parsed JSON) as a klog text line, newline-terminated. */
export function formatKlogLine(record: Record<string, unknown>, defaultComponent = 'kubelet'): string {
  const time = typeof record.time === 'number' ? record.time : Date.now();
  const totalMicros = Math.round(time * 1000);
  const d = new Date(Math.floor(totalMicros / 1000));
  const micros = totalMicros % 1_000_000;
  const header =
    severity(typeof record.level === 'number' ? record.level : 30) +
    `${pad(d.getMonth() + 1)}${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(micros, 6)} ` +
    `${(headerField(record.pid) ?? '').padStart(7)} ` +
    `${headerField(record.component) ?? headerField(record.name) ?? defaultComponent}] `;
  let line = header + JSON.stringify(typeof record.msg === 'string' ? record.msg : '');
  for (const [key, value] of Object.entries(record)) {
    if (HEADER_KEYS.has(key)) continue;
    line += ` ${key}=${formatValue(key, value)}`;
  }
  return line + '\n';
}

// ---------------------------------------------------------------------------
// JSON format

/** The V level of a pino record without an explicit `v`: info and warn are 0, debug 4, trace 5; errors have none. */
function vOfLevel(level: number): number | undefined {
  if (level >= 50) return undefined;
  if (level >= 30) return 0;
  return level >= 20 ? 4 : 5;
}

/** Formats one pino record (parsed JSON) in upstream's JSON shape, newline-terminated. */
export function formatJsonLine(record: Record<string, unknown>): string {
  const { level, time, msg, v: explicit, pid: _pid, hostname: _host, ...rest } = record;
  const lvl = typeof level === 'number' ? level : 30;
  const out: Record<string, unknown> = {
    ts: typeof time === 'number' ? time / 1000 : Date.now() / 1000,
    msg: typeof msg === 'string' ? msg : '',
  };
  const verbosity = lvl >= 50 ? undefined : typeof explicit === 'number' ? explicit : vOfLevel(lvl);
  if (verbosity !== undefined) out.v = verbosity;
  for (const [key, value] of Object.entries(rest)) {
    const message = (value as { message?: unknown } | null)?.message;
    out[key] = (key === 'err' || key === 'error') && typeof message === 'string' ? message : value;
  }
  return JSON.stringify(out) + '\n';
}

/**
 * A synchronous pino destination that re-formats each pino JSON line with
 * `format` (klog text, or upstream's JSON shape where a key set twice
 * collapses to its last value); a line that is not JSON passes through.
 */
function reformatStream(destination: DestinationStream, format: (record: Record<string, unknown>) => string): DestinationStream {
  return {
    write(chunk: string) {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(chunk) as Record<string, unknown>;
      } catch {
        destination.write(chunk);
        return;
      }
      destination.write(format(record));
    },
  };
}
