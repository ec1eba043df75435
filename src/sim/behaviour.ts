/**
 * What a simulated process does, decided from its argv alone (pure; no clock,
 * no I/O). The same small shell serves containers (behaviour.ts) and ExecSync
 * (exec.ts); they differ only in what an unmodelled command means.
 *
 * The rule (docs/sim.md has the table):
 *  - argv is `command ++ args`; `sh|bash|ash|dash -c SCRIPT` runs SCRIPT, any
 *    other argv is one simple command.
 *  - SCRIPT is simple commands joined by `;`, newline, `&&`, `||` (with the
 *    shell's precedence: `&&`/`||` bind tighter than `;`), quotes '…' "…".
 *  - commands: `echo [-n] WORDS` (stdout), `sleep N[smhd]` (`infinity` never
 *    ends), `exit [K]`, `true`, `:`, `false`, `exec CMD…`, nested `sh -c`.
 *  - the process exits with the status of its last command, or K at `exit K`.
 *  - any other command (and any script using `|`, `&`, `$(`, `if`, `while`…)
 *    is a long-running program: the process runs until it is stopped.
 */

export type Stream = 'stdout' | 'stderr';

/** Output produced `atMs` after the process started. `text` ends with '\n' unless `echo -n`. */
export interface OutputChunk {
  atMs: number;
  stream: Stream;
  text: string;
}

/** A process's whole life: its output and, unless it runs until stopped, its exit. */
export interface Plan {
  output: OutputChunk[];
  /** undefined: the process runs until it is stopped or killed. */
  exit?: { atMs: number; code: number };
}

/** What one command did. `terminal` ends the whole script. */
export interface Outcome {
  status: number;
  output: OutputChunk[];
  durationMs: number;
  terminal?: 'exit' | 'forever';
}

export interface ShellEnv {
  /** Extra commands (e.g. exec's `cat`); return undefined to fall through. */
  extra?(name: string, args: string[]): Outcome | undefined;
  /** What a command the simulator does not model does. */
  unknown(name: string, argv: string[], inShell: boolean): Outcome;
  /** What a script that cannot be parsed or uses unsupported syntax does. */
  unsupported(script: string, reason: string): Outcome;
}

export type Op = '&&' | '||';
/** Commands joined by && / ||. */
export interface AndOrList {
  first: string[];
  rest: { op: Op; argv: string[] }[];
}
export type Script = AndOrList[];

const SHELLS = new Set(['sh', 'bash', 'ash', 'dash']);

export function basename(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? p : p.slice(i + 1);
}

export class ScriptSyntaxError extends Error {}

type Token = { word: string } | { op: Op | ';' };

/** Splits a script into words and operators. Throws ScriptSyntaxError for syntax the shell does not model. */
export function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  let word: string | undefined;
  const flush = () => {
    if (word !== undefined) out.push({ word });
    word = undefined;
  };
  while (i < src.length) {
    const c = src[i];
    if (c === ' ' || c === '\t') {
      flush();
      i++;
    } else if (c === ';' || c === '\n') {
      flush();
      out.push({ op: ';' });
      i++;
    } else if (src.startsWith('&&', i) || src.startsWith('||', i)) {
      flush();
      out.push({ op: src.slice(i, i + 2) as Op });
      i += 2;
    } else if (c === '|' || c === '&' || c === '<' || c === '>' || c === '(' || c === ')' || c === '`') {
      throw new ScriptSyntaxError(`unsupported shell syntax '${c}'`);
    } else if (c === '$' && (src[i + 1] === '(' || src[i + 1] === '{')) {
      throw new ScriptSyntaxError('unsupported shell syntax: expansion');
    } else if (c === "'") {
      const end = src.indexOf("'", i + 1);
      if (end < 0) throw new ScriptSyntaxError('unterminated quoted string');
      word = (word ?? '') + src.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      let j = i + 1;
      let s = '';
      for (; j < src.length && src[j] !== '"'; j++) {
        if (src[j] === '\\' && j + 1 < src.length && '"\\$`'.includes(src[j + 1])) s += src[++j];
        else s += src[j];
      }
      if (j >= src.length) throw new ScriptSyntaxError('unterminated quoted string');
      word = (word ?? '') + s;
      i = j + 1;
    } else if (c === '\\' && i + 1 < src.length) {
      word = (word ?? '') + src[i + 1];
      i += 2;
    } else if (c === '#' && word === undefined) {
      while (i < src.length && src[i] !== '\n') i++;
    } else {
      word = (word ?? '') + c;
      i++;
    }
  }
  flush();
  return out;
}

const KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'fi', 'while', 'until', 'for', 'do', 'done', 'case', 'esac', '{', '}', '!']);

export function parseScript(src: string): Script {
  const script: Script = [];
  let cur: AndOrList | undefined;
  let pendingOp: Op | undefined;
  let argv: string[] = [];
  const endCommand = () => {
    if (argv.length === 0) {
      if (pendingOp) throw new ScriptSyntaxError(`syntax error: unexpected end after '${pendingOp}'`);
      return;
    }
    if (KEYWORDS.has(argv[0])) throw new ScriptSyntaxError(`unsupported shell keyword '${argv[0]}'`);
    if (!cur) script.push((cur = { first: argv, rest: [] }));
    else cur.rest.push({ op: pendingOp!, argv });
    pendingOp = undefined;
    argv = [];
  };
  for (const t of tokenize(src)) {
    if ('word' in t) {
      argv.push(t.word);
    } else if (t.op === ';') {
      endCommand();
      cur = undefined;
    } else {
      if (argv.length === 0) throw new ScriptSyntaxError(`syntax error: unexpected '${t.op}'`);
      endCommand();
      pendingOp = t.op;
    }
  }
  endCommand();
  return script;
}

const SECONDS_PER: Record<string, number> = { '': 1, s: 1, m: 60, h: 3600, d: 86400 };

/** busybox sleep's argument: N, N.M, with an optional s/m/h/d suffix; 'infinity'. */
export function parseSleepMs(arg: string): number | undefined {
  if (arg === 'infinity' || arg === 'inf') return Infinity;
  const m = /^(\d+(?:\.\d*)?|\.\d+)([smhd]?)$/.exec(arg);
  if (!m) return undefined;
  return Math.round(Number(m[1]) * SECONDS_PER[m[2]] * 1000);
}

const done = (status: number, output: OutputChunk[] = [], durationMs = 0): Outcome => ({ status, output, durationMs });

/** Runs one simple command (already split into argv). */
function runCommand(argv: string[], env: ShellEnv, inShell: boolean, lastStatus: number): Outcome {
  const name = basename(argv[0]);
  const args = argv.slice(1);
  const isShellC = SHELLS.has(name) && args.length >= 2 && /^-[a-z]*c[a-z]*$/.test(args[0]);
  if (isShellC) {
    const plan = runScriptSource(args[1], env);
    if (!plan.exit) return { status: 0, output: plan.output, durationMs: 0, terminal: 'forever' };
    return done(plan.exit.code, plan.output, plan.exit.atMs);
  }
  switch (name) {
    case 'exec':
      if (args.length === 0) return done(0);
      {
        const o = runCommand(args, env, inShell, lastStatus);
        return o.terminal ? o : { ...o, terminal: 'exit' };
      }
    case 'true':
    case ':':
    case 'trap': // dispositions are read by sigtermDisposition(); the command itself succeeds
      return done(0);
    case 'false':
      return done(1);
    case 'echo': {
      const noNewline = args[0] === '-n';
      const words = args.filter((a, i) => !(i === 0 && (a === '-n' || a === '-e' || a === '-E')));
      return done(0, [{ atMs: 0, stream: 'stdout', text: words.join(' ') + (noNewline ? '' : '\n') }]);
    }
    case 'sleep': {
      if (args.length === 0) return done(1, [{ atMs: 0, stream: 'stderr', text: 'sleep: missing operand\n' }]);
      let total = 0;
      for (const a of args) {
        const ms = parseSleepMs(a);
        if (ms === undefined) return done(1, [{ atMs: 0, stream: 'stderr', text: `sleep: invalid number '${a}'\n` }]);
        total += ms;
      }
      if (total === Infinity) return { status: 0, output: [], durationMs: 0, terminal: 'forever' };
      return done(0, [], total);
    }
    case 'exit': {
      if (args.length === 0) return { ...done(lastStatus), terminal: 'exit' };
      if (!/^\d+$/.test(args[0])) {
        return { ...done(2, [{ atMs: 0, stream: 'stderr', text: `sh: exit: Illegal number: ${args[0]}\n` }]), terminal: 'exit' };
      }
      return { ...done(Number(args[0]) & 255), terminal: 'exit' };
    }
    default:
      return env.extra?.(name, args) ?? env.unknown(name, argv, inShell);
  }
}

/** Evaluates a parsed script: output times are relative to its start. */
export function runScript(script: Script, env: ShellEnv, inShell: boolean): Plan {
  const output: OutputChunk[] = [];
  let t = 0;
  let status = 0;
  const step = (argv: string[]): Plan | undefined => {
    const o = runCommand(argv, env, inShell, status);
    for (const c of o.output) output.push({ ...c, atMs: t + c.atMs });
    if (o.terminal === 'forever') return { output };
    t += o.durationMs;
    status = o.status;
    if (o.terminal === 'exit') return { output, exit: { atMs: t, code: status } };
    return undefined;
  };
  for (const list of script) {
    let end = step(list.first);
    if (end) return end;
    for (const { op, argv } of list.rest) {
      if ((op === '&&') !== (status === 0)) continue;
      end = step(argv);
      if (end) return end;
    }
  }
  return { output, exit: { atMs: t, code: status } };
}

function runScriptSource(src: string, env: ShellEnv): Plan {
  let script: Script;
  try {
    script = parseScript(src);
  } catch (err) {
    if (!(err instanceof ScriptSyntaxError)) throw err;
    const o = env.unsupported(src, err.message);
    if (o.terminal === 'forever') return { output: o.output };
    return { output: o.output, exit: { atMs: o.durationMs, code: o.status } };
  }
  return runScript(script, env, true);
}

/** Runs argv (a direct command, or `sh -c SCRIPT`). */
export function runArgv(argv: readonly string[], env: ShellEnv): Plan {
  if (argv.length === 0) return { output: [] };
  return runScript([{ first: [...argv], rest: [] }], env, false);
}

const forever: Outcome = { status: 0, output: [], durationMs: 0, terminal: 'forever' };

/** Containers: anything unmodelled is a server that runs until stopped. */
export const containerShell: ShellEnv = {
  unknown: () => forever,
  unsupported: () => forever,
};

/**
 * The life of a container whose argv (`command ++ args`) is given. An empty
 * argv (the image's default entrypoint) runs until stopped.
 */
export function planContainer(argv: readonly string[]): Plan {
  return runArgv(argv, containerShell);
}

/**
 * What SIGTERM does to a container whose argv is given (containerd + runc,
 * measured): an untrapped process dies of it (exit 143); `trap "" TERM`
 * ignores it, so only the SIGKILL after the stop timeout ends it (137);
 * `trap "exit K" TERM` exits K.
 */
export type SigtermDisposition = { kind: 'default' } | { kind: 'ignore' } | { kind: 'exit'; code: number };

const TRAP_RE = /\btrap\s+(?:"([^"]*)"|'([^']*)'|(\S+))\s+((?:SIG)?TERM|15)\b/;

export function sigtermDisposition(argv: readonly string[]): SigtermDisposition {
  const m = TRAP_RE.exec(argv.join(' '));
  if (!m) return { kind: 'default' };
  const action = (m[1] ?? m[2] ?? m[3] ?? '').trim();
  if (action === '' || action === '-') return action === '' ? { kind: 'ignore' } : { kind: 'default' };
  const exit = /^exit(?:\s+(\d+))?$/.exec(action);
  return exit ? { kind: 'exit', code: Number(exit[1] ?? 0) & 255 } : { kind: 'default' };
}

/** Joins chunks of one stream (for ExecSync replies and tests). */
export function collect(plan: Plan, stream: Stream): string {
  let s = '';
  for (const c of plan.output) if (c.stream === stream) s += c.text;
  return s;
}
