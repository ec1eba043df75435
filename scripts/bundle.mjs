#!/usr/bin/env node
// The build's second step (package.json "build", after tsc): bundles the agent's entry points in dist/ in
// place, so a start loads a few files instead of ~650 modules. Node 20's module loader costs about 1 ms of
// main-thread CPU per module: importing dist/main/run-agent.js took ~800 ms unbundled and ~350 ms bundled,
// on every thread (the pool's workers and the long-lived threads load their own entries), at every start.
//
// - The main thread's entries (dist/main/cli.js and dist/main/run-agent.js, which bin/kubelet-ts.js imports
//   lazily) share their code through chunks written next to them (dist/main/chunk-*.js), so a module's state
//   exists once, as unbundled.
// - Each worker thread's entry is bundled on its own (a thread is its own isolate: nothing to share), and so
//   is the simulated runtime's (dist/sim/cli.js, its own process: `npm start` and the benchmarks start it).
// - Packages are bundled too, except piscina (it starts its own worker file from its package directory) and
//   @kubernetes/client-node (loaded only when an apiserver is configured; its code is most of a bundle).
// - `import.meta.url` in a module becomes that module's own dist/ URL, computed from the file it is bundled
//   into: code that finds files next to itself (worker entries, bin/kubelet-ts-sim.js, package.json) finds
//   what it found unbundled.
// - Every other file tsc wrote stays in dist/, unused by the entries (and the source maps of the bundles
//   chain to tsc's, so they point into src/).
//
//   node scripts/bundle.mjs
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');

const MAIN_ENTRIES = ['main/cli', 'main/run-agent'];
const STANDALONE_ENTRIES = [
  'sim/cli',
  'workers/worker-entry',
  'workers/prober/prober-thread-entry',
  'workers/container-events/events-worker',
];
const EXTERNAL = ['piscina', '@kubernetes/client-node'];

/** Rewrites `import.meta.url` in each dist/ module to that module's own URL, relative to the output file's directory. */
function ownUrl(outDir) {
  return {
    name: 'own-import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.js$/ }, async (args) => {
        if (!args.path.startsWith(dist + '/')) return undefined;
        const contents = await readFile(args.path, 'utf8');
        const own = `new URL(${JSON.stringify(relative(outDir, args.path))}, import.meta.url).href`;
        return { contents: contents.replaceAll('import.meta.url', own), loader: 'js', resolveDir: dirname(args.path) };
      });
    },
  };
}

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  external: EXTERNAL,
  // Bundled CommonJS packages call require() for Node's built-ins; an ES module has no require of its own.
  banner: { js: "import { createRequire as __ktsCreateRequire } from 'node:module'; const require = __ktsCreateRequire(import.meta.url);" },
  logLevel: 'warning',
  allowOverwrite: true,
  write: false,
};

/** Builds everything in memory first: the inputs are the files the outputs replace. */
async function main() {
  const results = [
    await esbuild.build({
      ...common,
      entryPoints: Object.fromEntries(MAIN_ENTRIES.map((e) => [e, join(dist, `${e}.js`)])),
      outdir: dist,
      splitting: true,
      chunkNames: 'main/chunk-[hash]',
      plugins: [ownUrl(join(dist, 'main'))],
    }),
  ];
  for (const e of STANDALONE_ENTRIES) {
    const entry = join(dist, `${e}.js`);
    results.push(await esbuild.build({ ...common, entryPoints: { [e]: entry }, outdir: dist, plugins: [ownUrl(dirname(entry))] }));
  }
  for (const name of await readdir(join(dist, 'main'))) {
    if (name.startsWith('chunk-')) await rm(join(dist, 'main', name));
  }
  let bytes = 0;
  for (const r of results) {
    for (const f of r.outputFiles) {
      await writeFile(f.path, f.contents);
      if (f.path.endsWith('.js')) bytes += f.contents.length;
    }
  }
  console.error(
    `bundle: ${MAIN_ENTRIES.length + STANDALONE_ENTRIES.length} entries in dist/, ${(bytes / 2 ** 20).toFixed(1)} MiB of JavaScript`,
  );
}

await main();
