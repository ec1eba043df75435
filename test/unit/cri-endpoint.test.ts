import { describe, expect, it } from 'vitest';
import { parseEndpoint } from '../../src/cri/endpoint.js';
import { EndpointError } from '../../src/common/errors.js';

describe('parseEndpoint', () => {
  it.each([
    ['unix:///run/containerd/containerd.sock', '/run/containerd/containerd.sock'],
    ['/run/containerd/containerd.sock', '/run/containerd/containerd.sock'],
    ['  unix:///tmp/x.sock ', '/tmp/x.sock'],
  ])('accepts %s', (input, path) => {
    const p = parseEndpoint(input);
    expect(p.socketPath).toBe(path);
    expect(p.grpcTarget).toBe(`unix://${path}`);
  });

  it.each([
    ['', /empty/],
    ['tcp://127.0.0.1:1234', /protocol "tcp" not supported/],
    ['relative.sock', /not a unix:\/\/ URL/],
    ['unix://relative.sock', /must be absolute/],
    [`unix:///${'x'.repeat(120)}`, /longer than 107 bytes/],
  ])('rejects %j', (input, message) => {
    expect(() => parseEndpoint(input)).toThrow(EndpointError);
    expect(() => parseEndpoint(input)).toThrow(message);
  });
});
