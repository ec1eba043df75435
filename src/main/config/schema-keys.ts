/**
 * The field names a zod object schema accepts at a path of the value it
 * parses, for "did you mean" on an unknown configuration field. Walks zod v4
 * schema definitions: wrappers (optional, nullable, default, pipe, ...) to
 * what they wrap, arrays to their element, records to their value, unions to
 * every option. Undefined when the path does not lead to an object schema.
 */
import type * as z from 'zod';

type Def = {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  getter?: () => z.ZodType;
};

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The schemas a value at `path` below `schema` is checked against. */
function schemasAt(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodType[] {
  const def = defOf(schema);
  const inner = def.innerType ?? def.in ?? def.getter?.();
  if (inner) return schemasAt(inner, path);
  if (def.type === 'union' && def.options) return def.options.flatMap((o) => schemasAt(o, path));
  if (path.length === 0) return [schema];
  const [head, ...rest] = path;
  if (def.type === 'object' && typeof head === 'string' && def.shape?.[head]) return schemasAt(def.shape[head], rest);
  if (def.type === 'array' && typeof head === 'number' && def.element) return schemasAt(def.element, rest);
  if (def.type === 'record' && def.valueType) return schemasAt(def.valueType, rest);
  return [];
}

export function objectKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] | undefined {
  const keys = schemasAt(schema, path).flatMap((s) => Object.keys(defOf(s).shape ?? {}));
  return keys.length > 0 ? [...new Set(keys)] : undefined;
}
