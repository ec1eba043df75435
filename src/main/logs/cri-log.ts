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

/** RFC3339(Nano) → ns since the epoch; undefined when it does not parse. */
export function parseRfc3339Ns(ts: string): bigint | undefined {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(ts);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return undefined;
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0') || '0');
}

/** Upstream parseCRILog. Throws with the reason for a malformed line. */
export function parseCriLogLine(line: Buffer): CriLogLine {
  const i1 = line.indexOf(SP);
  if (i1 < 0) throw new Error('timestamp is not found');
  const timestamp = line.subarray(0, i1).toString();
  const timeNs = parseRfc3339Ns(timestamp);
  if (timeNs === undefined) throw new Error(`unexpected timestamp format "${timestamp}"`);
  const i2 = line.indexOf(SP, i1 + 1);
  if (i2 < 0) throw new Error('stream type is not found');
  const stream = line.subarray(i1 + 1, i2).toString();
  if (stream !== 'stdout' && stream !== 'stderr') throw new Error(`unexpected stream type "${stream}"`);
  const i3 = line.indexOf(SP, i2 + 1);
  if (i3 < 0) throw new Error('log tag is not found');
  const partial =
    line
      .subarray(i2 + 1, i3)
      .toString()
      .split(':')[0] === 'P';
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

/** The query of /containerLogs as v1.PodLogOptions (upstream ParameterCodec plus the legacy `tail`). */
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

function goInt(v: string): number {
  if (!/^[+-]?\d+$/.test(v)) throw new LogQueryError(400, '{"message": "Unable to decode query."}');
  return Number(v);
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
  if (tailLines !== null && tailLines !== undefined) out.tailLines = goInt(tailLines);
  if (q.get('limitBytes') !== null) out.limitBytes = goInt(q.get('limitBytes')!);
  if (q.get('sinceSeconds') !== null) out.sinceSeconds = goInt(q.get('sinceSeconds')!);
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

/** Upstream NewLogOptions. */
export function logReadOptions(q: PodLogQuery, nowMs: number): LogReadOptions {
  let sinceNs = 0n;
  if (q.sinceSeconds !== undefined) sinceNs = BigInt(nowMs - q.sinceSeconds * 1000) * 1_000_000n;
  if (q.sinceTime !== undefined) {
    const t = parseRfc3339Ns(q.sinceTime)!;
    if (t > sinceNs) sinceNs = t;
  }
  return { tail: q.tailLines ?? -1, bytes: q.limitBytes ?? -1, sinceNs, follow: q.follow, timestamps: q.timestamps };
}
