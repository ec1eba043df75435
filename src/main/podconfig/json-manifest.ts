/**
 * A fast path for manifests that are plain JSON (what `kubectl -o json` and
 * config managers write): JSON.parse instead of the YAML parser, which costs
 * ~0.3 ms a manifest (1000 static pods: ~0.3 s of the main thread before the
 * first SET). It must give exactly what the YAML path of parseManifest
 * (common/yaml-go.ts: yaml.parse with GO_YAML_OPTIONS, then goYamlToJson with
 * bigint integers) gives, so it only answers for the texts where that is
 * certain and returns undefined (use the YAML parser) for anything else:
 *
 *  - not valid JSON, or its top level is not an object;
 *  - a character outside printable ASCII, tab, LF and CR (YAML's own rules
 *    for line breaks and non-printable characters then need not be matched);
 *  - a number that is not an integer literal of at most 15 digits (YAML
 *    gives a float as a number and an integer as an exact bigint; a token's
 *    form is not visible once JSON.parse has read it);
 *  - a duplicate key in an object (YAML rejects it; JSON.parse keeps the last);
 *  - a `"__proto__"` key, or nesting deeper than {@link MAX_DEPTH} (the YAML
 *    parser runs out of stack on very deep documents).
 *
 * The result holds integers as bigint, as the YAML parser's does.
 */

/** Strings, colons and number tokens outside strings (only valid JSON text is scanned). */
const TOKENS = /"[^"\\]*(?:\\.[^"\\]*)*"|[:{}[\]]|-?\d[\d.eE+-]*/g;
const INTEGER = /^-?\d{1,15}$/;
const NOT_PRINTABLE_ASCII = /[^\t\n\r\x20-\x7e]/;
const MAX_DEPTH = 64;

/** The text's key/value pairs, or undefined when a token or the nesting rules the fast path out. */
function countPairs(text: string): number | undefined {
  let pairs = 0;
  let depth = 0;
  for (const [t] of text.matchAll(TOKENS)) {
    switch (t[0]) {
      case '"':
        if (t === '"__proto__"') return undefined;
        break;
      case ':':
        pairs++;
        break;
      case '{':
      case '[':
        if (++depth > MAX_DEPTH) return undefined;
        break;
      case '}':
      case ']':
        depth--;
        break;
      default:
        if (!INTEGER.test(t)) return undefined;
    }
  }
  return pairs;
}

/** The document of a JSON manifest as the YAML path reads it (integers as bigint), or undefined: parse it as YAML. */
export function parseJsonManifest(text: string): Record<string, unknown> | undefined {
  const start = text.trimStart()[0];
  if (start !== '{' || NOT_PRINTABLE_ASCII.test(text)) return undefined;
  let members = 0;
  let doc: unknown;
  try {
    doc = JSON.parse(text, function (this: unknown, _key: string, value: unknown) {
      if (!Array.isArray(this)) members++;
      return typeof value === 'number' ? BigInt(value) : value;
    });
  } catch {
    return undefined;
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return undefined;
  // The reviver also ran once for the top-level value (its holder is a wrapper object).
  return countPairs(text) === members - 1 ? (doc as Record<string, unknown>) : undefined;
}
