/**
 * The CRI container log format and the options of a log read (upstream
 * pkg/kubelet/kuberuntime/logs): a line is
 * `<RFC3339Nano timestamp> <stdout|stderr> <tag>[:more tags] <content>`,
 * tag P for a partial line (its trailing newline is not content) and F for
 * the end of one.
 */
export interface CriLogLine {
  /** The timestamp as written (RFC3339Nano). */
  timestamp: string;
  /** Nanoseconds since the epoch. */
  timeNs: bigint;
  stream: 'stdout' | 'stderr';
  partial: boolean;
  /** The content, with its newline unless partial. */
  content: Buffer;
}

const SP = 0x20;
const NL = 0x0a;

const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;
/** The last whole-second part parsed, and its ns: a log's lines mostly share it. */
let lastSecond = '';
let lastSecondNs = 0n;

/** RFC3339(Nano) → ns since the epoch; undefined when it does not parse. */
export function parseRfc3339Ns(ts: string): bigint | undefined {
  const m = RFC3339.exec(ts);
  if (!m) return undefined;
  const second = m[1] + m[3];
  if (second !== lastSecond) {
    const ms = Date.parse(second);
    if (Number.isNaN(ms)) return undefined;
    lastSecond = second;
    lastSecondNs = BigInt(ms) * 1_000_000n;
  }
  const frac = m[2];
  return frac === undefined ? lastSecondNs : lastSecondNs + BigInt(Number(frac) * 10 ** (9 - frac.length));
}

/** Whether `line[at..at+word.length)` holds `word` (ASCII). */
function bytesAre(line: Buffer, at: number, end: number, word: string): boolean {
  if (end - at !== word.length) return false;
  for (let i = 0; i < word.length; i++) if (line[at + i] !== word.charCodeAt(i)) return false;
  return true;
}

const P = 0x50;
const COLON = 0x3a;

/** Upstream parseCRILog. Throws with the reason for a malformed line. */
export function parseCriLogLine(line: Buffer): CriLogLine {
  const i1 = line.indexOf(SP);
  if (i1 < 0) throw new Error('timestamp is not found');
  const timestamp = line.toString('latin1', 0, i1);
  const timeNs = parseRfc3339Ns(timestamp);
  if (timeNs === undefined) throw new Error(`unexpected timestamp format "${line.toString('utf8', 0, i1)}"`);
  const i2 = line.indexOf(SP, i1 + 1);
  if (i2 < 0) throw new Error('stream type is not found');
  const stream = bytesAre(line, i1 + 1, i2, 'stdout') ? 'stdout' : bytesAre(line, i1 + 1, i2, 'stderr') ? 'stderr' : undefined;
  if (!stream) throw new Error(`unexpected stream type "${line.toString('utf8', i1 + 1, i2)}"`);
  const i3 = line.indexOf(SP, i2 + 1);
  if (i3 < 0) throw new Error('log tag is not found');
  // The first of the ':'-separated tags is P for a partial line.
  const partial = line[i2 + 1] === P && (i3 === i2 + 2 || line[i2 + 2] === COLON);
  let content = line.subarray(i3 + 1);
  if (partial && content.length > 0 && content[content.length - 1] === NL) content = content.subarray(0, -1);
  return { timestamp, timeNs, stream, partial, content };
}

/** upstream LogOptions (from v1.PodLogOptions) */
export interface LogReadOptions {
  /** Lines from the end; -1 = all. */
  tail: number;
  /** Bytes at most; -1 = no limit. */
  bytes: number;
  /** Skip lines older than this (ns since the epoch); 0n = none. */
  sinceNs: bigint;
  follow: boolean;
  timestamps: boolean;
}

/**
 * The query of /containerLogs as v1.PodLogOptions (upstream ParameterCodec
 * plus the legacy `tail`). The int64 fields are decoded as ParseInt does
 * (out of int64 range: a decode failure) and held as numbers clamped to
 * ±Number.MAX_SAFE_INTEGER: every value past it means the same, no practical
 * limit (lines, bytes) or further back than the epoch (seconds).
 */
export interface PodLogQuery {
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  tailLines?: number;
  limitBytes?: number;
  sinceSeconds?: number;
  sinceTime?: string;
}

export class LogQueryError extends Error {
  constructor(
    readonly status: 400 | 422,
    message: string,
  ) {
    super(message);
  }
}

function goBool(v: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False', ''].includes(v)) return false;
  throw new LogQueryError(400, '{"message": "Unable to decode query."}');
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);

/** strconv.ParseInt(v, 10, 64), clamped to ±MAX_SAFE_INTEGER. */
function goInt64(v: string): number {
  const m = /^([+-]?)0*(\d+)$/.exec(v);
  if (!m || m[2].length > 19) throw new LogQueryError(400, '{"message": "Unable to decode query."}');
  const n = BigInt(`${m[1]}${m[2]}`);
  if (n > INT64_MAX || n < INT64_MIN) throw new LogQueryError(400, '{"message": "Unable to decode query."}');
  return Number(n > SAFE_MAX ? SAFE_MAX : n < -SAFE_MAX ? -SAFE_MAX : n);
}

/** Decodes and validates (upstream ValidatePodLogOptions) the query; LogQueryError with upstream's status and body. */
export function parsePodLogQuery(q: URLSearchParams): PodLogQuery {
  const tail = q.get('tail');
  const tailLines = tail !== null && tail !== '' ? (tail === 'all' ? null : tail) : q.get('tailLines');
  const out: PodLogQuery = {
    follow: goBool(q.get('follow') ?? ''),
    previous: goBool(q.get('previous') ?? ''),
    timestamps: goBool(q.get('timestamps') ?? ''),
  };
  if (tailLines !== null && tailLines !== undefined) out.tailLines = goInt64(tailLines);
  if (q.get('limitBytes') !== null) out.limitBytes = goInt64(q.get('limitBytes')!);
  if (q.get('sinceSeconds') !== null) out.sinceSeconds = goInt64(q.get('sinceSeconds')!);
  const since = q.get('sinceTime');
  if (since !== null) {
    if (parseRfc3339Ns(since) === undefined) throw new LogQueryError(400, '{"message": "Unable to decode query."}');
    out.sinceTime = since;
  }
  const invalid =
    (out.tailLines !== undefined && out.tailLines < 0) ||
    (out.limitBytes !== undefined && out.limitBytes < 1) ||
    (out.sinceSeconds !== undefined && out.sinceSeconds < 1) ||
    (out.sinceSeconds !== undefined && out.sinceTime !== undefined);
  if (invalid) throw new LogQueryError(422, '{"message": "Invalid request."}');
  return out;
}

/** A count past MAX_SAFE_INTEGER is no practical limit; absent is -1 (none). */
function limit(n: number | undefined): number {
  return n === undefined ? -1 : Math.min(n, Number.MAX_SAFE_INTEGER);
}

/**
 * Upstream NewLogOptions. A sinceSeconds further back than the epoch (where
 * upstream's Duration overflows) reads from the beginning.
 */
export function logReadOptions(q: PodLogQuery, nowMs: number): LogReadOptions {
  let sinceNs = 0n;
  if (q.sinceSeconds !== undefined) {
    const sinceMs = Math.trunc(nowMs - q.sinceSeconds * 1000);
    if (Number.isFinite(sinceMs) && sinceMs > 0) sinceNs = BigInt(sinceMs) * 1_000_000n;
  }
  if (q.sinceTime !== undefined) {
    const t = parseRfc3339Ns(q.sinceTime)!;
    if (t > sinceNs) sinceNs = t;
  }
  return { tail: limit(q.tailLines), bytes: limit(q.limitBytes), sinceNs, follow: q.follow, timestamps: q.timestamps };
}
