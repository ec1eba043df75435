/**
 * The subPath escape check of the CI subset, on a real agent process (the
 * embedded simulated runtime; the agent makes the subPath bind mounts
 * itself): a volume whose directory holds a symlink to /etc, one container
 * mounting it through that symlink (refused: CreateContainerConfigError, the
 * host paths in the log only) beside one mounting a real subdirectory (runs),
 * a pod with a `..` subPath (rejected by validation, starts nothing), and a
 * bystander pod that must run throughout. Nothing may be bound from outside
 * the volume. The same checks on containerd are in volumes-containerd.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Pod } from '../../src/api/pod.js';
import { AgentProcess, podManifest } from '../e2e/agent-harness.js';

const cs = (pod: Pod | undefined, name: string) => pod?.status?.containerStatuses?.find((c) => c.name === name);

export async function subPathEscapeCheck(): Promise<void> {
  const ns = `flt-subpath-${Date.now().toString(36)}`;
  const agent = new AgentProcess('sim', `n-subpath-${Date.now().toString(36)}`, ns);
  const data = join(agent.dir, 'host-data');
  mkdirSync(join(data, 'ok'), { recursive: true });
  symlinkSync('/etc', join(data, 'evil'));
  const volumes = [{ name: 'data', hostPath: { path: data, type: 'Directory' } }];
  const withVolumes = (m: Record<string, unknown>, mounts: Record<string, Record<string, unknown>[]>) => {
    const spec = m.spec as { containers: Record<string, unknown>[]; volumes?: unknown };
    spec.volumes = volumes;
    for (const c of spec.containers) c.volumeMounts = mounts[c.name as string];
    return m;
  };
  agent.writeManifest('bystander', podManifest('bystander', ns, [{ name: 'app', command: ['sleep', '3600'] }]));
  agent.writeManifest(
    'escape',
    withVolumes(
      podManifest('escape', ns, [
        { name: 'app', command: ['sleep', '3600'] },
        { name: 'fine', command: ['sleep', '3600'] },
      ]),
      {
        app: [{ name: 'data', mountPath: '/escaped', subPath: 'evil' }],
        fine: [{ name: 'data', mountPath: '/data', subPath: 'ok' }],
      },
    ),
  );
  agent.writeManifest(
    'dotdot',
    withVolumes(podManifest('dotdot', ns, [{ name: 'app', command: ['sleep', '3600'] }]), {
      app: [{ name: 'data', mountPath: '/d', subPath: '../../etc' }],
    }),
  );
  try {
    await agent.start();
    const pod = await agent.waitPod(
      'CreateContainerConfigError',
      'escape',
      (p) => cs(p, 'app')?.state?.waiting?.reason === 'CreateContainerConfigError' && p,
    );
    // upstream makeMounts: the status names the volumeMount only; the host paths go to the agent's log.
    expect(cs(pod, 'app')!.state!.waiting!.message).toBe('failed to prepare subPath for volumeMount "data" of container "app"');
    await agent.until('the subPath detail in the agent log', () =>
      agent.logs.map((l) => l.replaceAll('\\"', '"')).some((l) => l.includes(`subpath "/etc" not within volume path "${data}"`)),
    );
    await agent.waitPod('the container with a subPath inside the volume running', 'escape', (p) => cs(p, 'fine')?.state?.running);
    await agent.until('the validation error of the ".." subPath', () =>
      agent.logs.some((l) => l.replaceAll('\\"', '"').includes(`subPath: Invalid value: "../../etc": must not contain '..'`)),
    );
    expect(await agent.pod('dotdot')).toBeUndefined();
    await agent.waitPod('the bystander running', 'bystander', (p) => cs(p, 'app')?.state?.running);
    // The only subPath bind is the one inside the volume.
    const binds = agent.mounts().filter((m) => m.includes('/volume-subpaths/'));
    expect(binds).toEqual([join(agent.dir, 'root/pods', pod.metadata.uid!, 'volume-subpaths/data/fine/0')]);
  } finally {
    // A graceful stop ends the embedded sim too; the agent leaves its subPath binds mounted (as upstream).
    await agent.stop();
    for (const m of agent.mounts()) execFileSync('umount', [m]);
    rmSync(agent.dir, { recursive: true, force: true });
  }
}
