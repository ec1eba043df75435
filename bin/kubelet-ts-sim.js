#!/usr/bin/env node
import { main } from '../dist/sim/cli.js';
await main(process.argv.slice(2));
