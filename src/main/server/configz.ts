/**
 * GET /configz: {"kubeletconfig": …}, the effective configuration in the
 * KubeletConfiguration v1beta1 JSON shape (upstream converts its internal
 * config to v1beta1): every field the config file may set, durations as Go
 * duration strings ("1m0s").
 */
import { goDuration } from '../../common/go-duration.js';
import { durationString } from '../config/duration-schema.js';
import { KubeletConfigurationFileSchema, type KubeletConfig } from '../config/kubelet-config.js';

const isDuration = (schema: unknown): boolean => (schema as { unwrap?: () => unknown }).unwrap?.() === durationString;

export function configz(config: KubeletConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const shape = KubeletConfigurationFileSchema.shape as Record<string, unknown>;
  const src = config as unknown as Record<string, unknown>;
  for (const key of Object.keys(shape)) {
    if (key === 'apiVersion' || key === 'kind' || !(key in src)) continue;
    const value = src[key];
    if (isDuration(shape[key]) && typeof value === 'number') out[key] = goDuration(value);
    else if (key === 'evictionSoftGracePeriod') {
      out[key] = Object.fromEntries(Object.entries(value as Record<string, number>).map(([k, ms]) => [k, goDuration(ms)]));
    } else out[key] = value;
  }
  const a = config.authentication;
  out.authentication = {
    x509: a.x509.clientCAFile ? { clientCAFile: a.x509.clientCAFile } : {},
    webhook: { enabled: a.webhook.enabled, cacheTTL: goDuration(a.webhook.cacheTTL) },
    anonymous: { enabled: a.anonymous.enabled },
  };
  const z = config.authorization;
  out.authorization = {
    mode: z.mode,
    webhook: {
      cacheAuthorizedTTL: goDuration(z.webhook.cacheAuthorizedTTL),
      cacheUnauthorizedTTL: goDuration(z.webhook.cacheUnauthorizedTTL),
    },
  };
  return out;
}
