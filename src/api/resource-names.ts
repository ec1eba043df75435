/**
 * Resource names (upstream pkg/apis/core/v1/helper): which names in a
 * ResourceList are extended resources — those a device plugin or an operator
 * adds (`example.com/dongle`), as opposed to the native ones (no domain, or a
 * kubernetes.io domain). Pure.
 */

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** apimachinery validation.IsQualifiedName: `[prefix/]name`, the prefix a DNS subdomain. */
function isQualifiedName(value: string): boolean {
  const parts = value.split('/');
  if (parts.length > 2) return false;
  const name = parts.at(-1)!;
  if (name.length === 0 || name.length > 63 || !QUALIFIED_NAME.test(name)) return false;
  if (parts.length === 1) return true;
  const prefix = parts[0];
  return prefix.length > 0 && prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix);
}

/** Upstream IsExtendedResourceName: not native, not a quota `requests.` name, and valid as `requests.<name>`. */
export function isExtendedResourceName(name: string): boolean {
  const native = !name.includes('/') || name.includes('kubernetes.io/');
  if (native || name.startsWith('requests.')) return false;
  return isQualifiedName(`requests.${name}`);
}
