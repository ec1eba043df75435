/**
 * The volume manager's metrics, upstream names and buckets
 * (pkg/volume/util/metrics.go). Main thread only.
 */
import { Histogram, type Registry } from 'prom-client';

/** Upstream storageOperationMetric buckets. */
export const STORAGE_OPERATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600];

export type StorageOperation = 'volume_mount' | 'volume_unmount';

export interface VolumeMetrics {
  /** storage_operation_duration_seconds{volume_plugin, operation_name, status="success"|"fail-unknown", migrated="false"} */
  observe(plugin: string, operation: StorageOperation, ok: boolean, seconds: number): void;
}

export function volumeMetrics(registry: Registry): VolumeMetrics {
  const duration = new Histogram({
    name: 'storage_operation_duration_seconds',
    help: 'Storage operation duration',
    labelNames: ['volume_plugin', 'operation_name', 'status', 'migrated'],
    buckets: STORAGE_OPERATION_BUCKETS,
    registers: [registry],
  });
  return {
    observe(plugin, operation, ok, seconds) {
      duration.observe(
        { volume_plugin: plugin, operation_name: operation, status: ok ? 'success' : 'fail-unknown', migrated: 'false' },
        seconds,
      );
    },
  };
}
