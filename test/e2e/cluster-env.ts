/**
 * The cluster half of the e2e suite runs against the real control plane that
 * `scripts/control-plane.sh up` starts (etcd, kube-apiserver, controller-manager,
 * scheduler v1.20.2), with the machine's kubectl as the observer. It is skipped
 * unless KTS_E2E_CLUSTER=1 or CI=true; when enabled, a missing control plane
 * FAILS the run (never skips).
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe } from 'vitest';
import { pollUntil } from '../helpers/poll.js';
import type { AgentProcess } from './agent-harness.js';

const run = promisify(execFile);
const root = resolve(fileURLToPath(import.meta.url), '../../..');
const SCRIPT = join(root, 'scripts/control-plane.sh');

export const CLUSTER_ENABLED = process.env.KTS_E2E_CLUSTER === '1' || process.env.CI === 'true';
/** The control plane's state dir (scripts/control-plane.sh env: KTS_CP_DIR). */
export const CP_DIR = process.env.KTS_CP_DIR ?? '/var/lib/kubelet-ts-control-plane';
export const ADMIN_KUBECONFIG = process.env.KTS_KUBECONFIG ?? `${CP_DIR}/admin.kubeconfig`;

const SKIP_MESSAGE =
  'cluster e2e suite skipped: it needs the real control plane. Enable it with ' +
  '`bash scripts/control-plane.sh build && bash scripts/control-plane.sh up && KTS_E2E=1 KTS_E2E_CLUSTER=1 npm test` as root ' +
  '(CI=true enables it too, and then a missing control plane fails the run).';

/** describe() when the cluster suite is enabled, otherwise describe.skip() with the enabling instructions. */
/**
 * The kubelet server as a cluster reaches it: on the node's InternalIP (the apiserver dials it), client
 * certificates from the cluster CA, bearer tokens and authorization through the apiserver's webhooks, and
 * no anonymous access (what a --config file defaults them to).
 */
export const SECURED_SERVER_FLAGS: readonly string[] = [
  '--address=0.0.0.0',
  `--client-ca-file=${CP_DIR}/pki/ca.crt`,
  '--anonymous-auth=false',
  '--authentication-token-webhook=true',
  '--authorization-mode=Webhook',
];

export function describeCluster(name: string, body: () => void): void {
  if (CLUSTER_ENABLED) {
    describe(name, body);
  } else {
    console.warn(SKIP_MESSAGE);
    describe.skip(`${name} (${SKIP_MESSAGE})`, body);
  }
}

/** Runs the machine's kubectl as the admin; returns stdout. Throws with stderr on failure. */
export async function kubectl(...args: string[]): Promise<string> {
  if (!existsSync(ADMIN_KUBECONFIG)) {
    throw new Error(`no admin kubeconfig at ${ADMIN_KUBECONFIG}: is the control plane up? (as root: bash scripts/control-plane.sh up)`);
  }
  try {
    const { stdout } = await run('kubectl', ['--kubeconfig', ADMIN_KUBECONFIG, ...args], { maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`kubectl ${args.join(' ')}: ${e.stderr?.trim() || e.message}`, { cause: err });
  }
}

export async function kubectlJson<T>(...args: string[]): Promise<T> {
  return JSON.parse(await kubectl(...args, '-o', 'json')) as T;
}

/** kubectl get that yields undefined for NotFound. */
export async function getOrUndefined<T>(...args: string[]): Promise<T | undefined> {
  try {
    return await kubectlJson<T>('get', ...args);
  } catch (err) {
    if (/NotFound|not found/.test((err as Error).message)) return undefined;
    throw err;
  }
}

/** A node kubeconfig (client cert O=system:nodes, CN=system:node:NAME) written by the control-plane script. */
export async function nodeKubeconfig(node: string, file: string): Promise<string> {
  await run('bash', [SCRIPT, 'kubeconfig', node, file]);
  return file;
}

/** A TLS-bootstrap kubeconfig (bootstrap token) written by the control-plane script. */
export async function bootstrapKubeconfig(file: string): Promise<string> {
  await run('bash', [SCRIPT, 'bootstrap-kubeconfig', file]);
  return file;
}

export interface NodeObject {
  metadata: { name: string; uid: string; labels?: Record<string, string>; annotations?: Record<string, string>; creationTimestamp: string };
  spec?: { taints?: { key: string; value?: string; effect: string }[] };
  status?: {
    conditions?: {
      type: string;
      status: string;
      reason?: string;
      message?: string;
      lastTransitionTime?: string;
      lastHeartbeatTime?: string;
    }[];
    addresses?: { type: string; address: string }[];
    capacity?: Record<string, string>;
    allocatable?: Record<string, string>;
    nodeInfo?: Record<string, string>;
    daemonEndpoints?: { kubeletEndpoint?: { Port?: number } };
    images?: { names: string[] | null; sizeBytes: number }[];
  };
}

export function condition(node: NodeObject | undefined, type: string) {
  return node?.status?.conditions?.find((c) => c.type === type);
}

/** Removes what a test node leaves in the cluster: the Node, its lease, its events and CSRs. */
export async function deleteNodeObjects(node: string): Promise<void> {
  await kubectl('delete', 'node', node, '--ignore-not-found', '--wait=false').catch(() => undefined);
  await kubectl('-n', 'kube-node-lease', 'delete', 'lease', node, '--ignore-not-found', '--wait=false').catch(() => undefined);
  await kubectl('-n', 'default', 'delete', 'events', '--field-selector', `involvedObject.name=${node}`, '--wait=false').catch(
    () => undefined,
  );
}

/** `kubectl -n NS apply -f -` of one object; throws with kubectl's stderr. */
export async function kubectlApply(ns: string, doc: object): Promise<void> {
  const child = execFile('kubectl', ['--kubeconfig', ADMIN_KUBECONFIG, '-n', ns, 'apply', '-f', '-']);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<void>((res, rej) =>
    child.on('exit', (code) => (code === 0 ? res() : rej(new Error(`kubectl apply: ${stderr.trim()}`)))),
  );
  child.stdin!.end(JSON.stringify(doc));
  await done;
}

/** The fields of a Pod the eviction tests read. */
export interface ClusterPod {
  metadata: { name: string; uid: string };
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    containerStatuses?: { name: string; restartCount: number; containerID?: string; state?: { running?: object } }[];
  };
}

/** Applies Pod `ns/name` bound to `nodeName`, with a 2 s grace period and no service account token, plus `spec`. */
export function applyNodePod(ns: string, nodeName: string, name: string, spec: Record<string, unknown>): Promise<void> {
  return kubectlApply(ns, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { nodeName, terminationGracePeriodSeconds: 2, automountServiceAccountToken: false, ...spec },
  });
}

/** Whether the logs so far of `container` of pod `ns/name` (under the pod logs directory `podLogsDir`) hold `text`. */
export async function containerLogHas(podLogsDir: string, ns: string, name: string, container: string, text: string): Promise<boolean> {
  const p = await getOrUndefined<ClusterPod>('pod', '-n', ns, name);
  if (!p) return false;
  const dir = join(podLogsDir, `${ns}_${name}_${p.metadata.uid}`, container);
  return existsSync(dir) && readdirSync(dir).some((f) => readFileSync(join(dir, f), 'utf8').includes(text));
}

/** afterAll of a cluster test: the namespace (not waited for), the agent with its pods, the Node's objects. */
export async function removeClusterTest(ns: string, agent: AgentProcess | undefined, nodeName: string): Promise<void> {
  await kubectl('delete', 'namespace', ns, '--wait=false').catch(() => undefined);
  await agent?.cleanup();
  await deleteNodeObjects(nodeName);
}

/** Waits until pod `ns/name` is Failed (evicted, or refused at admission) and returns it. */
export function waitPodFailed(agent: AgentProcess, ns: string, name: string, what: string, timeoutMs = 60_000): Promise<ClusterPod> {
  return agent.until(
    what,
    async () => {
      const p = await getOrUndefined<ClusterPod>('pod', '-n', ns, name);
      return p?.status?.phase === 'Failed' && p;
    },
    timeoutMs,
  );
}

/** Starts `agent` with a node kubeconfig for its node name and waits for the Node to be Ready. */
export async function startClusterAgent(agent: AgentProcess): Promise<void> {
  agent.extraArgs.push(`--kubeconfig=${await nodeKubeconfig(agent.nodeName, join(agent.dir, 'kubeconfig'))}`);
  await agent.start();
  await pollUntil('the node to be Ready', async () => condition(await getOrUndefined('node', agent.nodeName), 'Ready')?.status === 'True', {
    timeoutMs: 60_000,
    intervalMs: 500,
  });
}

/** The token of service account `name` in `ns`, once the token controller has made its secret (waits up to 60 s). */
export function serviceAccountToken(ns: string, name: string): Promise<string> {
  return pollUntil(
    `the token of service account ${ns}/${name}`,
    async () => {
      const out = await kubectl(
        '-n',
        ns,
        'get',
        'secrets',
        '-o',
        'jsonpath={range .items[?(@.type=="kubernetes.io/service-account-token")]}{.metadata.annotations.kubernetes\\.io/service-account\\.name} {.data.token}{"\\n"}{end}',
      );
      const line = out.split('\n').find((l) => l.startsWith(`${name} `));
      return line ? Buffer.from(line.split(' ')[1], 'base64').toString() : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
}
