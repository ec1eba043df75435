import { describe, expect, it } from 'vitest';
import { parseNetDev } from '../../src/common/net-dev.js';

const HEADER = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
`;

describe('parseNetDev (cadvisor scanInterfaceStats)', () => {
  it('reads bytes and errors of each interface, leaving out lo, veth* and docker*', () => {
    const text =
      HEADER +
      `    lo: 5531081759 9441342    0    1    0     0          0         0 5531081759 9441342    0    0    0     0       0          0
  eth0: 2101110617   69312    3    0    0     0          0         0  8567687   58313    4    0    0     0       0          0
vethab12:     100       1    0    0    0     0          0         0      200       2    0    0    0     0       0          0
DOCKER0:      1       1    0    0    0     0          0         0        1       1    0    0    0     0       0          0
  ifb0:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
`;
    expect(parseNetDev(text)).toEqual([
      { name: 'eth0', rxBytes: 2101110617n, rxErrors: 3n, txBytes: 8567687n, txErrors: 4n },
      { name: 'ifb0', rxBytes: 0n, rxErrors: 0n, txBytes: 0n, txErrors: 0n },
    ]);
  });

  it('counters beyond 2^53 stay exact; a name glued to its first figure is read apart', () => {
    const text = `${HEADER}eth1:18446744073709551615 1 0 0 0 0 0 0 9007199254740993 1 0 0 0 0 0 0\n`;
    expect(parseNetDev(text)).toEqual([
      { name: 'eth1', rxBytes: 18446744073709551615n, rxErrors: 0n, txBytes: 9007199254740993n, txErrors: 0n },
    ]);
  });

  it('a malformed line makes the whole file untrusted, as in cadvisor', () => {
    expect(parseNetDev(`${HEADER}  eth0: 1 2 3\n`)).toBeUndefined();
    expect(parseNetDev(`${HEADER}  eth0: 1 2 3 4 5 6 7 8 x 10 11 12 13 14 15 16\n`)).toBeUndefined();
    expect(parseNetDev(HEADER)).toEqual([]);
  });
});
