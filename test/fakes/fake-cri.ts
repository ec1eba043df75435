import type { CriApi, CriCallOptions } from '../../src/cri/client.js';
import { CriError } from '../../src/common/errors.js';

/**
 * A recording CRI for unit tests of the sync tasks (src/workers/sync/): a
 * small in-memory model (sandboxes, containers, images) with every call
 * logged in order. Tests override single methods through `handlers`; any
 * method neither modelled nor overridden throws, so a test never passes by
 * calling something it did not expect.
 */
export interface CriCall {
  method: keyof CriApi;
  request: Record<string, unknown>;
  timeoutMs?: number;
}

type Handler = (request: Record<string, unknown>, options?: CriCallOptions) => Promise<unknown>;

export class FakeCri {
  readonly calls: CriCall[] = [];
  /** Image references present on the node (ImageStatus finds them; PullImage of them succeeds). */
  readonly images = new Set<string>(['docker.io/kubelet-ts/busybox:1.0']);
  /** Image references PullImage adds (anything else fails with "pull failed"). */
  readonly pullable = new Set<string>();
  /** When set, a pull succeeds only with credentials this accepts (a private registry). */
  acceptsAuth?: (auth: { username?: string; password?: string } | undefined) => boolean;
  readonly handlers: Partial<Record<keyof CriApi, Handler>> = {};
  private seq = 0;

  /** The CriApi view handed to the code under test. */
  readonly api: CriApi = new Proxy({} as CriApi, {
    get: (_t, prop: string) => {
      const method = prop as keyof CriApi;
      return async (request: Record<string, unknown> = {}, options?: CriCallOptions) => {
        this.calls.push({ method, request, ...(options?.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}) });
        const h = this.handlers[method] ?? this.model[method];
        if (!h) throw new Error(`FakeCri: unexpected call ${method}`);
        return h(request, options);
      };
    },
  });

  /** Method names of the calls so far, in order. */
  methods(): string[] {
    return this.calls.map((c) => c.method);
  }

  callsOf(method: keyof CriApi): Record<string, unknown>[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.request);
  }

  private readonly model: Partial<Record<keyof CriApi, Handler>> = {
    imageStatus: async (r) => {
      const image = (r.image as { image: string }).image;
      return this.images.has(image) ? { image: { id: `sha256:${image}`, repoTags: [image] } } : {};
    },
    pullImage: async (r) => {
      const image = (r.image as { image: string }).image;
      if (!this.pullable.has(image) && !this.images.has(image)) {
        throw new CriError(`PullImage: rpc error: code = Unknown desc = pull failed`, 'PullImage', 2);
      }
      if (this.acceptsAuth && !this.acceptsAuth(r.auth as { username?: string; password?: string } | undefined)) {
        throw new CriError(`PullImage: rpc error: code = Unknown desc = 401 Unauthorized`, 'PullImage', 2);
      }
      this.images.add(image);
      return { imageRef: `sha256:${image}` };
    },
    runPodSandbox: async () => ({ podSandboxId: `sb-${++this.seq}` }),
    podSandboxStatus: async (r) => ({ status: { id: r.podSandboxId, network: { ip: '10.1.0.9', additionalIps: [] } } }),
    createContainer: async () => ({ containerId: `ctr-${++this.seq}` }),
    startContainer: async () => ({}),
    stopContainer: async () => ({}),
    containerStatus: async (r) => ({ status: { id: r.containerId, logPath: '', annotations: {}, labels: {} } }),
    removeContainer: async () => ({}),
    stopPodSandbox: async () => ({}),
    removePodSandbox: async () => ({}),
    execSync: async () => ({ exitCode: 0, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) }),
  };
}
