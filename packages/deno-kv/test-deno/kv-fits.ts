// Type-checked by `deno check` (test/deno-types.test.ts), against Deno's own declarations: the
// KV connection Deno gives is a `DenoKvLike` as DenoKvStore types it, with no cast. Outside the
// package's tsconfig: Node's TypeScript has no `Deno` namespace.
import type { DenoKvLike } from '../src/kv-types.ts';

export async function open(path: string): Promise<DenoKvLike> {
  const kv: Deno.Kv = await Deno.openKv(path);
  const fits: DenoKvLike = kv;
  return fits;
}
