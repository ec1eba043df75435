/**
 * "Did you mean" for names a user typed: flags, configuration fields and
 * manifest fields all go through here, so every hint reads and ranks the same.
 *
 * A candidate is offered when its edit distance (Levenshtein, case ignored)
 * to what was typed is at most a third of the longer name, or 2 (a typo, a
 * missing letter, two swapped letters), and shorter than both names (so a
 * short name is not offered for a different one); every candidate at the
 * smallest such distance is offered, in the order given, at most three.
 */
import { distance } from 'fastest-levenshtein';

const MAX_OFFERED = 3;

/** The candidates closest to `typed`, or [] when none is close enough. */
export function closestNames(typed: string, candidates: Iterable<string>): string[] {
  const lower = typed.toLowerCase();
  let best = Infinity;
  let found: string[] = [];
  for (const c of candidates) {
    if (c === typed) continue;
    const d = distance(lower, c.toLowerCase());
    if (d > Math.max(2, Math.floor(Math.max(typed.length, c.length) / 3)) || d >= Math.min(typed.length, c.length)) continue;
    if (d < best) {
      best = d;
      found = [c];
    } else if (d === best && !found.includes(c)) found.push(c);
  }
  return found.slice(0, MAX_OFFERED);
}

/** "did you mean X?" / "did you mean X or Y?", or '' when nothing is close; `format` quotes or prefixes each name. */
export function didYouMean(typed: string, candidates: Iterable<string>, format: (name: string) => string = (n) => n): string {
  const names = closestNames(typed, candidates).map(format);
  if (names.length === 0) return '';
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
  return `did you mean ${list}?`;
}
