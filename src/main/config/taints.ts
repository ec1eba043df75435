/** Node taints as --register-with-taints and registerWithTaints give them. */

export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;

/** A node taint as registered (core/v1 Taint without timeAdded). */
export interface TaintSpec {
  key: string;
  value?: string;
  effect: (typeof TAINT_EFFECTS)[number];
}
