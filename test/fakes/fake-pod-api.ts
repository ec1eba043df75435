/**
 * A fake apiserver for pods, behind the RestClient methods the status sync
 * uses (get, patch of pods/<name>/status, delete). It stores pods by
 * namespace/name, applies strategic merge patches as the apiserver would
 * (test/fakes/strategic-merge.ts), checks the patch's metadata.uid as a UID
 * precondition (409 "Precondition failed: UID in precondition"), answers 404
 * for unknown pods, and can inject errors per verb or hold patches in flight
 * until the test releases them.
 */
import type { Pod } from '../../src/api/pod.js';
import { ApiStatusError } from '../../src/common/errors.js';
import type { RestClient } from '../../src/main/apiserver/rest-client.js';
import { applyStrategicPatch } from './strategic-merge.js';

export const POD_STATUS_MERGE_KEYS = { 'status.conditions': 'type', 'status.podIPs': 'ip', 'status.hostIPs': 'ip' };

export interface ApiCall {
  verb: 'get' | 'patch' | 'delete';
  path: string;
  body?: Record<string, unknown>;
  patchType?: string;
}

const PATH = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)(\/status)?$/;

export class FakePodApi {
  readonly pods = new Map<string, Pod>();
  readonly calls: ApiCall[] = [];
  readonly fail: Record<ApiCall['verb'], Error[]> = { get: [], patch: [], delete: [] };
  /** While true, each patch waits for release(). */
  hold = false;
  inFlight = 0;
  maxInFlight = 0;
  private waiters: (() => void)[] = [];
  private rv = 1000;

  put(pod: Pod): Pod {
    const copy = structuredClone(pod);
    copy.metadata.resourceVersion = String(++this.rv);
    this.pods.set(`${copy.metadata.namespace}/${copy.metadata.name}`, copy);
    return structuredClone(copy);
  }

  pod(namespace: string, name: string): Pod | undefined {
    return this.pods.get(`${namespace}/${name}`);
  }

  /** Lets the held patches continue; returns how many there were. */
  release(): number {
    const w = this.waiters.splice(0);
    for (const f of w) f();
    return w.length;
  }

  get held(): number {
    return this.waiters.length;
  }

  patches(): ApiCall[] {
    return this.calls.filter((c) => c.verb === 'patch');
  }

  private find(path: string): { key: string; pod: Pod } {
    const m = PATH.exec(path);
    if (!m) throw new Error(`fake apiserver: unexpected path ${path}`);
    const key = `${decodeURIComponent(m[1])}/${decodeURIComponent(m[2])}`;
    const pod = this.pods.get(key);
    if (!pod) throw new ApiStatusError(`${path}: 404 NotFound: pods "${m[2]}" not found`, 404, 'NotFound');
    return { key, pod };
  }

  readonly client = {
    get: async <T>(path: string) => {
      this.calls.push({ verb: 'get', path });
      const err = this.fail.get.shift();
      if (err) throw err;
      return structuredClone(this.find(path).pod) as T;
    },
    patch: async <T>(path: string, body: Record<string, unknown>, patchType: string) => {
      this.calls.push({ verb: 'patch', path, body: structuredClone(body), patchType });
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      try {
        if (this.hold) await new Promise<void>((r) => this.waiters.push(r));
        const err = this.fail.patch.shift();
        if (err) throw err;
        if (!path.endsWith('/status')) throw new Error(`fake apiserver: status patches only, got ${path}`);
        const { key, pod } = this.find(path);
        const { metadata, ...rest } = body as { metadata?: { uid?: string } };
        if (metadata?.uid && metadata.uid !== pod.metadata.uid) {
          const msg = `Precondition failed: UID in precondition: ${metadata.uid}, UID in object meta: ${pod.metadata.uid}`;
          throw new ApiStatusError(`PATCH ${path}: 409 Conflict: Operation cannot be fulfilled on pods: ${msg}`, 409, 'Conflict');
        }
        const status = applyStrategicPatch({ status: pod.status ?? {} }, rest, POD_STATUS_MERGE_KEYS).status;
        const next = { ...pod, status, metadata: { ...pod.metadata, resourceVersion: String(++this.rv) } } as Pod;
        this.pods.set(key, next);
        return structuredClone(next) as T;
      } finally {
        this.inFlight--;
      }
    },
    delete: async <T>(path: string, body?: Record<string, unknown>) => {
      this.calls.push({ verb: 'delete', path, body: structuredClone(body) });
      const err = this.fail.delete.shift();
      if (err) throw err;
      const { key } = this.find(path);
      this.pods.delete(key);
      return {} as T;
    },
  } as unknown as RestClient;
}
