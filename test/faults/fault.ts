/**
 * A fault the suite injects. Each names the node it needs and when it hits:
 * - 'start': every run starts a fresh node and injects at a random moment
 *   while its pods start (uniform in [0, W] after the agent answers /healthz,
 *   W the time an unfaulted reference run took to have every pod Running);
 * - 'steady': one node for all runs; each injection hits with every pod
 *   running.
 * A 'steady' fault with `fresh` gets a fresh node for each run, brought to
 * every pod running before the injection (for faults that leave the node
 * unusable, such as its Node object deleted).
 * inject() does the damage and returns at once; recover() does what the
 * outside world would do next (a supervisor restarting a killed process, a
 * network healing), nothing that helps the agent. The runner checks the
 * invariants after it, and `pending()` of the fault's own, if any.
 */
import type { NodeUnderTest } from './node-under-test.js';

export interface NodeSpec {
  runtime: 'sim' | 'containerd';
  pods: number;
  /** Environment of the agent process. */
  agentEnv?: Record<string, string>;
  /** Root, pod-log and container-log directories each on a tmpfs of this size (disk faults). */
  dirsOnTmpfs?: { bytes: number; inodes: number };
  /** Static-pod manifests (default), or pods from the apiserver of the suite's private control plane. */
  source?: 'static' | 'api';
}

/** The runtime a containerd fault gets (a PrivateContainerd in the suite; never the shared one for runtime faults). */
export interface RuntimeControl {
  readonly endpoint: string;
  /** Kills the daemon with SIGKILL (its containers, shims and state stay) and waits until it is gone. */
  kill(): Promise<void>;
  /** Starts it again on its old state. */
  start(): Promise<void>;
}

export interface FaultContext {
  node: NodeUnderTest;
  runtime?: RuntimeControl;
  /** What the run should say beside the figures (e.g. whether the agent saw a 410). */
  notes: string[];
  /** The fault's own invariants that broke (counted in "other checks broken"). */
  broken: string[];
  /** For a fault that lasts (an outage): when it ended; recovery is counted from then. */
  endedAt?: number;
  /**
   * For a fault that is armed and hits later (an aimed worker crash): when it hit; recovery is counted from
   * then. `missed` says why it never hit (the run is then not counted as recovered from a hit).
   */
  hitAt?: number;
  missed?: string;
}

export interface Fault {
  /** Short id used by --faults (e.g. agent-kill-start-sim). */
  readonly id: string;
  /** One line for docs/reliability.md, for a node of `pods` pods. */
  title(pods: number): string;
  readonly moment: 'start' | 'steady';
  /** 'steady' only: a fresh node for each run. */
  readonly fresh?: boolean;
  /**
   * 'start' only: what ran when the fault hit is read just before inject() (default: just after, once an
   * agent kill has frozen the runtime); for a fault that takes the runtime itself away.
   */
  readonly baselineBeforeInject?: boolean;
  readonly node: NodeSpec;
  inject(ctx: FaultContext): Promise<void>;
  recover(ctx: FaultContext): Promise<void>;
  /**
   * Recovery is timed from the injection (default) or from the end of
   * recover(): a fault that holds for a while (a disk kept full) is timed from
   * when the outside world undid it.
   */
  readonly recoveryFrom?: 'inject' | 'recover';
  /**
   * How long every check must hold, polled without a break, before the node counts as recovered (default
   * DEFAULT_HOLD_MS in hold.ts). A fault after which another component may still undo the recovery (the
   * node controller after an outage) holds for longer than that component takes.
   */
  readonly holdMs?: number;
  /** Figures of the fault's own, for the run's details column (e.g. what the agent logged meanwhile). */
  notes?(ctx: FaultContext): string[];
  /** What of the fault's own recovery is still missing (undefined when done); polled with the invariants. */
  pending?(ctx: FaultContext): Promise<string | undefined>;
  /** Notes on the run, taken after recovery and the settling relists (e.g. whether the agent saw a 410). */
  finalNotes?(ctx: FaultContext): string[];
}
