#!/usr/bin/env node
// Build a tiny OCI image layout tarball (single uncompressed layer) from a
// static busybox binary, ready for `ctr -n k8s.io images import`.
//
// Usage:
//   node scripts/build-oci-image.mjs --kind pause|busybox --ref REF --out FILE.tar
//        [--busybox /bin/busybox]
//   node scripts/build-oci-image.mjs --kind dir --rootfs DIR --config CONFIG.json --ref REF --out FILE.tar
//        (the image's files are DIR's: regular files, directories and symlinks with
//        their modes, setuid bits included, owned by root; CONFIG.json is the OCI
//        image config's `config` object: Entrypoint, Cmd, Env, User, WorkingDir)
//
// Only node: built-ins. The tar writer is our own (ustar), and every timestamp
// is 0, so the output is byte-for-byte deterministic for a given busybox.
// Prints the manifest digest (sha256:...) on stdout.

import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync, readlinkSync, writeFileSync, renameSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: opts } = parseArgs({
  options: {
    kind: { type: 'string' },
    ref: { type: 'string' },
    out: { type: 'string' },
    busybox: { type: 'string', default: '/bin/busybox' },
    rootfs: { type: 'string' },
    config: { type: 'string' },
  },
});

function die(msg) {
  process.stderr.write(`build-oci-image: ${msg}\n`);
  process.exit(2);
}

if (!opts.kind || !['pause', 'busybox', 'dir'].includes(opts.kind)) die('--kind must be pause, busybox or dir');
if (opts.kind === 'dir' && (!opts.rootfs || !opts.config)) die('--kind dir needs --rootfs DIR and --config FILE.json');
if (!opts.ref) die('--ref is required (e.g. docker.io/kubelet-ts/busybox:1.0)');
if (!opts.out) die('--out is required');

const ARCH_MAP = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };
const arch = ARCH_MAP[process.arch] ?? die(`unsupported process.arch ${process.arch}`);

const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

// ---------------------------------------------------------------- tar writer
const BLOCK = 512;

function octal(n, width) {
  // width includes the trailing NUL
  const s = n.toString(8);
  if (s.length > width - 1) throw new Error(`tar: value ${n} too large for field of ${width}`);
  return s.padStart(width - 1, '0') + '\0';
}

function splitName(name) {
  const b = Buffer.byteLength(name);
  if (b <= 100) return { name, prefix: '' };
  // ustar: split at a '/' so that prefix <= 155 and name <= 100
  for (let i = name.length - 1; i > 0; i--) {
    if (name[i] !== '/') continue;
    const prefix = name.slice(0, i);
    const rest = name.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100 && rest.length > 0) {
      return { name: rest, prefix };
    }
  }
  throw new Error(`tar: path too long: ${name}`);
}

/**
 * @param {{name:string,type:'file'|'dir'|'symlink',mode:number,data?:Buffer,linkname?:string}} e
 */
function tarHeader(e) {
  const h = Buffer.alloc(BLOCK, 0);
  const { name, prefix } = splitName(e.name);
  const size = e.type === 'file' ? e.data.length : 0;
  const typeflag = e.type === 'file' ? '0' : e.type === 'dir' ? '5' : '2';
  h.write(name, 0, 100, 'utf8');
  h.write(octal(e.mode & 0o7777, 8), 100, 8, 'ascii');
  h.write(octal(0, 8), 108, 8, 'ascii'); // uid
  h.write(octal(0, 8), 116, 8, 'ascii'); // gid
  h.write(octal(size, 12), 124, 12, 'ascii');
  h.write(octal(0, 12), 136, 12, 'ascii'); // mtime
  h.write('        ', 148, 8, 'ascii'); // checksum placeholder
  h.write(typeflag, 156, 1, 'ascii');
  if (e.linkname) {
    if (Buffer.byteLength(e.linkname) > 100) throw new Error(`tar: link target too long: ${e.linkname}`);
    h.write(e.linkname, 157, 100, 'utf8');
  }
  h.write('ustar\0', 257, 6, 'ascii');
  h.write('00', 263, 2, 'ascii');
  h.write('root', 265, 32, 'ascii'); // uname
  h.write('root', 297, 32, 'ascii'); // gname
  h.write(octal(0, 8), 329, 8, 'ascii'); // devmajor
  h.write(octal(0, 8), 337, 8, 'ascii'); // devminor
  if (prefix) h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += h[i];
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'ascii');
  return h;
}

function buildTar(entries) {
  const parts = [];
  for (const e of entries) {
    parts.push(tarHeader(e));
    if (e.type === 'file') {
      parts.push(e.data);
      const pad = (BLOCK - (e.data.length % BLOCK)) % BLOCK;
      if (pad) parts.push(Buffer.alloc(pad, 0));
    }
  }
  parts.push(Buffer.alloc(BLOCK * 2, 0));
  return Buffer.concat(parts);
}

// ---------------------------------------------------------------- rootfs
const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');

const dir = (name, mode = 0o755) => ({ name: name.endsWith('/') ? name : `${name}/`, type: 'dir', mode });
const file = (name, data, mode = 0o644) => ({ name, type: 'file', mode, data: Buffer.isBuffer(data) ? data : Buffer.from(data) });
const link = (name, linkname) => ({ name, type: 'symlink', mode: 0o777, linkname });

/** Every entry under `root`, as tar entries named relative to it. */
function treeEntries(root, rel = '') {
  const out = [];
  for (const name of readdirSync(join(root, rel))) {
    const path = rel ? `${rel}/${name}` : name;
    const st = lstatSync(join(root, path));
    if (st.isSymbolicLink()) out.push(link(path, readlinkSync(join(root, path))));
    else if (st.isDirectory()) out.push(dir(path, st.mode & 0o7777), ...treeEntries(root, path));
    else if (st.isFile()) out.push(file(path, readFileSync(join(root, path)), st.mode & 0o7777));
    else die(`${join(root, path)}: only regular files, directories and symlinks can go in an image`);
  }
  return out;
}

let entries;
let config;
if (opts.kind === 'dir') {
  entries = treeEntries(opts.rootfs);
  try {
    config = JSON.parse(readFileSync(opts.config, 'utf8'));
  } catch (err) {
    die(`--config ${opts.config}: ${err.message}`);
  }
} else {
  entries = busyboxEntries();
}

function busyboxEntries() {
  let busybox;
  try {
    busybox = readFileSync(opts.busybox);
  } catch (err) {
    die(`cannot read ${opts.busybox}: ${err.message} (install busybox-static)`);
  }
  return [
    dir('bin'),
    file('bin/busybox', busybox, 0o755),
    dir('dev'),
    dir('etc'),
    file('etc/passwd', 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n'),
    file('etc/group', 'root:x:0:\nnobody:x:65534:\n'),
    dir('proc'),
    dir('root', 0o700),
    dir('sys'),
    dir('tmp', 0o1777),
  ];
}

if (opts.kind === 'busybox') {
  let applets;
  try {
    applets = execFileSync(opts.busybox, ['--list'], { encoding: 'utf8' })
      .split('\n')
      .map((s) => s.trim())
      .filter((s) => s && s !== 'busybox' && /^[A-Za-z0-9._\-[\]]+$/.test(s));
  } catch (err) {
    die(`${opts.busybox} --list failed: ${err.message}`);
  }
  for (const a of [...new Set(applets)].sort()) entries.push(link(`bin/${a}`, 'busybox'));
  entries.push(dir('usr'), dir('usr/bin'), link('usr/bin/env', '../../bin/busybox'), dir('var'));
  config = { Env: [PATH_ENV], Cmd: ['sh'], WorkingDir: '/' };
} else if (opts.kind === 'pause') {
  entries.push(link('bin/sh', 'busybox'), link('bin/sleep', 'busybox'));
  // PID 1 gets no default signal handlers: trap TERM/INT so StopPodSandbox is prompt.
  config = {
    Env: [PATH_ENV],
    Entrypoint: ['/bin/busybox', 'sh', '-c', 'trap "exit 0" TERM INT; while :; do /bin/busybox sleep 3600 & wait; done'],
    WorkingDir: '/',
  };
}

// Sort by path so output is deterministic; parents sort before children.
entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
const layer = buildTar(entries);
const layerDigest = `sha256:${sha256(layer)}`;

// ---------------------------------------------------------------- OCI layout
const EPOCH = '1970-01-01T00:00:00Z';
const imageConfig = {
  created: EPOCH,
  architecture: arch,
  os: 'linux',
  config,
  rootfs: { type: 'layers', diff_ids: [layerDigest] },
  history: [{ created: EPOCH, created_by: `kubelet-ts scripts/build-oci-image.mjs --kind ${opts.kind}` }],
};
const configBuf = Buffer.from(JSON.stringify(imageConfig));
const configDigest = `sha256:${sha256(configBuf)}`;

const manifest = {
  schemaVersion: 2,
  mediaType: 'application/vnd.oci.image.manifest.v1+json',
  config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: configDigest, size: configBuf.length },
  layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: layerDigest, size: layer.length }],
};
const manifestBuf = Buffer.from(JSON.stringify(manifest));
const manifestDigest = `sha256:${sha256(manifestBuf)}`;

const colon = opts.ref.lastIndexOf(':');
const tag = colon > opts.ref.lastIndexOf('/') ? opts.ref.slice(colon + 1) : 'latest';

const index = {
  schemaVersion: 2,
  mediaType: 'application/vnd.oci.image.index.v1+json',
  manifests: [
    {
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      digest: manifestDigest,
      size: manifestBuf.length,
      annotations: {
        'io.containerd.image.name': opts.ref,
        'org.opencontainers.image.ref.name': tag,
      },
      platform: { architecture: arch, os: 'linux' },
    },
  ],
};

const blob = (digest, data) => file(`blobs/sha256/${digest.slice('sha256:'.length)}`, data);
const outer = buildTar([
  file('oci-layout', JSON.stringify({ imageLayoutVersion: '1.0.0' })),
  file('index.json', JSON.stringify(index)),
  dir('blobs'),
  dir('blobs/sha256'),
  blob(configDigest, configBuf),
  blob(manifestDigest, manifestBuf),
  blob(layerDigest, layer),
]);

mkdirSync(dirname(opts.out), { recursive: true });
const tmp = `${opts.out}.tmp-${process.pid}`;
writeFileSync(tmp, outer);
renameSync(tmp, opts.out);
process.stdout.write(`${manifestDigest}\n`);
