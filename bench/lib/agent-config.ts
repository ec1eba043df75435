/**
 * One agent configuration of an A/B benchmark (memory, steady), as words:
 * agent flags as they are, `node:--flag` a node/V8 flag given after
 * bin/kubelet-ts.js's own (the last one wins), `bin:PATH` another build's
 * bin/kubelet-ts.js; `default` is no words.
 */
import type { AgentProcess } from '../../test/e2e/agent-harness.js';

export interface AgentConfig {
  flags: string[];
  nodeFlags: string[];
  bin: string | undefined;
}

export function parseAgentConfig(config: string): AgentConfig {
  const words = config === 'default' ? [] : config.split(/\s+/).filter(Boolean);
  const bin = words.find((w) => w.startsWith('bin:'));
  return {
    flags: words.filter((w) => !w.startsWith('node:') && !w.startsWith('bin:')),
    nodeFlags: words.filter((w) => w.startsWith('node:')).map((w) => w.slice('node:'.length)),
    bin: bin?.slice('bin:'.length),
  };
}

/** Sets the agent's flags (after `baseFlags`), node flags and bin for its next start(). */
export function applyAgentConfig(agent: AgentProcess, config: string, baseFlags: readonly string[], defaultBin: string): void {
  const c = parseAgentConfig(config);
  agent.extraArgs = [...baseFlags, ...c.flags];
  agent.nodeFlags = c.nodeFlags;
  agent.bin = c.bin ?? defaultBin;
}
