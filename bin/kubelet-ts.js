#!/usr/bin/env node
import { main } from '../dist/main/cli.js';

process.exitCode = await main(process.argv.slice(2), {
  run: async ({ config, sources }, logger) => (await import('../dist/main/run-agent.js')).runAgent(config, logger, sources),
});
