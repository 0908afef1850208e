// Floodgate keys as Deno KV keys: the store's root parts, then the Floodgate key string as one
// more part. One part holding the whole string keeps the mapping injective (two different
// strings are two different keys, whatever bytes they hold), and a list under the root finds
// every key the store wrote (keys of one prefix sort together: a range from the prefix).
import { FloodgateError } from '@floodgate/core';
import type { DenoKvKey } from './kv-types.js';

/** Deno KV's largest key, serialized (both Deno and `@deno/kv`). */
const MAX_KEY_BYTES = 2048;

const utf8 = new TextEncoder();

/** A string part's serialized size: a type byte, its UTF-8 bytes (NUL escaped), a terminator. */
export function partBytes(part: string): number {
  const b = utf8.encode(part);
  let size = b.length + 2;
  for (const x of b) if (x === 0) size++;
  return size;
}

/** Maps Floodgate keys under a root, checking each fits Deno KV's key size. */
export class KeyMap {
  readonly root: readonly string[];
  readonly #rootBytes: number;

  constructor(root: readonly string[]) {
    this.root = root;
    this.#rootBytes = root.reduce((sum, p) => sum + partBytes(p), 0);
  }

  /** `[...root, key]`; a key too long for Deno KV is a configuration error, thrown first. */
  of(key: string): DenoKvKey {
    // A UTF-16 unit is at most 3 UTF-8 bytes (a pair, 4 for 2): the exact count only when close.
    if (this.#rootBytes + key.length * 3 + 2 > MAX_KEY_BYTES) {
      const size = this.#rootBytes + partBytes(key);
      if (size > MAX_KEY_BYTES) {
        throw new FloodgateError(
          'INVALID_OPTION',
          `DenoKvStore: the key ${JSON.stringify(key.slice(0, 60))}… is ${size} bytes under the root, above Deno KV's ${MAX_KEY_BYTES}: shorten the limiter's prefix, its policy names or the store's root`,
        );
      }
    }
    return [...this.root, key];
  }

  /** The Floodgate key of a Deno KV key under the root, or undefined for any other key. */
  back(key: readonly unknown[]): string | undefined {
    const n = this.root.length;
    if (key.length !== n + 1) return undefined;
    for (let i = 0; i < n; i++) if (key[i] !== this.root[i]) return undefined;
    return typeof key[n] === 'string' ? key[n] : undefined;
  }
}
