// The bytes a DenoKvStore value holds. A Uint8Array, not the state as a structured-clone value:
// Deno and `@deno/kv` store bytes as they are (no V8 serializer on either side), so a Deno
// process and a Node process share one database and read each other's values; and a
// slidingWindowLog's log (up to 10 000 [ms, before, cost] triples) fits Deno KV's 64 KiB value
// limit only delta-encoded (README: "Values").
//
// Layout: a format byte, then the state's logical expiry (epoch ms on the writers' clock; the
// entry is absent to a reader whose clock has reached it, whatever KV's own expiry has done),
// then the payload. Integers are unsigned LEB128 varints up to 2^53, so beyond 28 bits they are
// built with arithmetic: bit operators stop at 32 bits.
import { FloodgateError } from '@floodgate/core';
import type { PolicyState } from '@floodgate/core/store';

const STATE = 1;
const LEASES = 2;
/** Deno KV's largest value, in bytes (both Deno and `@deno/kv`). */
export const MAX_VALUE_BYTES = 65_536;
/** The integer part of a number token stays below 2^53: |delta| at most 2^50. */
const MAX_DELTA = 2 ** 50;

// One buffer for every encoding: encodings run synchronously, one at a time, and each value
// leaves as a copy of exactly its bytes.
let scratch = new Uint8Array(256);
let scratchView = new DataView(scratch.buffer);

class Writer {
  at = 0;

  room(n: number): void {
    if (this.at + n <= scratch.length) return;
    const next = new Uint8Array(Math.max(scratch.length * 2, this.at + n));
    next.set(scratch.subarray(0, this.at));
    scratch = next;
    scratchView = new DataView(scratch.buffer);
  }

  byte(b: number): void {
    this.room(1);
    scratch[this.at++] = b;
  }

  varint(n: number): void {
    this.room(8);
    while (n >= 128) {
      scratch[this.at++] = (n % 128) + 128;
      n = Math.floor(n / 128);
    }
    scratch[this.at++] = n;
  }

  float(x: number): void {
    this.room(8);
    scratchView.setFloat64(this.at, x, true);
    this.at += 8;
  }

  raw(b: Uint8Array): void {
    this.room(b.length);
    scratch.set(b, this.at);
    this.at += b.length;
  }

  done(what: string): Uint8Array {
    if (this.at > MAX_VALUE_BYTES) {
      throw new FloodgateError(
        'STORE_UNAVAILABLE',
        `DenoKvStore: ${what} takes ${this.at} bytes, above Deno KV's ${MAX_VALUE_BYTES}-byte value limit`,
      );
    }
    return scratch.slice(0, this.at);
  }
}

class Reader {
  at = 0;
  readonly bytes: Uint8Array;
  #view: DataView | undefined;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }

  byte(): number {
    if (this.at >= this.bytes.length) throw corrupt();
    return this.bytes[this.at++]!;
  }

  varint(): number {
    const bytes = this.bytes;
    let at = this.at;
    let n = 0;
    // Seven bits a byte: shifts while the value fits 28 bits (small integers stay unboxed),
    // multiplications beyond.
    for (let shift = 0; ; shift += 7) {
      const b = bytes[at++];
      if (b === undefined || shift > 49) throw corrupt();
      n = shift < 28 ? n | ((b & 127) << shift) : n + (b & 127) * 2 ** shift;
      if (b < 128) break;
    }
    this.at = at;
    return n;
  }

  float(): number {
    if (this.at + 8 > this.bytes.length) throw corrupt();
    this.#view ??= new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
    const x = this.#view.getFloat64(this.at, true);
    this.at += 8;
    return x;
  }

  take(n: number): Uint8Array {
    if (this.at + n > this.bytes.length) throw corrupt();
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
}

function corrupt(): FloodgateError {
  return new FloodgateError('STORE_PROTOCOL', 'DenoKvStore: a stored value is not Floodgate state');
}

/** The value's bytes, or undefined (absent); anything else was not written by Floodgate. */
function bytesOf(value: unknown): Uint8Array | undefined {
  if (value === null || value === undefined) return undefined;
  if (value instanceof Uint8Array) return value;
  throw corrupt();
}

// Numbers: a varint token, even for an integer as its zigzagged delta from the number `STRIDE`
// places back (a log's triples, column by column: small deltas, one to three bytes each), 1 for
// any other number, which follows as a float64. Lossless for every double, -0 included.
const STRIDE = 3;

/** The delta an even token holds (small ones in int32 arithmetic, the rest in doubles). */
function unzigzag(t: number): number {
  if (t % 2 === 1) throw corrupt();
  if (t < 2 ** 30) {
    const z = t >> 1;
    return (z & 1) === 0 ? z >> 1 : -((z + 1) >> 1);
  }
  const z = t / 2;
  return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
}

/** A policy, block or override state with its logical expiry, as stored bytes. */
export function encodeState(state: PolicyState, expiresAt: number): Uint8Array {
  const w = new Writer();
  w.byte(STATE);
  w.varint(expiresAt);
  w.varint(state.length);
  for (let i = 0; i < state.length; i++) {
    const x = state[i]!;
    const base = i >= STRIDE ? state[i - STRIDE]! : 0;
    const d = x - base;
    if (
      Number.isSafeInteger(x) &&
      Number.isSafeInteger(base) &&
      !Object.is(x, -0) &&
      Math.abs(d) <= MAX_DELTA
    ) {
      w.varint((d >= 0 ? d * 2 : -d * 2 - 1) * 2);
    } else {
      w.byte(1);
      w.float(x);
    }
  }
  return w.done('a state');
}

/** The stored state if it is still live at `now`, else undefined. */
export function decodeState(value: unknown, now: number): PolicyState | undefined {
  const bytes = bytesOf(value);
  if (bytes === undefined) return undefined;
  const r = new Reader(bytes);
  if (r.byte() !== STATE) throw corrupt();
  if (r.varint() <= now) return undefined;
  const n = r.varint();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = r.varint();
    if (t === 1) {
      out.push(r.float());
      continue;
    }
    out.push((i >= STRIDE ? out[i - STRIDE]! : 0) + unzigzag(t));
  }
  return out;
}

/** When the stored value stops being live (epoch ms), or undefined when there is none. */
export function expiryOf(value: unknown): number | undefined {
  const bytes = bytesOf(value);
  if (bytes === undefined) return undefined;
  const r = new Reader(bytes);
  const format = r.byte();
  if (format !== STATE && format !== LEASES) throw corrupt();
  return r.varint();
}

/** One live lease of an identity's table. */
export interface HeldLease {
  readonly id: string;
  readonly cost: number;
  expiresAt: number;
}

const HEX_ID = /^[0-9a-f]{32}$/;
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

// A lease table: its latest expiry (the key's logical expiry), the count, then per lease its id
// (a 128-bit hex id, what the concurrency limiter makes, as 16 bytes; any other as UTF-8), its
// cost, and how long before the latest expiry it expires. About 21 bytes a lease: some 3 000
// live leases per identity fit in one value.
export function encodeLeases(leases: readonly HeldLease[]): Uint8Array {
  let last = 0;
  for (const l of leases) last = Math.max(last, l.expiresAt);
  const w = new Writer();
  w.byte(LEASES);
  w.varint(last);
  w.varint(leases.length);
  for (const l of leases) {
    if (HEX_ID.test(l.id)) {
      w.varint(1);
      for (let i = 0; i < 32; i += 2) w.byte(Number.parseInt(l.id.slice(i, i + 2), 16));
    } else {
      const b = utf8.encode(l.id);
      w.varint(b.length * 2);
      w.raw(b);
    }
    w.varint(l.cost);
    w.varint(last - l.expiresAt);
  }
  return w.done('the live leases of one identity');
}

/** The table's leases still live at `now` (none for an absent value). */
export function decodeLeases(value: unknown, now: number): HeldLease[] {
  const bytes = bytesOf(value);
  if (bytes === undefined) return [];
  const r = new Reader(bytes);
  if (r.byte() !== LEASES) throw corrupt();
  const last = r.varint();
  const n = r.varint();
  const out: HeldLease[] = [];
  for (let i = 0; i < n; i++) {
    const tag = r.varint();
    let id: string;
    if (tag === 1) {
      let hex = '';
      for (const b of r.take(16)) hex += b.toString(16).padStart(2, '0');
      id = hex;
    } else {
      id = fromUtf8.decode(r.take(tag / 2));
    }
    const cost = r.varint();
    const expiresAt = last - r.varint();
    if (expiresAt > now) out.push({ id, cost, expiresAt });
  }
  return out;
}
