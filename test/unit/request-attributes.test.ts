import { describe, expect, it } from 'vitest';
import { isSubpath, metricPath, nodeRequestAttributes } from '../../src/main/server/request-attributes.js';

describe('nodeRequestAttributes (upstream GetRequestAttributes)', () => {
  it.each([
    ['GET', '/pods', 'get', 'proxy'],
    ['GET', '/stats/summary', 'get', 'stats'],
    ['GET', '/stats', 'get', 'stats'],
    ['GET', '/statsx', 'get', 'proxy'],
    ['GET', '/metrics', 'get', 'metrics'],
    ['GET', '/metrics/probes', 'get', 'metrics'],
    ['GET', '/logs/', 'get', 'log'],
    ['GET', '/logs/syslog', 'get', 'log'],
    ['GET', '/containerLogs/ns/p/c', 'get', 'proxy'],
    ['GET', '/spec/', 'get', 'spec'],
    ['POST', '/exec/ns/p/c', 'create', 'proxy'],
    ['PUT', '/x', 'update', 'proxy'],
    ['PATCH', '/x', 'patch', 'proxy'],
    ['DELETE', '/x', 'delete', 'proxy'],
  ])('%s %s → verb %s, subresource %s', (method, path, verb, subresource) => {
    expect(nodeRequestAttributes(method, path, 'n1')).toEqual({
      verb,
      namespace: '',
      group: '',
      version: 'v1',
      resource: 'nodes',
      subresource,
      name: 'n1',
      path,
    });
  });
  it('isSubpath', () => {
    expect([isSubpath('/logs', '/logs/'), isSubpath('/logs/a', '/logs/'), isSubpath('/logsx', '/logs/')]).toEqual([true, true, false]);
  });
});

describe('metricPath (upstream metric buckets)', () => {
  it.each([
    ['/pods', 'pods'],
    ['/containerLogs/a/b/c', 'containerLogs'],
    ['/metrics', 'metrics'],
    ['/metrics/probes', 'metrics/probes'],
    ['/metrics/resource', 'metrics/resource'],
    ['/metrics/nope', 'other'],
    ['/whatever/x', 'other'],
    ['/', 'other'],
  ])('%s → %s', (path, bucket) => expect(metricPath(path)).toBe(bucket));
});
