/**
 * The cluster-side core/v1 (and coordination/v1) objects the node agent reads and
 * writes: Node, Lease, Event, object references. The types are
 * @kubernetes/client-node's models in their JSON wire form (`Wire<T>`): plain
 * objects whose timestamps are the RFC3339 strings the apiserver sends, never
 * class instances or Date objects, so they can be sent as they are.
 */
import type { CoreV1Event, V1Lease, V1Node, V1NodeCondition, V1NodeStatus, V1ObjectReference, V1Taint } from '@kubernetes/client-node';

/** A client-node model as it travels on the wire: Date fields become RFC3339 strings, recursively. */
export type Wire<T> = T extends Date
  ? string
  : T extends (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? { -readonly [K in keyof T as T[K] extends (...args: never[]) => unknown ? never : K]: Wire<T[K]> }
      : T;

export type Node = Wire<V1Node>;
export type NodeStatus = Wire<V1NodeStatus>;
export type NodeCondition = Wire<V1NodeCondition>;
export type Taint = Wire<V1Taint>;
export type Lease = Wire<V1Lease>;
export type Event = Wire<CoreV1Event>;
export type ObjectReference = Wire<V1ObjectReference>;
