#!/usr/bin/env -S MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=8388608 node --max-semi-space-size=1 --no-sparkplug --heap-growing-percent=50
// --max-semi-space-size=1 caps the main thread's young generation at 1 MiB semi-spaces (V8 grows it to 16 MiB during a
// pod spawn burst and keeps much of it resident: `npm run bench -- memory` shows ~25 MiB less RSS at 250
// pods). Worker threads get the same cap from src/workers/worker-limits.ts; 1 MiB semi-spaces are V8's floor.
// --no-sparkplug (V8 flags are per process, so every thread): no baseline machine code next to the bytecode;
// hot functions are still optimised by TurboFan. 10 pods: RSS ~5 MiB lower (main heap code 7.1 -> 5.3 MiB,
// worker 4.4 -> 3.1 MiB); 1000 pods: no slower to start all pods (`npm run bench -- memory`).
// --heap-growing-percent=50: a full collection once the old generation is 1.5 x what survived the last one. With
// 1 MiB semi-spaces, short-lived objects of a busy moment reach the old generation, and V8's own growing factor
// (up to 4) let the main heap reach 118 MiB over 35 MiB live in a 500-pod soak, RSS +39 % over its level
// (docs/reliability.md "Soak"); with the flag the soak held at +6 %.
// The two glibc malloc settings: at most two malloc arenas, and a fixed mmap threshold (glibc otherwise raises
// it, and its trim threshold, after the first large buffer is freed, so later ones fragment the arenas; fixed,
// the trim threshold stays at 128 KiB). At 8 MiB, a CRI list answer of a large node (~650 KB for 1000
// containers) comes from an arena instead of a fresh mmap faulted in page by page: 1000 simulated pods,
// relist p99 118 -> 78 ms and CPU ~12 % lower; RSS +2-4 MiB at 10 and 250 pods (docs/architecture.md
// "Memory"). Other C libraries ignore them.
// Run this file directly (as the installed `kubelet-ts` command does) so all five apply;
// test/e2e/agent-harness.ts reads them from here.
import { main } from '../dist/main/cli.js';

process.exitCode = await main(process.argv.slice(2), {
  run: async ({ config, sources }, logger) => (await import('../dist/main/run-agent.js')).runAgent(config, logger, sources),
});
