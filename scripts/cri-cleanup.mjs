#!/usr/bin/env node
// Remove every CRI pod sandbox (and, with it, its containers) from a CRI
// runtime, e.g. the harness containerd started by scripts/containerd.sh.
//
// Usage: node scripts/cri-cleanup.mjs [unix:///run/kubelet-ts-containerd/containerd.sock]
//        (default: $KTS_CRI_ENDPOINT, else the harness socket)
// Env:   KTS_CRI_CALL_TIMEOUT_MS  deadline per CRI call (default 60000)
//        KTS_CRI_CLEANUP_PARALLEL concurrent sandboxes (default 8)
//
// Exit code: 0 if everything was removed, 1 if some removal failed, 2 if the
// runtime could not be reached.

import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const require = createRequire(join(root, 'package.json'));
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const endpoint = process.argv[2] || process.env.KTS_CRI_ENDPOINT || 'unix:///run/kubelet-ts-containerd/containerd.sock';
const callTimeoutMs = Number(process.env.KTS_CRI_CALL_TIMEOUT_MS || 60_000);
const parallel = Math.max(1, Number(process.env.KTS_CRI_CLEANUP_PARALLEL || 8));

const def = protoLoader.loadSync(join(root, 'proto/runtime/v1/api.proto'), {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const pkg = grpc.loadPackageDefinition(def).runtime.v1;
const MiB16 = 16 * 1024 * 1024;
const client = new pkg.RuntimeService(endpoint, grpc.credentials.createInsecure(), {
  'grpc.max_receive_message_length': MiB16,
  'grpc.max_send_message_length': MiB16,
});

function call(method, req, timeoutMs = callTimeoutMs) {
  return new Promise((resolve, reject) => {
    client[method](req, { deadline: new Date(Date.now() + timeoutMs) }, (err, res) => {
      if (err) reject(err);
      else resolve(res);
    });
  });
}

const fmt = (err) => `${grpc.status[err.code] ?? err.code}: ${err.details || err.message}`;

async function removeSandbox(sb) {
  const id = sb.id;
  const name = sb.metadata ? `${sb.metadata.namespace}/${sb.metadata.name}` : '?';
  try {
    await call('StopPodSandbox', { pod_sandbox_id: id });
  } catch (err) {
    if (err.code !== grpc.status.NOT_FOUND) {
      process.stderr.write(`cri-cleanup: StopPodSandbox ${id.slice(0, 13)} (${name}): ${fmt(err)}\n`);
    }
  }
  try {
    await call('RemovePodSandbox', { pod_sandbox_id: id });
    return true;
  } catch (err) {
    if (err.code === grpc.status.NOT_FOUND) return true;
    process.stderr.write(`cri-cleanup: RemovePodSandbox ${id.slice(0, 13)} (${name}): ${fmt(err)}\n`);
    return false;
  }
}

async function removeOrphanContainers() {
  // Containers whose sandbox is already gone (should not happen, but be thorough).
  let res;
  try {
    res = await call('ListContainers', {});
  } catch {
    return 0;
  }
  let failed = 0;
  for (const c of res.containers ?? []) {
    try {
      await call('StopContainer', { container_id: c.id, timeout: 0 });
    } catch {
      /* ignore */
    }
    try {
      await call('RemoveContainer', { container_id: c.id });
    } catch (err) {
      if (err.code !== grpc.status.NOT_FOUND) {
        failed++;
        process.stderr.write(`cri-cleanup: RemoveContainer ${c.id.slice(0, 13)}: ${fmt(err)}\n`);
      }
    }
  }
  return failed;
}

async function main() {
  const t0 = Date.now();
  let list;
  try {
    list = await call('ListPodSandbox', {}, 15_000);
  } catch (err) {
    process.stderr.write(`cri-cleanup: cannot list pod sandboxes on ${endpoint}: ${fmt(err)}\n`);
    return 2;
  }
  const sandboxes = list.items ?? [];
  let ok = 0;
  let failed = 0;
  const queue = [...sandboxes];
  const workers = Array.from({ length: Math.min(parallel, queue.length) }, async () => {
    for (let sb = queue.shift(); sb; sb = queue.shift()) {
      if (await removeSandbox(sb)) ok++;
      else failed++;
    }
  });
  await Promise.all(workers);
  failed += await removeOrphanContainers();
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  process.stdout.write(`cri-cleanup: removed ${ok}/${sandboxes.length} pod sandboxes in ${secs}s on ${endpoint}\n`);
  return failed ? 1 : 0;
}

main()
  .then((code) => {
    client.close();
    process.exit(code);
  })
  .catch((err) => {
    process.stderr.write(`cri-cleanup: ${err.stack || err}\n`);
    process.exit(2);
  });
