/**
 * Client of the sim's HTTP control socket (control-http.ts), for tests and
 * benchmarks that run the sim in another process. Methods mirror SimControl
 * and reject with SimControlError on a non-2xx reply.
 */
import { request } from 'node:http';
import { KubeletTsError } from '../common/errors.js';
import type { SimStats } from './control.js';
import type { FaultConfig, LatencySpec } from './faults.js';
import { unixPath } from './socket.js';

export class SimControlError extends KubeletTsError {
  override readonly code = 'KTS_ERR_SIM_CONTROL';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export class SimControlClient {
  private readonly socketPath: string;

  /** `endpoint`: unix:///path/ctl.sock (as passed to --control). */
  constructor(
    endpoint: string,
    private readonly timeoutMs = 10_000,
  ) {
    this.socketPath = unixPath(endpoint);
  }

  stats(): Promise<SimStats> {
    return this.call('GET', '/stats') as Promise<SimStats>;
  }

  getFaults(): Promise<FaultConfig> {
    return this.call('GET', '/faults') as Promise<FaultConfig>;
  }

  async setFaults(config: FaultConfig): Promise<void> {
    await this.call('POST', '/faults', config);
  }

  async setLatency(rpc: string, latency: LatencySpec | undefined): Promise<void> {
    await this.call('POST', '/latency', { rpc, latency: latency ?? null });
  }

  async setErrorRate(rpc: string, errorRate: number, errorCode?: number, errorMessage?: string): Promise<void> {
    await this.call('POST', '/error-rate', { rpc, errorRate, errorCode, errorMessage });
  }

  async setRuntimeDown(down: boolean, reason?: string, message?: string): Promise<void> {
    await this.call('POST', '/runtime-down', { down, reason, message });
  }

  async setNetworkReady(ready: boolean, reason?: string, message?: string): Promise<void> {
    await this.call('POST', '/network-ready', { ready, reason, message });
  }

  async setPullLatency(latency: number | LatencySpec | undefined): Promise<void> {
    await this.call('POST', '/pull-latency', { latency: latency ?? null });
  }

  async setStopDelay(ms: number): Promise<void> {
    await this.call('POST', '/stop-delay', { ms });
  }

  async setContainerUsage(containerId: string, usage: { workingSetBytes?: number; writableLayerBytes?: number }): Promise<void> {
    await this.call('POST', '/container-usage', { containerId, ...usage });
  }

  async setSandboxNetwork(
    sandboxId: string,
    network: { rxBytes?: number; rxErrors?: number; txBytes?: number; txErrors?: number },
  ): Promise<void> {
    await this.call('POST', '/sandbox-network', { sandboxId, ...network });
  }

  async setImageFsMountpoint(mountpoint: string): Promise<void> {
    await this.call('POST', '/image-fs', { mountpoint });
  }

  async allowImages(patterns: string[]): Promise<void> {
    await this.call('POST', '/images/allow', { patterns });
  }

  async seedImages(refs: string[]): Promise<void> {
    await this.call('POST', '/images/seed', { refs });
  }

  async setFile(containerId: string, path: string, content: string): Promise<void> {
    await this.call('POST', '/files', { containerId, path, content });
  }

  async killContainer(containerId: string, exitCode: number): Promise<void> {
    await this.call('POST', '/kill', { containerId, exitCode });
  }

  private call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          socketPath: this.socketPath,
          path,
          method,
          timeout: this.timeoutMs,
          headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {},
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              parsed = text;
            }
            const code = res.statusCode ?? 0;
            if (code >= 200 && code < 300) return resolve(parsed);
            const msg = (parsed as { error?: string } | undefined)?.error ?? text;
            reject(new SimControlError(`sim control ${method} ${path} failed (${code}): ${msg}`, code));
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new SimControlError(`sim control ${method} ${path} timed out after ${this.timeoutMs} ms`, 0)));
      req.on('error', reject);
      req.end(payload);
    });
  }
}
