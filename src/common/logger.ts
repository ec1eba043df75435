/**
 * Structured logging on pino, with klog-style verbosity.
 *
 * Formats:
 * - 'json': plain pino JSON lines ({"level":30,"time":…,"pid":…,"msg":…, …}).
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
type WithVerbosity = Logger & { [VERBOSITY]?: number };

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
  const stream = options.format === 'text' ? klogStream(destination, options.component ?? 'kubelet') : destination;
  const logger = pino(
    {
      level: levelForVerbosity(verbosity),
      base: { pid: options.pid ?? process.pid },
      ...(now ? { timestamp: () => `,"time":${now().toFixed(3)}` } : {}),
    },
    stream,
  ) as WithVerbosity;
  // Children are created with Object.create(parent), so they inherit this.
  logger[VERBOSITY] = verbosity;
  return logger;
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

/** klog V(level): the logger when enabled, otherwise a silent logger. Log through it at info. */
export function v(logger: Logger, level: number): Logger {
  return vEnabled(logger, level) ? logger : silentLogger();
}

// ---------------------------------------------------------------------------
// Text format

/** Record keys that the klog header already shows. */
const HEADER_KEYS = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'component', 'name']);

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

/** A synchronous pino destination that re-formats each JSON line as klog text. */
function klogStream(destination: DestinationStream, defaultComponent: string): DestinationStream {
  return {
    write(chunk: string) {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(chunk) as Record<string, unknown>;
      } catch {
        destination.write(chunk);
        return;
      }
      destination.write(formatKlogLine(record, defaultComponent));
    },
  };
}
