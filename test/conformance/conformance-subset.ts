/**
 * What the conformance runner selects: upstream's [NodeConformance] focus,
 * the skips a one-node, no-addon, no-registry cluster needs (each with its
 * reason, which the summary prints), and the fixed subset CI runs.
 */

export const FOCUS = '\\[NodeConformance\\]';

export interface Selection {
  /** A regex over the full test name (ginkgo's, and the JUnit name). */
  pattern: string;
  reason: string;
}

export const SKIPS: readonly Selection[] = [
  { pattern: '\\[Serial\\]', reason: '[Serial]: needs the cluster to itself; not part of a parallel node conformance run' },
  { pattern: '\\[Slow\\]', reason: '[Slow]: left out of the standard focus' },
  { pattern: '\\[Disruptive\\]', reason: '[Disruptive]: restarts or breaks node components' },
  { pattern: '\\[Flaky\\]', reason: '[Flaky]: upstream marks it unreliable' },
  { pattern: '\\[Feature:', reason: '[Feature:…]: needs a feature this cluster does not enable' },
  { pattern: '\\[NodeFeature:', reason: '[NodeFeature:…]: needs a node feature outside the conformance profile' },
  {
    pattern: 'should be able to pull image \\[',
    reason: 'pulls an image from a registry; no registry is reachable from this machine (both agents alike)',
  },
  {
    pattern: 'should be able to pull from private registry with secret',
    reason: 'pulls from a private registry; no registry is reachable from this machine (both agents alike)',
  },
];

export function skipRegex(): string {
  return SKIPS.map((s) => s.pattern).join('|');
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const area = (reason: string, ...names: string[]): Selection[] => names.map((n) => ({ pattern: esc(n), reason }));

/**
 * The CI subset: one to three tests of each area, chosen for what they tell
 * about a kubelet and for taking under a minute each (about 2 minutes with 4
 * ginkgo nodes). Each pattern matches one test name.
 */
export const CI_SUBSET: readonly Selection[] = [
  ...area(
    'lifecycle hooks',
    'when create a pod with lifecycle hook should execute poststart exec hook properly',
    'when create a pod with lifecycle hook should execute prestop http hook properly',
  ),
  ...area(
    'probes',
    'Probing container should be restarted with a /healthz http liveness probe',
    'Probing container with readiness probe should not be ready before initial delay and never restart',
  ),
  ...area(
    'init containers',
    'InitContainer [NodeConformance] should invoke init containers on a RestartNever pod',
    'InitContainer [NodeConformance] should not start app containers if init containers fail on a RestartAlways pod',
  ),
  ...area(
    'pods, exec and logs',
    'Pods should support remote command execution over websockets',
    'Pods should support retrieving logs from the container over websockets',
    'Pods should be updated',
  ),
  ...area(
    '/etc/hosts',
    'KubeletManagedEtcHosts should test kubelet managed /etc/hosts file',
    'when scheduling a busybox Pod with hostAliases should write entries to /etc/hosts',
  ),
  ...area(
    'downward API',
    'Downward API should provide pod name, namespace and IP address as env vars',
    'Downward API volume should update labels on modification',
  ),
  ...area(
    'volumes',
    'ConfigMap should be consumable from pods in volume with mappings [NodeConformance]',
    'Secrets should be consumable from pods in volume with defaultMode set',
    'Projected combined should project all components that make up the projection API',
    'EmptyDir volumes should support (root,0644,tmpfs)',
    'HostPath should give a volume the correct mode',
  ),
  ...area(
    'security context',
    'When creating a container with runAsUser should run the container with uid 65534',
    'When creating a pod with readOnlyRootFilesystem should run the container with readonly rootfs when readOnlyRootFilesystem=true',
  ),
  ...area('variable expansion', "Variable Expansion should allow substituting values in a container's command"),
  ...area(
    'runtime status',
    'should report termination message [LinuxOnly] from log output if TerminationMessagePolicy FallbackToLogsOnError is set',
    'should not be able to pull image from invalid registry',
  ),
  ...area('networking', 'Networking Granular Checks: Pods should function for intra-pod communication: http'),
  ...area('image defaults', "Docker Containers should be able to override the image's default command (docker entrypoint)"),
];
