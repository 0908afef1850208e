/**
 * A value kept per object (a request, its view), the way a WeakMap keeps one, but in a symbol
 * property of the object when it takes one. Every request sets a few of these and dies young: a
 * WeakMap entry for a short-lived key is costly for the garbage collector (an ephemeron it must
 * revisit, measured at over a microsecond per entry beside tens of nanoseconds for a property),
 * and the HTTP bench profiles showed that time as GC. A frozen or sealed object still gets
 * its value, from a WeakMap. The symbol is not exported, so only this module reads the slot.
 */
export interface Slot<T> {
  get(target: object): T | undefined;
  set(target: object, value: T): void;
}

export function createSlot<T>(description: string): Slot<T> {
  const symbol = Symbol(description);
  let fallback: WeakMap<object, T> | undefined;
  return {
    get(target) {
      const own = (target as { [symbol]?: T })[symbol];
      // Most lookups find nothing (a request no limiter decided): no WeakMap probe for those
      // until some frozen object has needed one.
      return own !== undefined || fallback === undefined ? own : fallback.get(target);
    },
    set(target, value) {
      if (Object.isExtensible(target)) (target as { [symbol]?: T })[symbol] = value;
      else {
        fallback ??= new WeakMap();
        fallback.set(target, value);
      }
    },
  };
}
