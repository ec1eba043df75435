/**
 * The cluster-side objects the node agent reads and writes (Node, Lease, Event,
 * object references), re-exported from core-v1.ts, the project's one model of
 * API objects (client-node's models in JSON wire form). Import them from here
 * or from core-v1.ts; never define a second shape.
 */
export type { Event, Lease, Node, NodeCondition, NodeStatus, ObjectReference, Taint } from './core-v1.js';
