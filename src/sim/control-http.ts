/**
 * SimControl over JSON/HTTP on a unix socket, for a sim running in another
 * process (`kubelet-ts-sim --control unix:///path`). One route per SimControl
 * method; bodies are validated with zod. Replies: 200 with a JSON body
 * (`{"ok":true}` unless the route returns data), 400 for a bad body, 404 for
 * an unknown route or container, 409 for a container that is not running.
 *
 *   GET  /stats                                       → SimStats
 *   GET  /faults                                      → FaultConfig
 *   POST /faults        FaultConfig
 *   POST /latency       {rpc, latency|null}
 *   POST /error-rate    {rpc, errorRate, errorCode?, errorMessage?}
 *   POST /runtime-down  {down, reason?, message?}
 *   POST /network-ready {ready, reason?, message?}
 *   POST /pull-latency  {latency: ms | LatencySpec | null}
 *   POST /stop-delay    {ms}
 *   POST /images/allow  {patterns: string[]}
 *   POST /images/seed   {refs: string[]}
 *   POST /files         {containerId, path, content}
 *   POST /kill          {containerId, exitCode}
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { status } from '@grpc/grpc-js';
import { z } from 'zod';
import { CriError } from '../common/errors.js';
import { errorMessage } from '../common/error-message.js';
import { faultConfigSchema, latencySchema } from './faults.js';
import { containerUsageSchema, pullLatencyInputSchema, sandboxNetworkSchema, type SimControl } from './control.js';
import { listenUnix } from './socket.js';

interface Route<S extends z.ZodType> {
  schema: S;
  run(ctl: SimControl, body: z.infer<S>): unknown;
}

const route = <S extends z.ZodType>(schema: S, run: (ctl: SimControl, body: z.infer<S>) => unknown): Route<S> => ({ schema, run });
const none = z.unknown();

export const CONTROL_ROUTES: Record<string, Route<z.ZodType>> = {
  'GET /stats': route(none, (c) => c.stats()),
  'GET /faults': route(none, (c) => c.getFaults()),
  'POST /faults': route(faultConfigSchema, (c, b) => c.setFaults(b)),
  'POST /latency': route(z.object({ rpc: z.string().min(1), latency: latencySchema.nullable() }), (c, b) =>
    c.setLatency(b.rpc, b.latency ?? undefined),
  ),
  'POST /error-rate': route(
    z.object({
      rpc: z.string().min(1),
      errorRate: z.number().min(0).max(1),
      errorCode: z.number().int().optional(),
      errorMessage: z.string().optional(),
    }),
    (c, b) => c.setErrorRate(b.rpc, b.errorRate, b.errorCode, b.errorMessage),
  ),
  'POST /runtime-down': route(z.object({ down: z.boolean(), reason: z.string().optional(), message: z.string().optional() }), (c, b) =>
    c.setRuntimeDown(b.down, b.reason, b.message),
  ),
  'POST /network-ready': route(z.object({ ready: z.boolean(), reason: z.string().optional(), message: z.string().optional() }), (c, b) =>
    c.setNetworkReady(b.ready, b.reason, b.message),
  ),
  'POST /pull-latency': route(z.object({ latency: pullLatencyInputSchema.nullable() }), (c, b) => c.setPullLatency(b.latency ?? undefined)),
  'POST /stop-delay': route(z.object({ ms: z.number().min(0) }), (c, b) => c.setStopDelay(b.ms)),
  'POST /image-fs': route(z.object({ mountpoint: z.string().min(1) }), (c, b) => c.setImageFsMountpoint(b.mountpoint)),
  'POST /images/allow': route(z.object({ patterns: z.array(z.string()) }), (c, b) => c.allowImages(b.patterns)),
  'POST /images/seed': route(z.object({ refs: z.array(z.string()) }), (c, b) => c.seedImages(b.refs)),
  'POST /container-usage': route(containerUsageSchema.extend({ containerId: z.string() }), (c, { containerId, ...usage }) =>
    c.setContainerUsage(containerId, usage),
  ),
  'POST /sandbox-network': route(sandboxNetworkSchema.extend({ sandboxId: z.string() }), (c, { sandboxId, ...network }) =>
    c.setSandboxNetwork(sandboxId, network),
  ),
  'POST /files': route(z.object({ containerId: z.string(), path: z.string(), content: z.string() }), (c, b) =>
    c.setFile(b.containerId, b.path, b.content),
  ),
  'POST /kill': route(z.object({ containerId: z.string(), exitCode: z.number().int().min(0).max(255) }), (c, b) =>
    c.killContainer(b.containerId, b.exitCode),
  ),
};

const HTTP_STATUS_OF_GRPC = new Map<number, number>([
  [status.NOT_FOUND, 404],
  [status.FAILED_PRECONDITION, 409],
]);

function reply(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body ?? { ok: true });
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? {} : JSON.parse(text);
}

async function handle(ctl: SimControl, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const r = CONTROL_ROUTES[`${req.method} ${(req.url ?? '').split('?')[0]}`];
  if (!r) return reply(res, 404, { error: `no route ${req.method} ${req.url}` });
  let body: unknown;
  try {
    body = await readBody(req);
  } catch (err) {
    return reply(res, 400, { error: `body is not JSON: ${errorMessage(err)}` });
  }
  const parsed = r.schema.safeParse(body);
  if (!parsed.success) return reply(res, 400, { error: z.prettifyError(parsed.error) });
  try {
    reply(res, 200, r.run(ctl, parsed.data));
  } catch (err) {
    if (err instanceof CriError) {
      return reply(res, HTTP_STATUS_OF_GRPC.get(err.grpcCode) ?? 400, { error: err.message });
    }
    reply(res, 500, { error: errorMessage(err) });
  }
}

/** Serves `ctl` on the unix socket at `socketPath` (a stale socket file is replaced). */
export async function startControlServer(ctl: SimControl, socketPath: string): Promise<Server> {
  const server = createServer((req, res) => {
    handle(ctl, req, res).catch((err: unknown) => {
      if (res.headersSent) res.destroy(err instanceof Error ? err : undefined);
      else reply(res, 500, { error: errorMessage(err) });
    });
  });
  await listenUnix(server, socketPath);
  return server;
}
