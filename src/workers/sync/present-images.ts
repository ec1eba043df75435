/**
 * The images this thread's ImageStatus calls found present moments ago, so
 * the next container start that needs the same image within PRESENT_TTL_MS
 * does not ask the runtime again (a boot of 1000 pods of one image asked it
 * 1000 times; now each thread asks about once per PRESENT_TTL_MS).
 *
 * Upstream (images.imageManager.EnsureImageExists) calls ImageStatus before
 * every container start. Skipping it changes nothing a pod can observe unless
 * the image is removed inside that window; upstream has the same race between
 * its ImageStatus and CreateContainer, only narrower. The outcome is also the
 * same: CreateContainer fails (CreateContainerError), the sync clears this
 * memory (forgetAll), and the retry asks the runtime and pulls. Only answers
 * "present" are kept, and only for IfNotPresent and Never: Always pulls as
 * upstream does. docs/architecture.md, "Start-up time", has the measurement.
 */

/** How long an ImageStatus answer "present" is reused. */
export const PRESENT_TTL_MS = 2_000;
/** At most this many images are remembered (a node starts few distinct images in 2 s). */
const MAX_IMAGES = 256;

export class PresentImages {
  private readonly seen = new Map<string, { id: string; at: number }>();

  constructor(private readonly ttlMs = PRESENT_TTL_MS) {}

  /** The image's id when an ImageStatus found it present less than the TTL before `now`. */
  get(image: string, now: number): string | undefined {
    const entry = this.seen.get(image);
    if (!entry) return undefined;
    if (now - entry.at < this.ttlMs && now >= entry.at) return entry.id;
    this.seen.delete(image);
    return undefined;
  }

  /** ImageStatus found the image present at `now`. */
  remember(image: string, id: string, now: number): void {
    this.seen.delete(image);
    if (this.seen.size >= MAX_IMAGES) {
      for (const [name, e] of this.seen) if (now - e.at >= this.ttlMs || now < e.at) this.seen.delete(name);
      if (this.seen.size >= MAX_IMAGES) this.seen.delete(this.seen.keys().next().value as string);
    }
    this.seen.set(image, { id, at: now });
  }

  /** A container failed to be created: the next start asks the runtime again. */
  forgetAll(): void {
    this.seen.clear();
  }
}
