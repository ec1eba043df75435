/**
 * The kubelet plugin watcher (upstream pkg/kubelet/pluginmanager): plugins
 * register by creating a unix socket in <root-dir>/plugins_registry that
 * serves the pluginregistration.v1 Registration service. For each socket the
 * watcher calls GetInfo, hands the plugin to the handler of its type
 * (ValidatePlugin, then RegisterPlugin), and tells the plugin the outcome with
 * NotifyRegistrationStatus. A socket that goes (or is replaced) deregisters
 * its plugin.
 *
 * Contracts:
 *  - The directory is scanned every second (upstream's reconciler period;
 *    upstream learns of new sockets from inotify, this scan finds them within
 *    the same second). Names starting with "." and non-sockets are ignored,
 *    subdirectories are scanned too.
 *  - A socket that cannot be dialled, answers GetInfo with an error, or whose
 *    plugin fails validation is retried with exponential backoff (500 ms
 *    doubling to 2 min 2 s). A plugin that fails RegisterPlugin is told so and
 *    not retried until its socket is created again (upstream: the plugin
 *    re-creates its socket).
 *  - One registration or deregistration runs at a time; stop() waits for it.
 */
import { lstat, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import { errorMessage } from '../../common/error-message.js';

/** upstream config.DefaultKubeletPluginsRegistrationDirName. */
export const PLUGINS_REGISTRY_DIR_NAME = 'plugins_registry';
const SCAN_PERIOD_MS = 1000;
const RETRY_INITIAL_MS = 500;
const RETRY_MAX_MS = 122_000;

/** What a plugin type's handler does (upstream cache.PluginHandler). */
export interface PluginHandler {
  validatePlugin(name: string, endpoint: string, versions: readonly string[]): void;
  registerPlugin(name: string, endpoint: string, versions: readonly string[]): Promise<void>;
  deRegisterPlugin(name: string): Promise<void>;
}

export interface PluginInfo {
  type: string;
  name: string;
  endpoint: string;
  supportedVersions: string[];
}

/** A connection to a plugin's registration socket (the seam: grpc in the agent, a fake in unit tests). */
export interface RegistrationConn {
  getInfo(): Promise<PluginInfo>;
  notifyRegistrationStatus(registered: boolean, error: string): Promise<void>;
  close(): void;
}

export type RegistrationDialer = (socketPath: string) => RegistrationConn;

export interface PluginWatcherOptions {
  dir: string;
  handlers: Record<string, PluginHandler>;
  dial: RegistrationDialer;
  clock: Clock;
  logger: Logger;
}

interface SocketState {
  /** Identity of the socket file (inode and change time): a new one replaces the plugin. */
  id: string;
  /** Registered (or failed RegisterPlugin): not retried until the socket changes. */
  settled: boolean;
  plugin?: { name: string; handler: PluginHandler };
  failures: number;
  retryAt: number;
}

export class PluginWatcher {
  private readonly sockets = new Map<string, SocketState>();
  private cancelTimer: (() => void) | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: Readonly<PluginWatcherOptions>) {}

  /** Creates the directory (0750) and starts scanning it. */
  async start(): Promise<void> {
    await mkdir(this.options.dir, { recursive: true, mode: 0o750 });
    this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer?.();
    await this.running;
  }

  /** Plugins registered now, by socket path (tests, status). */
  registered(): Record<string, string> {
    return Object.fromEntries([...this.sockets].filter(([, s]) => s.plugin).map(([p, s]) => [p, s.plugin!.name]));
  }

  /** One scan and its registrations (exposed for tests). */
  scanOnce(): Promise<void> {
    this.running ??= this.scan()
      .catch((err: unknown) => this.options.logger.error({ dir: this.options.dir, err: errorMessage(err) }, 'Plugin registry scan failed'))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private tick(): void {
    if (this.stopped) return;
    const next = () => {
      if (!this.stopped) this.cancelTimer = this.options.clock.setTimer(SCAN_PERIOD_MS, () => this.tick());
    };
    this.scanOnce().then(next, next);
  }

  private async listSockets(): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    let names: string[];
    try {
      names = await readdir(this.options.dir, { recursive: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return found;
      throw err;
    }
    for (const name of names) {
      if (name.split('/').some((part) => part.startsWith('.'))) continue;
      const path = join(this.options.dir, name);
      const st = await lstat(path).catch(() => undefined);
      if (st?.isSocket()) found.set(path, `${st.ino}:${st.ctimeMs}`);
    }
    return found;
  }

  private async scan(): Promise<void> {
    const found = await this.listSockets();
    for (const [path, state] of this.sockets) {
      if (found.get(path) === state.id) continue;
      this.sockets.delete(path);
      if (state.plugin) await this.deregister(path, state.plugin);
    }
    const now = this.options.clock.now();
    for (const [path, id] of found) {
      if (this.stopped) return;
      let state = this.sockets.get(path);
      if (!state) {
        state = { id, settled: false, failures: 0, retryAt: 0 };
        this.sockets.set(path, state);
      }
      if (state.settled || now < state.retryAt) continue;
      await this.register(path, state);
    }
  }

  private async deregister(path: string, plugin: { name: string; handler: PluginHandler }): Promise<void> {
    this.options.logger.info({ socket: path, plugin: plugin.name }, 'Plugin socket removed; deregistering the plugin');
    await plugin.handler
      .deRegisterPlugin(plugin.name)
      .catch((err: unknown) => this.options.logger.error({ plugin: plugin.name, err: errorMessage(err) }, 'DeRegisterPlugin failed'));
  }

  /** upstream GenerateRegisterPluginFunc. */
  private async register(path: string, state: SocketState): Promise<void> {
    const conn = this.options.dial(path);
    const notify = (ok: boolean, error: string) =>
      conn
        .notifyRegistrationStatus(ok, error)
        .catch((err: unknown) =>
          this.options.logger.error({ socket: path, err: errorMessage(err) }, 'Failed to notify the plugin of its registration status'),
        );
    try {
      let info: PluginInfo;
      try {
        info = await conn.getInfo();
      } catch (err) {
        throw new Error(
          `RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket ${path}, err: ${errorMessage(err)}`,
          {
            cause: err,
          },
        );
      }
      const handler = this.options.handlers[info.type];
      if (!handler) {
        const msg = `RegisterPlugin error -- no handler registered for plugin type: ${info.type} at socket ${path}`;
        await notify(false, msg);
        throw new Error(msg);
      }
      const endpoint = info.endpoint || path;
      try {
        handler.validatePlugin(info.name, endpoint, info.supportedVersions);
      } catch (err) {
        const msg = `RegisterPlugin error -- plugin validation failed with err: ${errorMessage(err)}`;
        await notify(false, msg);
        throw new Error(msg, { cause: err });
      }
      state.settled = true;
      try {
        await handler.registerPlugin(info.name, endpoint, info.supportedVersions);
      } catch (err) {
        const msg = `RegisterPlugin error -- plugin registration failed with err: ${errorMessage(err)}`;
        this.options.logger.error({ socket: path, plugin: info.name }, msg);
        await notify(false, msg);
        return;
      }
      state.plugin = { name: info.name, handler };
      state.failures = 0;
      this.options.logger.info({ socket: path, plugin: info.name, type: info.type, endpoint }, 'Registered plugin');
      await notify(true, '');
    } catch (err) {
      state.failures++;
      const delay = Math.min(RETRY_INITIAL_MS * 2 ** (state.failures - 1), RETRY_MAX_MS);
      state.retryAt = this.options.clock.now() + delay;
      this.options.logger.error({ socket: path, retryInMs: delay, err: errorMessage(err) }, 'Plugin registration failed');
    } finally {
      conn.close();
    }
  }
}
