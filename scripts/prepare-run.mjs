#!/usr/bin/env node
// The step before `npm start` and `npm test` (package.json), with no dependency but Node's built-ins, so it
// runs on a fresh clone: `npm ci` when node_modules is missing or does not match package-lock.json, then the
// build (`npm run build`: tsc, then scripts/bundle.mjs), announced, unless dist/ is newer than every input of the last build
// this script saw succeed (dist/.build-ok). Exits with the failing command's code.
//
//   node scripts/prepare-run.mjs            install if needed, build if needed
//   node scripts/prepare-run.mjs --check    print what it would do, change nothing (exit 0)
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = join(root, 'dist', '.build-ok');
const BUILD_INPUTS = ['src', 'scripts/bundle.mjs', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
const say = (text) => process.stderr.write(`kubelet-ts: ${text}\n`);

const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));

/** Whether a lockfile entry can be installed here (its os/cpu lists, when it has them, name this platform). */
function forThisPlatform(entry) {
  const fits = (list, value) => !Array.isArray(list) || list.some((x) => x === value || (x.startsWith('!') ? x.slice(1) !== value : false));
  return fits(entry.os, process.platform) && fits(entry.cpu, process.arch);
}

/** Why node_modules must be (re)installed, or undefined when it matches package-lock.json. */
function installReason(dir = root) {
  if (!existsSync(join(dir, 'node_modules'))) return 'node_modules is missing';
  let installed;
  try {
    installed = readJson(join(dir, 'node_modules', '.package-lock.json')).packages ?? {};
  } catch {
    return 'node_modules has no record of an npm install (node_modules/.package-lock.json)';
  }
  const wanted = readJson(join(dir, 'package-lock.json')).packages ?? {};
  for (const [path, entry] of Object.entries(wanted)) {
    if (path === '' || entry.link || entry.optional || !forThisPlatform(entry)) continue;
    const got = installed[path];
    if (!got) return `${path.replace(/^node_modules\//, '')} is not installed`;
    if (got.version !== entry.version) {
      return `${path.replace(/^node_modules\//, '')} is ${got.version}, package-lock.json wants ${entry.version}`;
    }
  }
  return undefined;
}

/** The newest modification time (ms) of the files under the given paths. */
function newestMtime(paths) {
  let newest = 0;
  const visit = (p) => {
    let st;
    try {
      st = statSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) for (const name of readdirSync(p)) visit(join(p, name));
    else newest = Math.max(newest, st.mtimeMs);
  };
  for (const p of paths) visit(join(root, p));
  return newest;
}

/** Why the build must run, or undefined when dist/ is from a successful build of the current inputs. */
function buildReason() {
  if (!existsSync(STAMP)) return 'no successful build recorded in dist/';
  return newestMtime(BUILD_INPUTS) > statSync(STAMP).mtimeMs ? 'sources changed since the last build' : undefined;
}

function run(command, args) {
  const r = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (r.error) throw r.error;
  if (r.status !== 0) process.exit(r.status ?? 1);
}

function main() {
  const check = process.argv.includes('--check');
  const install = installReason();
  if (check) {
    console.log(`install: ${install ?? 'no (node_modules matches package-lock.json)'}`);
    console.log(`build: ${install ? 'after the install' : (buildReason() ?? 'no (dist/ is up to date)')}`);
    return;
  }
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  if (install) {
    say(`installing dependencies with npm ci (${install}); about a minute…`);
    const t0 = Date.now();
    // npm ci runs the package's `prepare` script, which builds dist/: a successful install is a build.
    run(npm, ['ci', '--no-audit', '--no-fund']);
    writeFileSync(STAMP, '');
    say(`installed and built in ${Math.round((Date.now() - t0) / 1000)} s`);
    return;
  }
  const build = buildReason();
  if (!build) return;
  say(`building… (${build})`);
  const t0 = Date.now();
  run(npm, ['run', 'build', '--silent']);
  writeFileSync(STAMP, '');
  say(`built in ${Math.round((Date.now() - t0) / 1000)} s`);
}

main();
