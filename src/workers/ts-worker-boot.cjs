// Starts a worker thread on a TypeScript entry when kubelet-ts runs from source (tsx, vitest): the worker is
// launched on this CommonJS file with `--import tsx`, whose require hook then loads workerData.__entry.
// (A worker started directly on a .ts file, or on an eval'd import, does not get the loader in Node 20.)
require(require('node:worker_threads').workerData.__entry);
