/**
 * A small CSI node plugin for tests (no real CSI driver installs on this
 * machine). A separate process: a real gRPC server over a unix socket
 * speaking CSI v1 (Identity and Node services, from proto/csi/v1/csi.proto)
 * that "stages" a volume by bind-mounting <data-dir>/<volume_id> at the
 * staging path and "publishes" it by bind-mounting the staging path (or the
 * data directory, without staging) at the target path, read-only when asked.
 * It registers itself as a kubelet plugin by serving pluginregistration.v1 on
 * <registry-dir>/<driver>-reg.sock, as node-driver-registrar does, and writes
 * every call it gets as a JSON line to the call log.
 *
 * Run: node --import tsx test/helpers/csi-test-plugin.ts --registry-dir DIR
 *   --csi-socket PATH --driver NAME --node-id ID --data-dir DIR --log FILE [--stage=false]
 * SIGTERM removes both sockets (the kubelet deregisters the driver) and exits.
 * Tests start it with startCsiTestPlugin().
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import {
  IdentityService,
  NodeService,
  NodeServiceCapability_RPC_Type,
  type NodePublishVolumeRequest,
  type NodeStageVolumeRequest,
} from '../../src/gen/csi/v1/csi.js';
import { RegistrationService } from '../../src/gen/pluginregistration/v1/api.js';
import { pollUntil } from './poll.js';

const run = promisify(execFile);

export interface CsiCall {
  method: string;
  [field: string]: unknown;
}

function isMounted(path: string): boolean {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[4] === path);
}

type Handler<Req, Res> = (call: { request: Req }, cb: (err: Partial<grpc.ServiceError> | null, res?: Res) => void) => void;

/** A unary handler that logs the call, runs `fn` and answers with its result or an INTERNAL/INVALID_ARGUMENT error. */
function handler<Req extends object, Res>(
  log: (c: CsiCall) => void,
  method: string,
  fn: (req: Req) => Promise<Res> | Res,
): Handler<Req, Res> {
  return (call, cb) => {
    const entry: CsiCall = { method, ...(call.request as Record<string, unknown>) };
    Promise.resolve()
      .then(() => fn(call.request))
      .then(
        (res) => {
          log(entry);
          cb(null, res);
        },
        (err: Error & { grpcCode?: grpc.status }) => {
          log({ ...entry, error: err.message });
          cb({ code: err.grpcCode ?? grpc.status.INTERNAL, details: err.message });
        },
      );
  };
}

const invalid = (msg: string) => Object.assign(new Error(msg), { grpcCode: grpc.status.INVALID_ARGUMENT });

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'registry-dir': { type: 'string' },
      'csi-socket': { type: 'string' },
      driver: { type: 'string' },
      'node-id': { type: 'string' },
      'data-dir': { type: 'string' },
      log: { type: 'string' },
      stage: { type: 'string', default: 'true' },
    },
  });
  const need = (k: keyof typeof values) => {
    const v = values[k];
    if (typeof v !== 'string' || v === '') throw new Error(`--${k} is required`);
    return v;
  };
  const [registryDir, csiSocket, driver, nodeId, dataDir, logFile] = (
    ['registry-dir', 'csi-socket', 'driver', 'node-id', 'data-dir', 'log'] as const
  ).map(need);
  const stage = values.stage !== 'false';
  const regSocket = join(registryDir, `${driver}-reg.sock`);
  const log = (c: CsiCall) => appendFileSync(logFile, `${JSON.stringify({ time: new Date().toISOString(), ...c })}\n`);
  const bind = async (src: string, dst: string, readonly: boolean) => {
    await run('mount', ['--bind', src, dst]);
    if (readonly) await run('mount', ['-o', 'remount,bind,ro', dst]);
  };

  const csi = new grpc.Server();
  csi.addService(IdentityService, {
    getPluginInfo: handler(log, 'GetPluginInfo', () => ({ name: driver, vendorVersion: '0.1.0', manifest: {} })),
    getPluginCapabilities: handler(log, 'GetPluginCapabilities', () => ({ capabilities: [] })),
    probe: handler(log, 'Probe', () => ({ ready: true })),
  });
  csi.addService(NodeService, {
    nodeGetInfo: handler(log, 'NodeGetInfo', () => ({ nodeId, maxVolumesPerNode: 0n })),
    nodeGetCapabilities: handler(log, 'NodeGetCapabilities', () => ({
      capabilities: stage ? [{ rpc: { type: NodeServiceCapability_RPC_Type.STAGE_UNSTAGE_VOLUME } }] : [],
    })),
    nodeStageVolume: handler(log, 'NodeStageVolume', async (r: NodeStageVolumeRequest) => {
      if (!r.volumeId || !r.stagingTargetPath || !r.volumeCapability)
        throw invalid('volume_id, staging_target_path and volume_capability are required');
      if (!existsSync(r.stagingTargetPath)) throw invalid(`staging path ${r.stagingTargetPath} does not exist`);
      const data = join(dataDir, r.volumeId);
      mkdirSync(data, { recursive: true });
      if (!isMounted(r.stagingTargetPath)) await bind(data, r.stagingTargetPath, false);
      return {};
    }),
    nodeUnstageVolume: handler(log, 'NodeUnstageVolume', async (r: { volumeId: string; stagingTargetPath: string }) => {
      if (!r.volumeId || !r.stagingTargetPath) throw invalid('volume_id and staging_target_path are required');
      if (isMounted(r.stagingTargetPath)) await run('umount', [r.stagingTargetPath]);
      return {};
    }),
    nodePublishVolume: handler(log, 'NodePublishVolume', async (r: NodePublishVolumeRequest) => {
      if (!r.volumeId || !r.targetPath || !r.volumeCapability) throw invalid('volume_id, target_path and volume_capability are required');
      if (stage && !r.stagingTargetPath) throw invalid('staging_target_path is required: this plugin stages volumes');
      const src = stage ? r.stagingTargetPath : join(dataDir, r.volumeId);
      mkdirSync(src, { recursive: true });
      mkdirSync(r.targetPath, { recursive: true });
      if (!isMounted(r.targetPath)) await bind(src, r.targetPath, r.readonly);
      return {};
    }),
    nodeUnpublishVolume: handler(log, 'NodeUnpublishVolume', async (r: { volumeId: string; targetPath: string }) => {
      if (!r.volumeId || !r.targetPath) throw invalid('volume_id and target_path are required');
      if (isMounted(r.targetPath)) await run('umount', [r.targetPath]);
      if (existsSync(r.targetPath)) rmdirSync(r.targetPath);
      return {};
    }),
  });
  const registration = new grpc.Server();
  registration.addService(RegistrationService, {
    getInfo: handler(log, 'GetInfo', () => ({ type: 'CSIPlugin', name: driver, endpoint: csiSocket, supportedVersions: ['1.0.0'] })),
    notifyRegistrationStatus: handler(log, 'NotifyRegistrationStatus', () => ({})),
  });
  const listen = (server: grpc.Server, path: string) =>
    new Promise<void>((resolve, reject) => {
      rmSync(path, { force: true });
      server.bindAsync(`unix://${path}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve()));
    });
  mkdirSync(registryDir, { recursive: true });
  await listen(csi, csiSocket);
  // The registration socket last: the kubelet dials the CSI socket as soon as it sees this one.
  await listen(registration, regSocket);
  const stop = () => {
    rmSync(regSocket, { force: true });
    registration.forceShutdown();
    csi.forceShutdown();
    rmSync(csiSocket, { force: true });
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

/** A running test plugin (a child process). */
export interface CsiTestPlugin {
  registrationSocket: string;
  /** The calls logged so far, in order. */
  calls(): CsiCall[];
  /** SIGTERM, and waits for the process to exit (its sockets are gone). */
  stop(): Promise<void>;
}

export async function startCsiTestPlugin(o: {
  registryDir: string;
  csiSocket: string;
  driver: string;
  nodeId: string;
  dataDir: string;
  log: string;
  stage?: boolean;
}): Promise<CsiTestPlugin> {
  const args = [
    `--registry-dir=${o.registryDir}`,
    `--csi-socket=${o.csiSocket}`,
    `--driver=${o.driver}`,
    `--node-id=${o.nodeId}`,
    `--data-dir=${o.dataDir}`,
    `--log=${o.log}`,
    `--stage=${o.stage === false ? 'false' : 'true'}`,
  ];
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), ...args], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const registrationSocket = join(o.registryDir, `${o.driver}-reg.sock`);
  await pollUntil('the CSI test plugin registration socket', () => existsSync(registrationSocket) || child.exitCode !== null, {
    timeoutMs: 30_000,
    intervalMs: 100,
  });
  if (child.exitCode !== null) throw new Error(`the CSI test plugin exited with code ${child.exitCode}`);
  return {
    registrationSocket,
    calls: () =>
      existsSync(o.log)
        ? readFileSync(o.log, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as CsiCall)
        : [],
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(`csi-test-plugin: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
