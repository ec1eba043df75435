import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/main/cli.js';
import { unsupportedSettings } from '../../src/main/unsupported.js';

const configOf = (argv: string[]) => {
  const cl = parseCommandLine(argv);
  if (cl.kind !== 'run') throw new Error('expected a run command line');
  return cl.config;
};

describe('unsupportedSettings', () => {
  it('accepts a standalone configuration', () => {
    expect(unsupportedSettings(configOf(['--pod-manifest-path=/tmp/m']))).toEqual([]);
  });
  it('accepts --kubeconfig (the node registers with the apiserver)', () => {
    expect(unsupportedSettings(configOf(['--kubeconfig=/etc/kubernetes/kubelet.conf']))).toEqual([]);
  });
  it('accepts --pleg=evented (built; it falls back to the generic PLEG on runtimes without container events)', () => {
    expect(unsupportedSettings(configOf(['--pleg=evented']))).toEqual([]);
  });
  it.each([[['--bootstrap-kubeconfig=/etc/kubernetes/bootstrap.conf'], /--bootstrap-kubeconfig needs --kubeconfig/]])(
    'refuses %j with a clear message',
    (argv, message) => {
      const problems = unsupportedSettings(configOf(argv));
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(message);
    },
  );
  it('--runonce is refused by the settings catalog at config resolution', () => {
    expect(() => configOf(['--runonce'])).toThrow(/flag --runonce: not supported by kubelet-ts: run-once mode is not built/);
  });
});
