/**
 * Registry credentials from a pod's imagePullSecrets (upstream
 * pkg/credentialprovider: BasicDockerKeyring, ReadDockerConfigJSONFile,
 * URLsMatch). A `kubernetes.io/dockerconfigjson` secret holds
 * `{"auths": {"<registry>": {...}}}`, a `kubernetes.io/dockercfg` one the
 * bare map. Each registry key is normalised as upstream does (scheme dropped,
 * `/v1/` and `/v2/` prefixes ignored), the keys are tried most specific first
 * (reverse lexical order), and a key matches an image when its host (with `*`
 * wildcards per label), port and path prefix match. Docker Hub images fall back
 * to the credentials of index.docker.io.
 */
import type { RegistryAuth } from '../../pod/sync-types.js';

export const DEFAULT_REGISTRY_HOST = 'index.docker.io';

interface DockerConfigEntry {
  username?: string;
  password?: string;
  auth?: string;
  email?: string;
  identitytoken?: string;
  registrytoken?: string;
}

/**
 * One credential for CRI PullImage. Like upstream's keyring entries for
 * docker config secrets it carries no serverAddress (containerd then uses it
 * for the host the image names; a serverAddress without a scheme would not match).
 */
function toAuth(e: DockerConfigEntry): RegistryAuth {
  let username = e.username ?? '';
  let password = e.password ?? '';
  if (e.auth && !username) {
    // "user:password", base64 (upstream decodeDockerConfigFieldAuth).
    const decoded = Buffer.from(e.auth, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) {
      username = decoded.slice(0, colon);
      password = decoded.slice(colon + 1);
    }
  }
  const out: RegistryAuth = {};
  if (username) out.username = username;
  if (password) out.password = password;
  if (e.identitytoken) out.identityToken = e.identitytoken;
  if (e.registrytoken) out.registryToken = e.registrytoken;
  return out;
}

/**
 * The docker config entries of one pull secret (upstream MakeDockerKeyring): a
 * `kubernetes.io/dockerconfigjson` secret's `.dockerconfigjson` `auths`, or a
 * `kubernetes.io/dockercfg` secret's `.dockercfg` map; data values are base64 as
 * in the Secret. Undefined for any other secret. Throws on malformed JSON.
 */
export function dockerConfigOf(type: string | undefined, data: Record<string, string>): Record<string, DockerConfigEntry> | undefined {
  const json = data['.dockerconfigjson'];
  if (type === 'kubernetes.io/dockerconfigjson' && json) {
    const parsed = JSON.parse(Buffer.from(json, 'base64').toString('utf8')) as { auths?: Record<string, DockerConfigEntry> };
    return parsed.auths ?? {};
  }
  const cfg = data['.dockercfg'];
  if (type === 'kubernetes.io/dockercfg' && cfg)
    return JSON.parse(Buffer.from(cfg, 'base64').toString('utf8')) as Record<string, DockerConfigEntry>;
  return undefined;
}

interface ParsedUrl {
  host: string;
  port: string;
  path: string;
}

function parse(s: string): ParsedUrl | undefined {
  const withScheme = /^https?:\/\//.test(s) ? s : `https://${s}`;
  try {
    const u = new URL(withScheme);
    return { host: u.hostname, port: u.port, path: decodeURIComponent(u.pathname) };
  } catch {
    return undefined;
  }
}

/** The keyring key for a registry as upstream BasicDockerKeyring.Add derives it. */
export function keyringKey(registry: string): string | undefined {
  const u = parse(registry);
  if (!u) return undefined;
  let path = u.path;
  if (path.startsWith('/v2/') || path.startsWith('/v1/')) path = path.slice(3);
  const host = u.port ? `${u.host}:${u.port}` : u.host;
  return path.length > 0 && path !== '/' ? `${host}${path}` : host;
}

/** path.Match of one host label against a pattern label with `*` wildcards. */
function labelMatch(pattern: string, label: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^.]*')}$`);
  return re.test(label);
}

/** Upstream URLsMatchStr(glob, target): hosts match label by label, ports equal, the glob's path is a prefix. */
export function urlsMatch(glob: string, target: string): boolean {
  const g = parse(glob);
  const t = parse(target);
  if (!g || !t) return false;
  const gl = g.host.split('.');
  const tl = t.host.split('.');
  if (gl.length !== tl.length || !gl.every((p, i) => labelMatch(p, tl[i]))) return false;
  if (g.port !== t.port) return false;
  return t.path.startsWith(g.path);
}

/** An image that pulls from Docker Hub (upstream isDefaultRegistryMatch). */
export function isDefaultRegistryMatch(image: string): boolean {
  const slash = image.indexOf('/');
  if (slash === 0) return false;
  if (slash < 0) return true;
  const first = image.slice(0, slash);
  if (first === 'docker.io' || first === 'index.docker.io') return true;
  return !first.includes('.') && !first.includes(':');
}

export class DockerKeyring {
  private readonly creds = new Map<string, RegistryAuth[]>();
  private index: string[] = [];

  /** Adds every registry of one docker config (secret order is kept within a key). */
  add(config: Record<string, DockerConfigEntry>): void {
    for (const [registry, entry] of Object.entries(config)) {
      const key = keyringKey(registry);
      if (!key) continue;
      const list = this.creds.get(key) ?? [];
      list.push(toAuth(entry));
      this.creds.set(key, list);
    }
    this.index = [...this.creds.keys()].sort().reverse();
  }

  /** Credentials for `image`, most specific registry first; [] when none match. */
  lookup(image: string): RegistryAuth[] {
    const out: RegistryAuth[] = [];
    for (const key of this.index) if (urlsMatch(key, image)) out.push(...this.creds.get(key)!);
    if (out.length > 0) return out;
    if (isDefaultRegistryMatch(image)) return this.creds.get(DEFAULT_REGISTRY_HOST) ?? [];
    return [];
  }
}
