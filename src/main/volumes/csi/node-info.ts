/**
 * What the node publishes about its CSI drivers (upstream
 * pkg/volume/csi/nodeinfomanager): the storage.k8s.io/v1 CSINode object named
 * after the node, one entry per registered driver (node ID, topology keys,
 * attach limit), and the Node's `csi.volume.kubernetes.io/nodeid` annotation,
 * a JSON map from driver name to node ID, plus the driver's topology
 * segments as Node labels.
 *
 * Contracts:
 *  - install/uninstall run one at a time; each re-reads the objects, so a
 *    conflict (another writer) is retried by re-reading, up to 5 times.
 *  - A missing CSINode is created, owned by the Node (ownerReference), as
 *    upstream's CreateCSINode.
 *  - Nothing is written when the objects already say what they should.
 */
import { errorMessage } from '../../../common/error-message.js';
import { isConflict, isNotFound, type RestClient } from '../../apiserver/rest-client.js';

/** upstream annotationKeyNodeID. */
export const NODE_ID_ANNOTATION = 'csi.volume.kubernetes.io/nodeid';

export interface CSINodeDriver {
  name: string;
  nodeID: string;
  topologyKeys: string[] | null;
  allocatable?: { count?: number };
}

export interface CSINode {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; resourceVersion?: string; ownerReferences?: object[] };
  spec: { drivers: CSINodeDriver[] | null };
}

interface NodeMeta {
  metadata: { name: string; uid: string; annotations?: Record<string, string>; labels?: Record<string, string> };
}

/** The seam the driver registry uses (a fake in unit tests). */
export interface NodeInfoManager {
  installDriver(driver: string, nodeId: string, maxVolumes: number, topology: Record<string, string>): Promise<void>;
  uninstallDriver(driver: string): Promise<void>;
}

const CSINODES = '/apis/storage.k8s.io/v1/csinodes';
const ATTEMPTS = 5;
const MAX_INT32 = 2 ** 31 - 1;

/**
 * The drivers of a CSINode with `driver` set to the given values (upstream
 * installDriverToCSINode), or undefined when the object already says so.
 */
export function withDriver(
  drivers: readonly CSINodeDriver[],
  driver: string,
  nodeId: string,
  maxVolumes: number,
  topology: Record<string, string>,
): CSINodeDriver[] | undefined {
  const keys = Object.keys(topology).sort();
  const current = drivers.find((d) => d.name === driver);
  const sameKeys = (a: readonly string[] | null) => JSON.stringify([...(a ?? [])].sort()) === JSON.stringify(keys);
  if (current && current.nodeID === nodeId && sameKeys(current.topologyKeys)) return undefined;
  const entry: CSINodeDriver = { name: driver, nodeID: nodeId, topologyKeys: keys };
  if (maxVolumes > 0) entry.allocatable = { count: Math.min(maxVolumes, MAX_INT32) };
  return [...drivers.filter((d) => d.name !== driver), entry];
}

/** The node-ID annotation's map with `driver` set (or removed when nodeId is undefined); throws on an unreadable value. */
export function nodeIdMap(annotation: string | undefined, driver: string, nodeId: string | undefined): Record<string, string> {
  let map: Record<string, string> = {};
  if (annotation) {
    try {
      map = JSON.parse(annotation) as Record<string, string>;
    } catch (err) {
      throw new Error(
        `failed to parse node's "${NODE_ID_ANNOTATION}" annotation value (${JSON.stringify(annotation)}) err=${errorMessage(err)}`,
        {
          cause: err,
        },
      );
    }
  }
  const out = { ...map };
  if (nodeId === undefined) delete out[driver];
  else out[driver] = nodeId;
  return out;
}

type Client = Pick<RestClient, 'get' | 'create' | 'replace' | 'patch'>;

export class ApiNodeInfoManager implements NodeInfoManager {
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: Client,
    private readonly nodeName: string,
  ) {}

  installDriver(driver: string, nodeId: string, maxVolumes: number, topology: Record<string, string>): Promise<void> {
    if (nodeId === '') return Promise.reject(new Error('error adding CSI driver node info: driverNodeID must not be empty'));
    return this.serial(async () => {
      try {
        await this.updateNode(driver, nodeId, topology);
      } catch (err) {
        throw new Error(`error updating Node object with CSI driver node info: ${errorMessage(err)}`, { cause: err });
      }
      try {
        await this.updateCSINode((drivers) => withDriver(drivers, driver, nodeId, maxVolumes, topology));
      } catch (err) {
        throw new Error(`error updating CSINode object with CSI driver node info: ${errorMessage(err)}`, { cause: err });
      }
    });
  }

  uninstallDriver(driver: string): Promise<void> {
    return this.serial(async () => {
      await this.updateCSINode((drivers) =>
        drivers.some((d) => d.name === driver) ? drivers.filter((d) => d.name !== driver) : undefined,
      );
      await this.updateNode(driver, undefined, {});
    });
  }

  private serial(fn: () => Promise<void>): Promise<void> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private nodePath(): string {
    return `/api/v1/nodes/${encodeURIComponent(this.nodeName)}`;
  }

  /** The node-ID annotation and topology labels (a merge patch guarded by the read resourceVersion). */
  private async updateNode(driver: string, nodeId: string | undefined, topology: Record<string, string>): Promise<void> {
    const node = await this.client.get<NodeMeta>(this.nodePath());
    const annotations = node.metadata.annotations ?? {};
    const map = nodeIdMap(annotations[NODE_ID_ANNOTATION], driver, nodeId);
    const value = Object.keys(map).length > 0 ? JSON.stringify(map) : null;
    const labels = node.metadata.labels ?? {};
    for (const [k, v] of Object.entries(topology)) {
      if (labels[k] !== undefined && labels[k] !== v) {
        throw new Error(`topology label ${k} of driver ${driver} is ${JSON.stringify(v)}, but the node has ${JSON.stringify(labels[k])}`);
      }
    }
    const newLabels = Object.fromEntries(Object.entries(topology).filter(([k]) => labels[k] === undefined));
    if ((annotations[NODE_ID_ANNOTATION] ?? null) === value && Object.keys(newLabels).length === 0) return;
    const patch = {
      metadata: { annotations: { [NODE_ID_ANNOTATION]: value }, ...(Object.keys(newLabels).length > 0 && { labels: newLabels }) },
    };
    await this.client.patch(this.nodePath(), patch, 'merge');
  }

  private async updateCSINode(change: (drivers: CSINodeDriver[]) => CSINodeDriver[] | undefined): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const current = await this.getOrCreate();
        const drivers = change(current.spec.drivers ?? []);
        if (!drivers) return;
        await this.client.replace(`${CSINODES}/${encodeURIComponent(this.nodeName)}`, { ...current, spec: { ...current.spec, drivers } });
        return;
      } catch (err) {
        if (!isConflict(err) || attempt >= ATTEMPTS) throw err;
      }
    }
  }

  /** upstream CreateCSINode when the object does not exist yet. */
  private async getOrCreate(): Promise<CSINode> {
    try {
      return await this.client.get<CSINode>(`${CSINODES}/${encodeURIComponent(this.nodeName)}`);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const node = await this.client.get<NodeMeta>(this.nodePath());
    const body: CSINode = {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSINode',
      metadata: {
        name: this.nodeName,
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node.metadata.name, uid: node.metadata.uid }],
      },
      spec: { drivers: [] },
    };
    return this.client.create<CSINode>(CSINODES, body);
  }
}
