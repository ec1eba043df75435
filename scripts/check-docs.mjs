#!/usr/bin/env node
// Checks that every Markdown document in the repository stays inside it (part of `npm run lint`):
//  - no link to an absolute URL: Markdown links, <autolinks> and bare URLs in prose
//    (a URL inside a code span or block is quoted text, such as an error message, not a link);
//  - every relative link resolves to a file or directory that exists in the repository;
//  - no `../` path, even in code, that climbs out of the repository or names nothing in it
//    (`../shared/DESIGN.md` from docs/ is either).
// Exits 1 and lists each problem as FILE:LINE: message.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SKIP_DIRS = new Set(['node_modules', 'dist', '.run', '.git', 'coverage']);

function markdownFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) out.push(...markdownFiles(join(dir, e.name)));
    } else if (e.name.endsWith('.md')) out.push(join(dir, e.name));
  }
  return out;
}

const inside = (p) => p === root || p.startsWith(root + sep);

/** Blanks out fenced code blocks and inline code spans, keeping line numbers and columns. */
function prose(lines) {
  let fenced = false;
  return lines.map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line.replace(/`[^`]*`/g, (m) => ' '.repeat(m.length));
  });
}

const problems = [];
for (const file of markdownFiles(root)) {
  const rel = relative(root, file);
  const lines = readFileSync(file, 'utf8').split('\n');
  const text = prose(lines);
  const report = (i, message) => problems.push(`${rel}:${i + 1}: ${message}`);
  lines.forEach((raw, i) => {
    const line = text[i];
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
        report(i, `links outside the repository: ${target}`);
        continue;
      }
      const path = target.split('#')[0];
      if (path === '') continue;
      const abs = resolve(path.startsWith('/') ? root : dirname(file), path.replace(/^\//, ''));
      if (!inside(abs)) report(i, `links outside the repository: ${target}`);
      else if (!existsSync(abs)) report(i, `broken link: ${target}`);
    }
    const withoutLinks = line.replace(/\]\([^)]*\)/g, '');
    for (const m of withoutLinks.matchAll(/<?\b((?:https?|ftp):\/\/[^\s>)]+|www\.[^\s>)]+|mailto:[^\s>)]+)/gi)) {
      report(i, `links outside the repository: ${m[1]}`);
    }
    for (const m of raw.matchAll(/(?:^|[\s`'"(])((?:\.\.\/)+[\w.@-][\w./@-]*)/g)) {
      const abs = resolve(dirname(file), m[1]);
      if (!inside(abs)) report(i, `refers to a path outside the repository: ${m[1]}`);
      else if (!existsSync(abs)) report(i, `refers to a path that is not in the repository: ${m[1]}`);
    }
  });
}

if (problems.length > 0) {
  console.error(`check-docs: ${problems.length} problem(s):\n${problems.join('\n')}`);
  process.exit(1);
}
