/**
 * The part of `ws` (8.x) the kubelet server uses. @types/ws is not installed
 * (no network installs here), so the types are declared for what is called.
 */
declare module 'ws' {
  import type { EventEmitter } from 'node:events';
  import type { IncomingMessage } from 'node:http';
  import type { Duplex } from 'node:stream';

  export type RawData = Buffer | ArrayBuffer | Buffer[];

  export class WebSocket extends EventEmitter {
    constructor(address: string, protocols?: string | string[], options?: Record<string, unknown>);
    readonly CONNECTING: 0;
    readonly OPEN: 1;
    readonly CLOSING: 2;
    readonly CLOSED: 3;
    readonly readyState: 0 | 1 | 2 | 3;
    readonly protocol: string;
    readonly bufferedAmount: number;
    send(data: Buffer | string, cb?: (err?: Error) => void): void;
    send(data: Buffer | string, options: { binary?: boolean }, cb?: (err?: Error) => void): void;
    close(code?: number, reason?: string): void;
    terminate(): void;
    pause(): void;
    resume(): void;
    on(event: 'message', listener: (data: RawData, isBinary: boolean) => void): this;
    on(event: 'close', listener: (code: number, reason: Buffer) => void): this;
    on(event: 'error', listener: (err: Error) => void): this;
    on(event: 'open', listener: () => void): this;
    on(event: string, listener: (...args: never[]) => void): this;
    once(event: 'close', listener: (code: number, reason: Buffer) => void): this;
    once(event: 'open', listener: () => void): this;
    once(event: 'error', listener: (err: Error) => void): this;
    once(event: string, listener: (...args: never[]) => void): this;
  }

  export interface ServerOptions {
    noServer?: boolean;
    clientTracking?: boolean;
    perMessageDeflate?: boolean;
    maxPayload?: number;
    handleProtocols?: (protocols: Set<string>, request: IncomingMessage) => string | false;
  }

  export class WebSocketServer extends EventEmitter {
    constructor(options: ServerOptions);
    handleUpgrade(
      request: IncomingMessage,
      socket: Duplex,
      head: Buffer,
      callback: (ws: WebSocket, request: IncomingMessage) => void,
    ): void;
  }

  export default WebSocket;
}
