#!/usr/bin/env -S node --max-semi-space-size=1
// The flag caps the main thread's young generation at 1 MiB semi-spaces (V8 grows it to 16 MiB during a
// pod spawn burst and keeps much of it resident: `npm run bench -- memory` shows ~25 MiB less RSS at 250
// pods). Worker threads get the same cap from src/workers/worker-limits.ts. Run this file directly (as the
// installed `kubelet-ts` command does) so the flag applies; test/e2e/agent-harness.ts reads it from here.
import { main } from '../dist/main/cli.js';

process.exitCode = await main(process.argv.slice(2), {
  run: async ({ config, sources }, logger) => (await import('../dist/main/run-agent.js')).runAgent(config, logger, sources),
});
