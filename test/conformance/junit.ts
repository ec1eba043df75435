/**
 * The JUnit files ginkgo writes (one per parallel node, junit_NN.xml) read
 * into one result per test, and the summary the conformance runner prints.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOMParser } from 'linkedom';

export type Outcome = 'passed' | 'failed' | 'skipped';

export interface TestResult {
  name: string;
  outcome: Outcome;
  seconds: number;
  /** For a failure: its message's first line. */
  reason?: string;
}

interface XmlElement {
  getAttribute(name: string): string | null;
  getElementsByTagName(name: string): ArrayLike<XmlElement>;
  textContent: string | null;
}

/** The first line of a failure that says something: not a source location, not a bare 'Unexpected error:'. */
export function firstReason(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(
      (l) =>
        l !== '' &&
        !/^\/\S+:\d+$/.test(l) &&
        !/^[A-Z][a-z]{2} +\d+ [\d:.]+: Unexpected error:$/.test(l) &&
        !/^<[^>]+>: \{$/.test(l) &&
        l !== 'occurred',
    );
  const line = (lines[0] ?? '').replace(/^[A-Z][a-z]{2} +\d+ [\d:.]+: /, '').replace(/^s: /, '');
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

/** The test cases of one JUnit document. */
export function parseJunit(xml: string): TestResult[] {
  const doc = new DOMParser().parseFromString(xml, 'text/xml') as unknown as { getElementsByTagName(n: string): ArrayLike<XmlElement> };
  const out: TestResult[] = [];
  for (const tc of Array.from(doc.getElementsByTagName('testcase'))) {
    const name = tc.getAttribute('name') ?? '';
    const seconds = Number(tc.getAttribute('time') ?? '0');
    const failure = tc.getElementsByTagName('failure')[0] ?? tc.getElementsByTagName('error')[0];
    if (failure) {
      const text = `${failure.getAttribute('message') ?? ''}\n${failure.textContent ?? ''}`;
      out.push({ name, outcome: 'failed', seconds, reason: firstReason(text) });
    } else if (tc.getElementsByTagName('skipped').length > 0) {
      out.push({ name, outcome: 'skipped', seconds });
    } else {
      out.push({ name, outcome: 'passed', seconds });
    }
  }
  return out;
}

/**
 * Every junit_*.xml in `dir`, one result per test name. Ginkgo's parallel
 * nodes each list every spec, skipped where another node ran it: a test
 * counts with the outcome of the node that ran it.
 */
export function readJunitDir(dir: string): TestResult[] {
  const byName = new Map<string, TestResult>();
  const files = readdirSync(dir).filter((f) => /^junit.*\.xml$/.test(f));
  for (const f of files) {
    for (const r of parseJunit(readFileSync(join(dir, f), 'utf8'))) {
      const seen = byName.get(r.name);
      if (!seen || seen.outcome === 'skipped') byName.set(r.name, r);
    }
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

export function counts(results: readonly TestResult[]): Record<Outcome, number> {
  const c = { passed: 0, failed: 0, skipped: 0 };
  for (const r of results) c[r.outcome]++;
  return c;
}

/** A markdown summary: counts, each failure with its first line, then every test. */
export function summaryMarkdown(title: string, results: readonly TestResult[], extra: string[] = []): string {
  const c = counts(results);
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const lines = [
    `# ${title}`,
    '',
    ...extra,
    '',
    `**${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped** (of ${results.length} in the focus)`,
    '',
  ];
  const failed = results.filter((r) => r.outcome === 'failed');
  if (failed.length > 0) {
    lines.push('## Failures', '', '| test | first line |', '|---|---|');
    for (const r of failed) lines.push(`| ${esc(r.name)} | ${esc(r.reason ?? '')} |`);
    lines.push('');
  }
  lines.push('## Every test', '', '| test | result | s |', '|---|---|---|');
  for (const r of results) lines.push(`| ${esc(r.name)} | ${r.outcome} | ${r.seconds.toFixed(1)} |`);
  return `${lines.join('\n')}\n`;
}
