import { Gauge, type Registry } from 'prom-client';

/** kubelet_node_name{node="<name>"} 1, as upstream registers at start. */
export function nodeNameMetric(registry: Registry, nodeName: string): void {
  new Gauge({
    name: 'kubelet_node_name',
    help: "The node's name. The count is always 1.",
    labelNames: ['node'],
    registers: [registry],
  }).set({ node: nodeName }, 1);
}
