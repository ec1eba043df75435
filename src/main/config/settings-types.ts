/** The shape of an entry of the upstream settings catalog (settings-catalog.ts). */

export type SettingStatus = 'honoured' | 'explained' | 'refused';

/**
 * How a setting kubelet-ts does not model is parsed (file and flag), and how a
 * modelled one without a kubelet-ts flag spec is parsed from its upstream flag.
 */
export type ValueType =
  | 'bool'
  | 'int'
  | 'float'
  | 'string'
  | 'duration'
  | 'strings'
  | 'ints'
  | 'map'
  | 'thresholds'
  | 'gracePeriods'
  | 'featureGates'
  | 'object'
  | 'objects';

export interface UpstreamSetting {
  /** The v1beta1 JSON path (nested fields dotted); absent for a flag-only setting. */
  readonly field?: string;
  /** The upstream flag, without dashes; absent for a file-only field. */
  readonly flag?: string;
  readonly status: SettingStatus;
  /**
   * honoured: what it does; explained: why it has no effect here (the startup
   * line); refused: why, and what to use instead (the error).
   */
  readonly note: string;
  /** The KubeletConfig path of a modelled setting; default: `field` when that is a KubeletConfig key. */
  readonly key?: string;
  /** Parse type; required for settings kept in `otherSettings` and for modelled ones parsed from a catalog flag. */
  readonly type?: ValueType;
  /** For settings in `otherSettings`: the value kubelet-ts behaves as (unset, zero and this are accepted silently). */
  readonly neutral?: unknown;
  /** More values accepted silently. */
  readonly neutrals?: readonly unknown[];
}
