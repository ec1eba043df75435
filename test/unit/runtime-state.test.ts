import { describe, expect, it } from 'vitest';
import { CriUnavailableError } from '../../src/common/errors.js';
import { silentLogger } from '../../src/common/logger.js';
import type { CriClient } from '../../src/cri/client.js';
import { RuntimeState } from '../../src/main/kubelet/runtime-state.js';
import { FakeClock } from '../fakes/fake-clock.js';

type Cond = { type: string; status: boolean; reason: string; message: string };
const ready = (type: string): Cond => ({ type, status: true, reason: '', message: '' });
const notReady = (type: string, reason: string, message: string): Cond => ({ type, status: false, reason, message });
const BOTH_READY = [ready('RuntimeReady'), ready('NetworkReady')];

/** A CRI whose Status answers from a script: a list of conditions, or an error. */
function fakeCri() {
  let next: Cond[] | Error = BOTH_READY;
  const counter = { calls: 0 };
  const cri = {
    status: async () => {
      counter.calls++;
      if (next instanceof Error) throw next;
      return { status: { conditions: next }, info: {}, runtimeHandlers: [] };
    },
  };
  return { cri: cri as unknown as Pick<CriClient, 'status'>, counter, answer: (a: Cond[] | Error) => (next = a) };
}

function setup(pleg = { ok: true, message: '' }) {
  const clock = new FakeClock();
  const { cri, answer, counter } = fakeCri();
  const state = new RuntimeState(cri, { healthy: () => pleg }, clock, silentLogger());
  return { clock, state, answer, pleg, counter };
}

const NOT_YET = 'container runtime status check may not have completed yet';

// Upstream runtimeState.runtimeErrors / networkErrors and Kubelet.updateRuntimeUp.
describe('RuntimeState', () => {
  it('before any Status call: not yet checked, network state unknown', () => {
    const { state } = setup();
    expect(state.runtimeErrors()).toEqual([NOT_YET]);
    expect(state.networkErrors()).toBe('network state unknown');
  });

  it.each<{ name: string; conditions: Cond[]; runtime: string[]; network: string | undefined }>([
    { name: 'both ready', conditions: BOTH_READY, runtime: [], network: undefined },
    {
      name: 'RuntimeReady=false',
      conditions: [notReady('RuntimeReady', 'R', 'M'), ready('NetworkReady')],
      runtime: [NOT_YET, 'Container runtime not ready: RuntimeReady=false reason:R message:M'],
      network: undefined,
    },
    {
      name: 'RuntimeReady missing',
      conditions: [ready('NetworkReady')],
      runtime: [NOT_YET, 'Container runtime not ready: <nil>'],
      network: undefined,
    },
    {
      name: 'NetworkReady=false',
      conditions: [
        ready('RuntimeReady'),
        notReady('NetworkReady', 'NetworkPluginNotReady', 'Network plugin returns error: cni plugin not initialized'),
      ],
      runtime: [],
      network:
        'runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized',
    },
    { name: 'NetworkReady missing', conditions: [ready('RuntimeReady')], runtime: [], network: 'runtime network not ready: <nil>' },
    {
      name: 'nothing ready',
      conditions: [],
      runtime: [NOT_YET, 'Container runtime not ready: <nil>'],
      network: 'runtime network not ready: <nil>',
    },
  ])('first Status: $name', async ({ conditions, runtime, network }) => {
    const { state, answer } = setup();
    answer(conditions);
    await state.update();
    expect(state.runtimeErrors()).toEqual(runtime);
    expect(state.networkErrors()).toBe(network);
  });

  it('a failing Status keeps the last state until 30 s after the last good one, then "container runtime is down"', async () => {
    const { clock, state, answer } = setup();
    await state.update();
    answer(new CriUnavailableError('connection refused', 'Status', 14));
    for (const [step, expected] of [
      [5000, []],
      [24_999, []],
      [1, ['container runtime is down']],
      [60_000, ['container runtime is down']],
    ] as const) {
      clock.step(step);
      await state.update();
      expect(state.runtimeErrors()).toEqual(expected);
      expect(state.networkErrors()).toBeUndefined();
    }
    answer(BOTH_READY);
    await state.update();
    expect(state.runtimeErrors()).toEqual([]);
  });

  it('a failing Status before any success stays "not completed yet", never "down"', async () => {
    const { clock, state, answer } = setup();
    answer(new CriUnavailableError('connection refused', 'Status', 14));
    await state.update();
    clock.step(120_000);
    await state.update();
    expect(state.runtimeErrors()).toEqual([NOT_YET]);
    expect(state.networkErrors()).toBe('network state unknown');
  });

  it('RuntimeReady=false after a success: the condition, then also "down" once 30 s passed', async () => {
    const { clock, state, answer } = setup();
    await state.update();
    answer([notReady('RuntimeReady', 'ContainerdNotReady', 'shim gone'), ready('NetworkReady')]);
    clock.step(5000);
    await state.update();
    const notReadyMsg = 'Container runtime not ready: RuntimeReady=false reason:ContainerdNotReady message:shim gone';
    expect(state.runtimeErrors()).toEqual([notReadyMsg]);
    clock.step(25_000);
    await state.update();
    expect(state.runtimeErrors()).toEqual(['container runtime is down', notReadyMsg]);
    answer(BOTH_READY);
    await state.update();
    expect(state.runtimeErrors()).toEqual([]);
  });

  it('an unhealthy PLEG adds "PLEG is not healthy: <why>"', async () => {
    const { state, pleg } = setup();
    await state.update();
    Object.assign(pleg, { ok: false, message: 'pleg was last seen active 3m0.5s ago; threshold is 3m0s' });
    expect(state.runtimeErrors()).toEqual(['PLEG is not healthy: pleg was last seen active 3m0.5s ago; threshold is 3m0s']);
    pleg.ok = true;
    expect(state.runtimeErrors()).toEqual([]);
  });

  it('start() polls Status every 5 s until aborted', async () => {
    const { clock, state, counter } = setup();
    const ac = new AbortController();
    state.start(ac.signal);
    const settle = () => new Promise<void>((r) => setImmediate(r));
    await settle();
    expect(counter.calls).toBe(1);
    for (let i = 0; i < 3; i++) {
      clock.step(4999);
      await settle();
      expect(counter.calls).toBe(1 + i);
      clock.step(1);
      await settle();
      expect(counter.calls).toBe(2 + i);
    }
    ac.abort();
    clock.step(60_000);
    await settle();
    expect(counter.calls).toBe(4);
  });
});
