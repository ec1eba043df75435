/**
 * The `kubelet-ts` command. `bin/kubelet-ts.js` calls
 * `main(process.argv.slice(2))` and passes the returned code to process.exit;
 * nothing here exits the process. `parseCommandLine` is the side-effect-free
 * part the agent wiring uses.
 */
import { ConfigError } from '../common/errors.js';
import { createLogger, type Logger } from '../common/logger.js';
import type { DestinationStream } from 'pino';
import { parseFlags } from './config/flag-parser.js';
import { resolveFromFlags, type ResolveEnv, type ResolvedConfig } from './config/load-config.js';
import { packageVersion } from '../common/version.js';

export type CommandLine = ({ kind: 'run' } & ResolvedConfig) | { kind: 'help'; text: string } | { kind: 'version'; text: string };

export { packageVersion } from '../common/version.js';

/** Parses argv and resolves the configuration. Throws ConfigError for bad flags or config. No side effects. */
export function parseCommandLine(argv: readonly string[], env: ResolveEnv = {}): CommandLine {
  const parsed = parseFlags(argv, `kubelet-ts v${packageVersion()}`);
  if (parsed.kind !== 'flags') return parsed;
  return { kind: 'run', ...resolveFromFlags(parsed.flags, env) };
}

interface Writer {
  write(text: string): unknown;
}

export interface MainOptions {
  stdout?: Writer;
  stderr?: Writer;
  env?: ResolveEnv;
  /** Where the logger writes (default stderr). */
  logDestination?: DestinationStream;
  /**
   * Runs the agent with the resolved config; its result is the exit code.
   * Default: return 0 (only the explained settings are logged).
   */
  run?: (resolved: ResolvedConfig, logger: Logger) => Promise<number>;
}

/** --logging-format=json on the command line (read before the configuration is known to be valid). */
function wantsJson(argv: readonly string[]): boolean {
  return argv.some((a, i) => a === '--logging-format=json' || (a === '--logging-format' && argv[i + 1] === 'json'));
}

/** Entry point for the kubelet-ts bin. Returns the process exit code. */
export async function main(argv: readonly string[], options: MainOptions = {}): Promise<number> {
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  let commandLine: CommandLine;
  try {
    commandLine = parseCommandLine(argv, options.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      if (wantsJson(argv)) {
        // Every line of the process in JSON when asked for, the configuration errors too.
        createLogger({ format: 'json', verbosity: 0, destination: stderr }).error({ err: err.message }, 'Invalid configuration');
      } else stderr.write(`kubelet-ts: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  if (commandLine.kind !== 'run') {
    stdout.write(commandLine.text);
    return 0;
  }
  const { config, sources, explained } = commandLine;
  const logger = createLogger({
    format: config.logging.format,
    verbosity: config.logging.verbosity,
    ...(options.logDestination ? { destination: options.logDestination } : {}),
  }).child({ component: 'cli' });
  for (const e of explained) logger.info({ setting: e.name, value: e.value, reason: e.message }, 'Setting has no effect in kubelet-ts');
  if (logger.isLevelEnabled('debug')) logger.debug({ config }, 'Resolved configuration');
  return options.run ? options.run({ config, sources, explained }, logger) : 0;
}
