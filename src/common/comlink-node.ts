/**
 * A comlink Endpoint over a node:worker_threads Worker or MessagePort (both
 * are EventEmitters posting the message itself, where comlink expects
 * `{ data }` events). comlink's own node adapter ships without types for
 * ESM resolution; this is the same mapping.
 */
import type { Endpoint } from 'comlink';

interface NodePort {
  postMessage(message: unknown, transfer?: readonly unknown[]): void;
  on(event: 'message', listener: (data: unknown) => void): unknown;
  off(event: 'message', listener: (data: unknown) => void): unknown;
  start?: () => void;
}

type Listener = ((event: { data: unknown }) => void) | { handleEvent(event: { data: unknown }): void };

export function nodeEndpoint(port: NodePort): Endpoint {
  const wrapped = new Map<Listener, (data: unknown) => void>();
  const endpoint = {
    postMessage: (message: unknown, transfer?: unknown[]) => port.postMessage(message, transfer),
    addEventListener: (_type: string, listener: Listener) => {
      const l = (data: unknown) => (typeof listener === 'function' ? listener({ data }) : listener.handleEvent({ data }));
      wrapped.set(listener, l);
      port.on('message', l);
    },
    removeEventListener: (_type: string, listener: Listener) => {
      const l = wrapped.get(listener);
      if (!l) return;
      port.off('message', l);
      wrapped.delete(listener);
    },
    start: port.start?.bind(port),
  };
  return endpoint;
}
