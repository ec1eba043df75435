/**
 * The simulated image store. Images are seeded (defaults plus options and the
 * control interface); PullImage succeeds for refs that were ever seeded or that
 * match an "allowed" glob, and otherwise fails the way containerd does when the
 * registry is unreachable. Ids and digests are derived from the ref, so they
 * are stable across runs.
 */
import { createHash } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { CriError } from '../common/errors.js';
import type { Image } from '../gen/runtime/v1/api.js';
import type { ImageIdentity } from './store.js';

export const DEFAULT_IMAGES = ['docker.io/kubelet-ts/busybox:1.0', 'docker.io/kubelet-ts/pause:1.0'];

export interface SimImage extends ImageIdentity {
  readonly repoTags: string[];
  readonly repoDigests: string[];
  readonly size: bigint;
}

export class InvalidReferenceError extends CriError {}

/**
 * Normalizes like containerd's reference.ParseDockerRef: `busybox` →
 * `docker.io/library/busybox:latest`; a digest ref keeps its digest and loses
 * any tag. Throws InvalidReferenceError for a malformed ref.
 */
export function normalizeRef(ref: string): string {
  const invalid = (why: string) =>
    new InvalidReferenceError(`failed to parse image reference "${ref}": ${why}`, 'ImageService', status.UNKNOWN);
  if (ref === '' || /\s/.test(ref)) throw invalid('invalid reference format');
  let name = ref;
  let digest = '';
  const at = name.indexOf('@');
  if (at >= 0) {
    digest = name.slice(at + 1);
    name = name.slice(0, at);
    if (!/^sha256:[0-9a-f]{64}$/.test(digest)) throw invalid('invalid reference format');
  }
  let tag = '';
  const colon = name.lastIndexOf(':');
  if (colon > name.lastIndexOf('/')) {
    tag = name.slice(colon + 1);
    name = name.slice(0, colon);
    if (!/^[\w][\w.-]{0,127}$/.test(tag)) throw invalid('invalid reference format');
  }
  const slash = name.indexOf('/');
  const first = slash < 0 ? '' : name.slice(0, slash);
  let domain = 'docker.io';
  let path = name;
  if (slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost')) {
    domain = first === 'index.docker.io' ? 'docker.io' : first;
    path = name.slice(slash + 1);
  }
  if (path !== path.toLowerCase()) throw invalid('invalid reference format: repository name must be lowercase');
  if (!/^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/.test(path)) {
    throw invalid('invalid reference format');
  }
  if (domain === 'docker.io' && !path.includes('/')) path = `library/${path}`;
  const base = `${domain}/${path}`;
  if (digest) return `${base}@${digest}`;
  return `${base}:${tag || 'latest'}`;
}

function sha(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

function repoOf(normalized: string): string {
  const at = normalized.indexOf('@');
  if (at >= 0) return normalized.slice(0, at);
  return normalized.slice(0, normalized.lastIndexOf(':'));
}

function sizeFor(ref: string): bigint {
  if (ref.includes('pause')) return 311_482n;
  if (ref.includes('busybox')) return 2_231_050n;
  return BigInt(5_000_000 + (parseInt(sha(`size:${ref}`).slice(0, 8), 16) % 145_000_000));
}

export function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

const IMAGE_ID = /^(?:sha256:)?([0-9a-f]{64})$/;

export const SNAPSHOTTER_MOUNT = '/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs';

export class ImageStore {
  private readonly byId = new Map<string, SimImage>();
  private readonly byRef = new Map<string, SimImage>();
  /** Refs that were ever seeded: pullable again after removal. */
  private readonly known = new Set<string>();
  private allowed: { glob: string; re: RegExp }[] = [];
  /**
   * The mountpoint ImageFsInfo reports. A kubelet statfs()es it for the image
   * fs capacity and available bytes (image GC, eviction signals), so pointing
   * it at a small filesystem (a tmpfs) lets a test drive image GC. The
   * server sets it (default: its socket's directory).
   */
  fsMountpoint = SNAPSHOTTER_MOUNT;

  constructor(seed: readonly string[] = DEFAULT_IMAGES) {
    this.seed(seed);
  }

  seed(refs: readonly string[]): void {
    for (const r of refs) {
      const n = normalizeRef(r);
      this.known.add(n);
      this.add(n);
    }
  }

  /** Adds patterns (globs over the normalized ref or the ref as given) that PullImage accepts. */
  allow(patterns: readonly string[]): void {
    for (const glob of patterns) this.allowed.push({ glob, re: globToRegExp(glob) });
  }

  allowedPatterns(): string[] {
    return this.allowed.map((a) => a.glob);
  }

  /** By image id (`sha256:<hex>` or bare hex) or by any ref that normalizes to a stored tag or digest. */
  find(refOrId: string): SimImage | undefined {
    const m = IMAGE_ID.exec(refOrId);
    if (m) return this.byId.get(`sha256:${m[1]}`);
    return this.byRef.get(normalizeRef(refOrId));
  }

  list(): SimImage[] {
    return [...this.byId.values()];
  }

  get size(): number {
    return this.byId.size;
  }

  /** Removes the image (all its refs). Returns false when it was not present. */
  remove(refOrId: string): boolean {
    const img = this.find(refOrId);
    if (!img) return false;
    this.byId.delete(img.id);
    for (const r of img.repoTags) this.byRef.delete(r);
    for (const r of img.repoDigests) this.byRef.delete(r);
    return true;
  }

  /** Whether a pull of `ref` (as given) would succeed. */
  pullable(ref: string): boolean {
    const n = normalizeRef(ref);
    if (this.known.has(n) || this.byRef.has(n)) return true;
    return this.allowed.some((a) => a.re.test(n) || a.re.test(ref));
  }

  /** Stores the pulled image; call only when pullable(ref). */
  completePull(ref: string): SimImage {
    return this.add(normalizeRef(ref));
  }

  /** containerd's error for a pull whose registry cannot be resolved. */
  pullError(ref: string): CriError {
    const n = normalizeRef(ref);
    const repo = repoOf(n);
    const slash = repo.indexOf('/');
    const domain = repo.slice(0, slash);
    const path = repo.slice(slash + 1);
    const host = domain === 'docker.io' ? 'registry-1.docker.io' : domain;
    const at = n.indexOf('@');
    const reference = at >= 0 ? n.slice(at + 1) : n.slice(n.lastIndexOf(':') + 1);
    return new CriError(
      `failed to pull and unpack image "${n}": failed to resolve reference "${n}": failed to do request: ` +
        `Head "https://${host}/v2/${path}/manifests/${reference}": dial tcp: lookup ${host}: no such host`,
      'PullImage',
      status.UNKNOWN,
    );
  }

  usedBytes(): bigint {
    let total = 0n;
    for (const i of this.byId.values()) total += i.size;
    return total;
  }

  private add(normalized: string): SimImage {
    const existing = this.byRef.get(normalized);
    if (existing) return existing;
    const isDigest = normalized.includes('@');
    const repo = repoOf(normalized);
    const img: SimImage = {
      id: `sha256:${sha(`image:${normalized}`)}`,
      repoTag: isDigest ? '' : normalized,
      repoDigest: isDigest ? normalized : `${repo}@sha256:${sha(`manifest:${normalized}`)}`,
      repoTags: isDigest ? [] : [normalized],
      repoDigests: [isDigest ? normalized : `${repo}@sha256:${sha(`manifest:${normalized}`)}`],
      size: sizeFor(normalized),
    };
    this.byId.set(img.id, img);
    this.byRef.set(normalized, img);
    this.byRef.set(img.repoDigest, img);
    return img;
  }
}

export function toCriImage(img: SimImage): Image {
  return {
    id: img.id,
    repoTags: img.repoTags,
    repoDigests: img.repoDigests,
    size: img.size,
    uid: undefined,
    username: '',
    spec: undefined,
    pinned: img.repoTags.some((t) => t.includes('pause')),
  };
}
