/**
 * A reference filled in after its readers are built, for the few cycles in
 * the agent's wiring (the PLEG tells the syncer its cache changed; the syncer
 * is built later from the PLEG). It makes the cycle explicit where a closure
 * over a later `const` would hide it, and a read before set() fails loudly.
 */
export class Late<T> {
  private value: T | undefined;
  private isSet = false;

  constructor(private readonly what: string) {}

  set(value: T): T {
    this.value = value;
    this.isSet = true;
    return value;
  }

  get(): T {
    if (!this.isSet) throw new Error(`${this.what} was used before it was built`);
    return this.value as T;
  }
}
