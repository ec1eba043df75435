/**
 * GetContainerEvents fan-out. Every subscriber (one per open stream) receives
 * every event. Publishing never blocks the runtime: when a subscriber's stream
 * buffer holds `maxBuffered` events, further events for it are dropped and
 * counted (containerd drops on a full channel too); the kubelet's periodic
 * relist is the safety net. Events are only built when someone listens.
 */
import type { ServerWritableStream } from '@grpc/grpc-js';
import type { ContainerEventResponse, GetEventsRequest } from '../gen/runtime/v1/api.js';

type Stream = ServerWritableStream<GetEventsRequest, ContainerEventResponse>;

export class EventHub {
  private readonly subs = new Set<Stream>();
  /** Events dropped because a subscriber was too slow. */
  dropped = 0;
  published = 0;

  constructor(private readonly maxBuffered = 1000) {}

  get subscribers(): number {
    return this.subs.size;
  }

  /** Registers an open stream; it is removed when the client cancels or the stream ends. */
  subscribe(call: Stream): void {
    this.subs.add(call);
    const remove = () => this.subs.delete(call);
    call.on('cancelled', remove);
    call.on('close', remove);
    call.on('finish', remove);
    call.on('error', remove);
  }

  /** Builds the event (only if anyone listens) and sends it to every subscriber. */
  publish(build: () => ContainerEventResponse): void {
    if (this.subs.size === 0) return;
    const ev = build();
    this.published++;
    for (const call of this.subs) {
      if (call.cancelled || call.destroyed) {
        this.subs.delete(call);
        continue;
      }
      if (call.writableLength >= this.maxBuffered) {
        this.dropped++;
        continue;
      }
      call.write(ev);
    }
  }

  /** Ends every stream: with a status error (e.g. runtime down) or cleanly (server shutdown). */
  closeAll(error?: { code: number; details: string }): void {
    for (const call of this.subs) {
      if (error) call.emit('error', error);
      else call.end();
    }
    this.subs.clear();
  }
}
