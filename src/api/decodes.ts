import type { z } from 'zod';

/**
 * `decodes<M>()(schema)` returns `schema` unchanged. It compiles only when the
 * schema's output type is assignable to the model type `M`, which is how a zod
 * decoder of untrusted input is tied to the one model in core-v1.ts: a field
 * the decoder types differently from client-node's model is a compile error.
 */
export function decodes<M>(): <S extends z.ZodType<M>>(schema: S) => S {
  return (schema) => schema;
}
