#!/usr/bin/env -S npx tsx
// Writes the upstream settings tables of docs/configuration.md from the settings catalog
// (src/main/config/settings-catalog.ts). With --check (part of `npm run lint`), only checks
// that the document is up to date and exits 1 if not.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withSettingsTables } from '../src/main/config/settings-table.js';

const file = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
const doc = readFileSync(file, 'utf8');
const next = withSettingsTables(doc);
if (process.argv.includes('--check')) {
  if (next !== doc) {
    console.error('docs/configuration.md is out of date with the settings catalog: run `npm run docs:config`');
    process.exit(1);
  }
} else if (next !== doc) {
  writeFileSync(file, next);
  console.log('docs/configuration.md: settings tables updated');
}
