import { CONTAINERD_ENDPOINT, describeE2E } from './e2e-env.js';
import { defineCriConformance } from '../conformance/cri-conformance.js';

describeE2E('containerd', () => {
  defineCriConformance('containerd', async () => ({ endpoint: CONTAINERD_ENDPOINT, close: async () => undefined }));
});
