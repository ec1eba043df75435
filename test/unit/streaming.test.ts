import { describe, expect, it } from 'vitest';
import { forwardedPorts, streamOptions, streamParams, StreamError } from '../../src/main/server/streaming.js';

const q = (s: string) => new URLSearchParams(s);

describe('streaming request parameters (upstream server.go routes, remotecommand NewOptions, portforward NewV4Options)', () => {
  it.each([
    ['exec', ['ns', 'p', 'c'], { namespace: 'ns', pod: 'p', uid: '', container: 'c' }],
    ['exec', ['ns', 'p', 'u1', 'c'], { namespace: 'ns', pod: 'p', uid: 'u1', container: 'c' }],
    ['attach', ['ns', 'p', 'c'], { namespace: 'ns', pod: 'p', uid: '', container: 'c' }],
    ['run', ['ns', 'p', 'u1', 'c'], { namespace: 'ns', pod: 'p', uid: 'u1', container: 'c' }],
    ['portForward', ['ns', 'p'], { namespace: 'ns', pod: 'p', uid: '', container: '' }],
    ['portForward', ['ns', 'p', 'u1'], { namespace: 'ns', pod: 'p', uid: 'u1', container: '' }],
    ['exec', ['ns', 'p'], undefined],
    ['exec', ['ns', 'p', 'u', 'c', 'x'], undefined],
    ['exec', ['ns', '', 'c'], undefined],
    ['portForward', ['ns'], undefined],
    ['portForward', ['ns', 'p', 'u', 'x'], undefined],
  ] as const)('%s %j → %j', (kind, parts, want) => expect(streamParams(kind, parts)).toEqual(want));

  it('reads the streams as the apiserver names them (input, output, error, tty = "1"); a TTY has no stderr', () => {
    expect(streamOptions(q('output=1&error=1'))).toEqual({ stdin: false, stdout: true, stderr: true, tty: false });
    expect(streamOptions(q('input=1&output=1&error=1&tty=1'))).toEqual({ stdin: true, stdout: true, stderr: false, tty: true });
    expect(streamOptions(q('input=1'))).toEqual({ stdin: true, stdout: false, stderr: false, tty: false });
  });

  it.each(['', 'stdout=1&stderr=1', 'output=true', 'tty=1&error=1'])('no stream on (%s) is a 400 with upstream text', (query) => {
    const err = (() => {
      try {
        streamOptions(q(query));
      } catch (e) {
        return e as StreamError;
      }
    })();
    expect(err).toBeInstanceOf(StreamError);
    expect(err).toMatchObject({ status: 400, message: 'you must specify at least 1 of stdin, stdout, stderr' });
  });

  it('port-forward ports come from the query for WebSocket clients only', () => {
    expect(forwardedPorts(q('port=80&port=8080'), true)).toEqual([80, 8080]);
    expect(forwardedPorts(q('port=80'), false)).toEqual([]);
    expect(() => forwardedPorts(q(''), true)).toThrow('query parameter "port" is required');
    expect(() => forwardedPorts(q('port=x'), true)).toThrow('unable to parse "x" as a port');
    expect(() => forwardedPorts(q('port=70000'), true)).toThrow('unable to parse "70000" as a port');
    expect(() => forwardedPorts(q('port=0'), true)).toThrow('port "0" must be > 0');
  });
});
