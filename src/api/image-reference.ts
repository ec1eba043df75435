/**
 * Container image references as the kubelet reads them (upstream
 * pkg/util/parsers ParseImageName and images.applyDefaultImageTag, over the
 * docker/distribution reference grammar that @swimlane/docker-reference
 * implements): a reference without tag and digest means `:latest`.
 */
import { parseFamiliarName } from '@swimlane/docker-reference';

export interface ImageName {
  /** Normalized repository, e.g. docker.io/library/busybox. */
  repository: string;
  /** The tag; "latest" when there is neither tag nor digest. */
  tag: string;
  digest: string;
}

/** Upstream ParseImageName. Throws when the reference does not parse. */
export function parseImageName(image: string): ImageName {
  const ref = parseFamiliarName(image);
  const tag = ref.tag ?? '';
  const digest = ref.digest ?? '';
  return { repository: `${ref.domain}/${ref.repository}`, tag: tag || digest ? tag : 'latest', digest };
}

/**
 * Upstream applyDefaultImageTag: appends `:latest` when the reference has no
 * tag and no digest, keeping the name as written (no docker.io/library/
 * qualification). Throws when the reference does not parse.
 */
export function applyDefaultImageTag(image: string): string {
  const { tag, digest } = parseImageName(image);
  if (!digest && tag && !image.endsWith(`:${tag}`)) return `${image}:${tag}`;
  return image;
}
