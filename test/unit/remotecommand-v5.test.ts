/**
 * The v5.channel.k8s.io ↔ SPDY v4 mapping (remotecommand-v5.ts), against
 * upstream's constants and client-go's stream order.
 */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  Channel,
  channelMessage,
  channelOfStreamType,
  internalErrorStatus,
  isV5WebSocketRequest,
  parseClientMessage,
  readyChannel,
  spdyStreamTypes,
} from '../../src/main/server/remotecommand-v5.js';

const req = (headers: Record<string, string | string[]>) => ({ headers }) as unknown as IncomingMessage;
const ws = { connection: 'Upgrade', upgrade: 'websocket' };

describe('remotecommand v5 channels', () => {
  it("channel numbers are upstream's (apimachinery util/remotecommand)", () => {
    expect(Channel).toEqual({ Stdin: 0, Stdout: 1, Stderr: 2, Error: 3, Resize: 4, Close: 255 });
  });

  it('takes a WebSocket upgrade offering v5, whatever else it offers; not v4-only, not SPDY', () => {
    expect(isV5WebSocketRequest(req({ ...ws, 'sec-websocket-protocol': 'v5.channel.k8s.io' }))).toBe(true);
    expect(isV5WebSocketRequest(req({ ...ws, 'sec-websocket-protocol': 'v4.channel.k8s.io, v5.channel.k8s.io' }))).toBe(true);
    expect(isV5WebSocketRequest(req({ ...ws, 'sec-websocket-protocol': 'v4.channel.k8s.io,base64.channel.k8s.io' }))).toBe(false);
    expect(isV5WebSocketRequest(req({ ...ws }))).toBe(false);
    expect(isV5WebSocketRequest(req({ connection: 'Upgrade', upgrade: 'SPDY/3.1', 'sec-websocket-protocol': 'v5.channel.k8s.io' }))).toBe(
      false,
    );
    expect(isV5WebSocketRequest(req({ upgrade: 'websocket', 'sec-websocket-protocol': 'v5.channel.k8s.io' }))).toBe(false);
  });

  it('reads client messages: stdin, resize, the close signal; drops the rest with the reason', () => {
    expect(parseClientMessage(Buffer.from([0, 0x68, 0x69]))).toEqual({ kind: 'stdin', data: Buffer.from('hi') });
    expect(parseClientMessage(Buffer.from([4, 0x7b, 0x7d]))).toEqual({ kind: 'resize', data: Buffer.from('{}') });
    expect(parseClientMessage(Buffer.from([255, 0]))).toEqual({ kind: 'close', channel: 0 });
    expect(parseClientMessage(Buffer.from([255]))).toEqual({ kind: 'ignored', reason: 'close signal with 0 bytes, want 1' });
    expect(parseClientMessage(Buffer.from([1, 0x61]))).toEqual({ kind: 'ignored', reason: 'channel 1 is not written by clients' });
    expect(parseClientMessage(Buffer.alloc(0))).toEqual({ kind: 'ignored', reason: 'empty message' });
  });

  it('writes the channel byte first', () => {
    expect(channelMessage(2, Buffer.from('x'))).toEqual(Buffer.from([2, 0x78]));
    expect(channelMessage(1)).toEqual(Buffer.from([1]));
  });

  it("opens SPDY streams in client-go's order: error, stdin, stdout, stderr; resize instead of stderr with a TTY", () => {
    expect(spdyStreamTypes({ stdin: true, stdout: true, stderr: true, tty: false })).toEqual(['error', 'stdin', 'stdout', 'stderr']);
    expect(spdyStreamTypes({ stdin: false, stdout: true, stderr: false, tty: false })).toEqual(['error', 'stdout']);
    expect(spdyStreamTypes({ stdin: true, stdout: true, stderr: true, tty: true })).toEqual(['error', 'stdin', 'stdout', 'resize']);
    expect(['stdout', 'stderr', 'error', 'stdin', 'resize'].map(channelOfStreamType)).toEqual([1, 2, 3, undefined, undefined]);
  });

  it('says "connected" on the lowest output channel there is, as upstream', () => {
    expect(readyChannel({ stdin: true, stdout: true, stderr: true, tty: false })).toBe(1);
    expect(readyChannel({ stdin: true, stdout: false, stderr: true, tty: false })).toBe(2);
    expect(readyChannel({ stdin: true, stdout: false, stderr: false, tty: false })).toBe(3);
  });

  it('an InternalError status is apierrors.NewInternalError as JSON', () => {
    expect(JSON.parse(internalErrorStatus('boom').toString())).toEqual({
      metadata: {},
      status: 'Failure',
      message: 'Internal error occurred: boom',
      reason: 'InternalError',
      details: { causes: [{ message: 'boom' }] },
      code: 500,
    });
  });
});
