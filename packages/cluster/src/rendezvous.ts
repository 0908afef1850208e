// Rendezvous (highest random weight) hashing: each shard scores each identity, the highest score
// wins. Adding a shard moves only the identities it now wins (about 1/N of them); removing one
// moves only its own. Weighted scores follow Schindelhauer & Schomaker: -w / ln(u), u uniform in
// (0, 1), so a shard with twice the weight wins twice as many identities.

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

function fmix(h: number): number {
  let x = h;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

function mixBlock(h: number, block: number): number {
  let k = Math.imul(block, C1);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, C2);
  let x = h ^ k;
  x = (x << 13) | (x >>> 19);
  return (Math.imul(x, 5) + 0xe6546b64) | 0;
}

/**
 * MurmurHash3 (x86, 32-bit) of a string's UTF-16 code units, two units per 32-bit block. Not
 * cryptographic: identities are encoded by core (injective, bounded), and a client who could
 * pick which shard they land on gains nothing but a different counter of the same limit.
 */
export function hash32(text: string, seed: number): number {
  let h = seed | 0;
  const n = text.length;
  let i = 0;
  for (; i + 1 < n; i += 2) {
    h = mixBlock(h, text.charCodeAt(i) | (text.charCodeAt(i + 1) << 16));
  }
  if (i < n) {
    let k = Math.imul(text.charCodeAt(i), C1);
    k = (k << 15) | (k >>> 17);
    h ^= Math.imul(k, C2);
  }
  return fmix(h ^ (n * 2));
}

/** One contender: its seed (from its name) and weight. */
export interface Contender {
  readonly seed: number;
  readonly weight: number;
}

/** The seed a shard's name gives it: renaming a shard reshuffles its identities, nothing else. */
export function seedOf(name: string): number {
  return hash32(name, 0x5bd1e995);
}

/**
 * The index of the contender that wins `identity`. Equal weights compare the raw hashes (no
 * logarithm on the hot path); ties, vanishingly rare, go to the lower index.
 */
export function pick(identity: string, contenders: readonly Contender[], equal: boolean): number {
  let best = 0;
  let bestScore = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < contenders.length; i++) {
    const c = contenders[i]!;
    const h = hash32(identity, c.seed);
    // u in (0, 1), never 0 or 1: ln(u) is finite and negative.
    const score = equal ? h : -c.weight / Math.log((h + 0.5) / 4294967296);
    if (score > bestScore) {
      bestScore = score;
      best = i;
    }
  }
  return best;
}

/**
 * The part of a Floodgate key that names the identity: what sits between the first `{` and the
 * next `}` (`<prefix>:{<identity>}:<tag>`; core keeps braces out of prefixes and encoded
 * identities). Every policy key of one identity shares it, so they all land on one shard, as a
 * Redis Cluster puts them in one slot. A key without a tag is hashed whole.
 * @example
 * ```ts
 * import { hashTagOf } from '@floodgate/cluster';
 *
 * hashTagOf('api:{key_123}:tb'); // 'key_123'
 * hashTagOf('no-tag'); // 'no-tag'
 * ```
 * @public
 */
export function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  if (open < 0) return key;
  const close = key.indexOf('}', open + 1);
  // `{}` or no closing brace: Redis Cluster hashes the whole key then, and so do we.
  if (close <= open + 1) return key;
  return key.slice(open + 1, close);
}
