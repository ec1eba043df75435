/** The runtime name kubelet-ts-sim reports in Version (its own module, so the agent can compare it without loading the simulator). */
export const SIM_RUNTIME_NAME = 'kubelet-ts-sim';
