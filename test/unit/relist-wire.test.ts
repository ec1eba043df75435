import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { describe, expect, it } from 'vitest';
import { KubeletTsError } from '../../src/common/errors.js';
import {
  Container,
  ContainerState,
  ListContainersResponse,
  ListPodSandboxResponse,
  PodSandbox,
  PodSandboxState,
} from '../../src/gen/runtime/v1/api.js';
import { decodeListedContainers, decodeListedSandboxes, type ListedContainer, type ListedSandbox } from '../../src/runtime/relist-wire.js';
import {
  ANNOTATION_CONTAINER_HASH,
  LABEL_CONTAINER_NAME,
  LABEL_POD_NAME,
  LABEL_POD_NAMESPACE,
  LABEL_POD_UID,
} from '../../src/runtime/types.js';

const NS = 1_700_000_000_123_456_789n;
const hex = (n: number) => n.toString(16).padStart(64, '0');

/** The full ts-proto decode projected to the fields the relist reads. */
function projectContainer(c: Container): ListedContainer {
  return {
    id: c.id,
    podSandboxId: c.podSandboxId,
    metadataName: c.metadata?.name,
    state: c.state,
    createdAt: c.createdAt,
    podUid: c.labels[LABEL_POD_UID],
    podName: c.labels[LABEL_POD_NAME],
    podNamespace: c.labels[LABEL_POD_NAMESPACE],
    containerName: c.labels[LABEL_CONTAINER_NAME],
    hash: c.annotations[ANNOTATION_CONTAINER_HASH],
  };
}

function projectSandbox(s: PodSandbox): ListedSandbox {
  return {
    id: s.id,
    state: s.state,
    createdAt: s.createdAt,
    podUid: s.labels[LABEL_POD_UID],
    podName: s.labels[LABEL_POD_NAME],
    podNamespace: s.labels[LABEL_POD_NAMESPACE],
  };
}

/** A container as the kubelet creates it on containerd: every field set. */
function fullContainer(i: number): Container {
  return Container.fromPartial({
    id: hex(i),
    podSandboxId: hex(i + 1_000_000),
    metadata: { name: `app-${i}`, attempt: 3 },
    image: {
      image: 'sha256:' + hex(7),
      annotations: { a: 'b' },
      userSpecifiedImage: 'docker.io/library/busybox:1.36',
      runtimeHandler: 'runc',
    },
    imageRef: 'docker.io/library/busybox@sha256:' + hex(8),
    state: ContainerState.CONTAINER_RUNNING,
    createdAt: NS + BigInt(i),
    labels: {
      [LABEL_POD_NAME]: `web-${i}`,
      [LABEL_POD_NAMESPACE]: 'default',
      [LABEL_POD_UID]: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      [LABEL_CONTAINER_NAME]: `app-${i}`,
      'io.kubernetes.container.logpath': '/var/log/pods/x/app/0.log',
    },
    annotations: {
      [ANNOTATION_CONTAINER_HASH]: (0x3c2a1f0e + i).toString(16),
      'io.kubernetes.container.restartCount': '3',
      'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
      'io.kubernetes.container.terminationMessagePolicy': 'File',
      'io.kubernetes.pod.terminationGracePeriod': '30',
    },
    imageId: 'sha256:' + hex(9),
  });
}

function fullSandbox(i: number): PodSandbox {
  return PodSandbox.fromPartial({
    id: hex(i + 1_000_000),
    metadata: { name: `web-${i}`, uid: `uid-${i}`, namespace: 'default', attempt: 1 },
    state: i % 2 ? PodSandboxState.SANDBOX_NOTREADY : PodSandboxState.SANDBOX_READY,
    createdAt: NS - BigInt(i),
    labels: {
      [LABEL_POD_NAME]: `web-${i}`,
      [LABEL_POD_NAMESPACE]: 'default',
      [LABEL_POD_UID]: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      'io.kubernetes.container.name': 'POD',
    },
    annotations: { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.seen': '2026-11-23T00:00:00Z' },
    runtimeHandler: 'runc',
  });
}

/** Unknown fields of every wire type (as a newer runtime might send). */
function unknownFields(w: BinaryWriter): BinaryWriter {
  w.tag(90, WireType.Varint).uint64(1n << 62n);
  w.tag(91, WireType.Bit64).fixed64(123n);
  w.tag(92, WireType.LengthDelimited).string('ignored ✓');
  w.tag(93, WireType.Bit32).fixed32(7);
  w.tag(94, WireType.StartGroup).tag(1, WireType.Varint).uint32(5).tag(2, WireType.LengthDelimited).string('x').tag(94, WireType.EndGroup);
  return w;
}

/** A list message: each item's encoded bytes (plus `extra` appended inside the item) as field 1. */
function list(items: Uint8Array[], extra?: (w: BinaryWriter) => BinaryWriter, outer?: (w: BinaryWriter) => BinaryWriter): Uint8Array {
  const w = new BinaryWriter();
  if (outer) outer(w);
  for (const bytes of items) {
    const inner = new BinaryWriter().raw(bytes);
    if (extra) extra(inner);
    w.tag(1, WireType.LengthDelimited).bytes(inner.finish());
  }
  if (outer) outer(w);
  return w.finish();
}

const enc = (c: Container) => Container.encode(c).finish();
const encS = (s: PodSandbox) => PodSandbox.encode(s).finish();

describe('decodeListedContainers equals the full decode projected', () => {
  const cases: [string, Uint8Array][] = [
    ['empty list', new Uint8Array(0)],
    ['one container, every field set', ListContainersResponse.encode({ containers: [fullContainer(1)] }).finish()],
    ['250 containers', ListContainersResponse.encode({ containers: Array.from({ length: 250 }, (_, i) => fullContainer(i)) }).finish()],
    ['1000 containers', ListContainersResponse.encode({ containers: Array.from({ length: 1000 }, (_, i) => fullContainer(i)) }).finish()],
    ['all defaults (no metadata, no labels)', ListContainersResponse.encode({ containers: [Container.fromPartial({})] }).finish()],
    [
      'metadata with empty name',
      ListContainersResponse.encode({ containers: [Container.fromPartial({ id: 'a', metadata: { attempt: 2 } })] }).finish(),
    ],
    [
      'not ours: no pod uid label',
      ListContainersResponse.encode({
        containers: [Container.fromPartial({ id: 'b', labels: { app: 'x' }, annotations: { y: 'z' } })],
      }).finish(),
    ],
    ['unknown fields in the list and each item', list([enc(fullContainer(1)), enc(fullContainer(2))], unknownFields, unknownFields)],
    [
      'negative, zero-padded and maximal created_at, unknown state value',
      ListContainersResponse.encode({
        containers: [
          Container.fromPartial({ id: 'n', createdAt: -5n, state: 7 as ContainerState }),
          Container.fromPartial({ id: 'm', createdAt: (1n << 63n) - 1n, state: ContainerState.CONTAINER_EXITED }),
          Container.fromPartial({ id: 'o', createdAt: -(1n << 63n), state: -1 }),
        ],
      }).finish(),
    ],
    [
      'non-ASCII label values and ids',
      ListContainersResponse.encode({
        containers: [Container.fromPartial({ id: 'ü-😀', labels: { [LABEL_POD_UID]: 'uid-é', [LABEL_POD_NAME]: '名前' } })],
      }).finish(),
    ],
    [
      'keys that differ from a wanted key in their first or last byte',
      ListContainersResponse.encode({
        containers: [
          Container.fromPartial({
            id: 'k',
            labels: { [LABEL_POD_UID]: 'yes', 'Io.kubernetes.pod.uid': 'no', 'io.kubernetes.pod.uiD': 'no' },
          }),
        ],
      }).finish(),
    ],
    [
      'duplicate label entries and repeated metadata (last wins)',
      list([enc(fullContainer(3))], (w) =>
        w
          .tag(8, WireType.LengthDelimited)
          .bytes(
            new BinaryWriter()
              .tag(1, WireType.LengthDelimited)
              .string(LABEL_POD_UID)
              .tag(2, WireType.LengthDelimited)
              .string('later')
              .finish(),
          )
          .tag(3, WireType.LengthDelimited)
          .bytes(new BinaryWriter().tag(2, WireType.Varint).uint32(9).finish())
          .tag(1, WireType.LengthDelimited)
          .string('id-again'),
      ),
    ],
    [
      'map entries with missing key or value, value before key, unknown fields inside',
      list([enc(Container.fromPartial({ id: 'e' }))], (w) =>
        w
          .tag(8, WireType.LengthDelimited)
          .bytes(new BinaryWriter().tag(1, WireType.LengthDelimited).string(LABEL_POD_NAME).finish())
          .tag(8, WireType.LengthDelimited)
          .bytes(new BinaryWriter().tag(2, WireType.LengthDelimited).string('no-key').finish())
          .tag(9, WireType.LengthDelimited)
          .bytes(
            unknownFields(
              new BinaryWriter()
                .tag(2, WireType.LengthDelimited)
                .string('h1')
                .tag(1, WireType.LengthDelimited)
                .string(ANNOTATION_CONTAINER_HASH),
            ).finish(),
          ),
      ),
    ],
    [
      'a known field with an unexpected wire type is skipped',
      list([enc(Container.fromPartial({ id: 'w', state: ContainerState.CONTAINER_RUNNING }))], (w) =>
        w.tag(1, WireType.Varint).uint32(5).tag(6, WireType.LengthDelimited).string('x').tag(7, WireType.Bit64).fixed64(1n),
      ),
    ],
  ];
  it.each(cases)('%s', (_name, bytes) => {
    const full = ListContainersResponse.decode(bytes).containers.map(projectContainer);
    expect(decodeListedContainers(bytes)).toEqual(full);
    expect(decodeListedContainers(Buffer.from(bytes))).toEqual(full);
  });
});

describe('decodeListedSandboxes equals the full decode projected', () => {
  const cases: [string, Uint8Array][] = [
    ['empty list', new Uint8Array(0)],
    ['one sandbox, every field set', ListPodSandboxResponse.encode({ items: [fullSandbox(1)] }).finish()],
    ['250 sandboxes', ListPodSandboxResponse.encode({ items: Array.from({ length: 250 }, (_, i) => fullSandbox(i)) }).finish()],
    ['all defaults', ListPodSandboxResponse.encode({ items: [PodSandbox.fromPartial({})] }).finish()],
    ['unknown fields in the list and each item', list([encS(fullSandbox(1)), encS(fullSandbox(2))], unknownFields, unknownFields)],
    [
      'duplicate state and created_at (last wins)',
      list([encS(fullSandbox(4))], (w) =>
        w.tag(3, WireType.Varint).int32(PodSandboxState.SANDBOX_NOTREADY).tag(4, WireType.Varint).int64(42n),
      ),
    ],
  ];
  it.each(cases)('%s', (_name, bytes) => {
    const full = ListPodSandboxResponse.decode(bytes).items.map(projectSandbox);
    expect(decodeListedSandboxes(bytes)).toEqual(full);
  });
});

describe('malformed bytes', () => {
  const malformed = /^List(Containers|PodSandbox)Response: malformed response at byte \d+ of \d+: .+/;
  const cases: [string, Uint8Array, RegExp][] = [
    ['truncated varint', Uint8Array.of(0x0a, 0x80), /truncated varint/],
    ['length past the end', Uint8Array.of(0x0a, 0x05, 0x0a, 0x01), /length 5 runs past the end/],
    [
      'inner length past the item',
      Uint8Array.of(0x0a, 0x03, 0x0a, 0x05, 0x61),
      /length 5 runs past the end of its message \(1 bytes left\)/,
    ],
    ['varint longer than 10 bytes', Uint8Array.of(0x0a, 0x0c, 0x38, ...Array<number>(11).fill(0xff)), /varint longer than 10 bytes/],
    ['wire type 6', Uint8Array.of(0x0e), /wire type 6/],
    ['wire type 7 inside an item', Uint8Array.of(0x0a, 0x01, 0x0f), /wire type 7/],
    ['field number 0', Uint8Array.of(0x00), /field number 0/],
    ['truncated fixed64', Uint8Array.of(0x09, 1, 2, 3), /truncated 8-byte field/],
    ['unclosed group', Uint8Array.of(0x0b, 0x08, 0x01), /truncated varint/],
    ['mismatched end group', Uint8Array.of(0x0b, 0x14), /end group 2 closes group 1/],
  ];
  it.each(cases)('%s: a clear error', (_name, bytes, detail) => {
    for (const decode of [decodeListedContainers, decodeListedSandboxes]) {
      let thrown: unknown;
      try {
        decode(bytes);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(KubeletTsError);
      expect((thrown as Error).message).toMatch(malformed);
      expect((thrown as Error).message).toMatch(detail);
    }
  });

  it('every truncation of a valid response either decodes like the full decoder or fails with the clear error', () => {
    const bytes = ListContainersResponse.encode({ containers: [fullContainer(1), fullContainer(2)] }).finish();
    let failures = 0;
    for (let n = 0; n < bytes.length; n++) {
      const prefix = bytes.subarray(0, n);
      let partial: ListedContainer[] | undefined;
      try {
        partial = decodeListedContainers(prefix);
      } catch (err) {
        expect(err).toBeInstanceOf(KubeletTsError);
        expect((err as Error).message).toMatch(malformed);
        failures++;
        continue;
      }
      expect(partial).toEqual(ListContainersResponse.decode(prefix).containers.map(projectContainer));
    }
    // Only the two item boundaries (0 and the end of the first item) are valid prefixes.
    expect(failures).toBe(bytes.length - 2);
  });
});
