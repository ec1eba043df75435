#!/usr/bin/env node
// The folder-level import graph of src/: which folder imports which, and the
// cycles: folders that import each other, directly or through others.
// `--depth N` groups files by their first N folders under src/ (default 1:
// api, common, main, pod, workers, ...); `--check` exits 1 when there is a
// cycle at that depth.
// `npm run lint` runs it with --depth 3 --check: no folder, down to three levels, imports one that imports it back.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');
const args = process.argv.slice(2);
const depth = Number(args[args.indexOf('--depth') + 1] || 1) || 1;
const check = args.includes('--check');

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* files(p);
    else if (p.endsWith('.ts')) yield p;
  }
}

/** The folder a file belongs to at the chosen depth ('.' for files directly in src/). */
const folderOf = (file) => relative(SRC, dirname(file)).split(sep).filter(Boolean).slice(0, depth).join('/') || '.';

const edges = new Map();
for (const file of files(SRC)) {
  for (const m of readFileSync(file, 'utf8').matchAll(/(?:from|import\()\s*'(\.{1,2}\/[^']+)'/g)) {
    const target = normalize(join(dirname(file), m[1]));
    const [a, b] = [folderOf(file), folderOf(target)];
    if (a !== b) edges.set(`${a} -> ${b}`, (edges.get(`${a} -> ${b}`) ?? 0) + 1);
  }
}
// Cycles: the strongly connected components of more than one folder (Tarjan).
const next = new Map();
for (const e of edges.keys()) {
  const [a, b] = e.split(' -> ');
  next.set(a, [...(next.get(a) ?? []), b]);
  if (!next.has(b)) next.set(b, []);
}
const index = new Map();
const low = new Map();
const stack = [];
const cycles = [];
let counter = 0;
const visit = (v) => {
  index.set(v, counter);
  low.set(v, counter++);
  stack.push(v);
  for (const w of next.get(v)) {
    if (!index.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (stack.includes(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) !== index.get(v)) return;
  const component = [];
  let w;
  do component.push((w = stack.pop()));
  while (w !== v);
  if (component.length > 1) cycles.push(component.sort());
};
for (const v of next.keys()) if (!index.has(v)) visit(v);

if (!check) for (const [e, n] of [...edges].sort()) console.log(`${e} (${n})`);
if (cycles.length > 0) {
  console.error(`folders of src/ (depth ${depth}) in an import cycle:\n  ${cycles.map((c) => c.join(', ')).join('\n  ')}`);
  if (check) process.exit(1);
} else if (check) {
  console.log(`import-graph: no import cycle between the folders of src/ at depth ${depth}`);
}
