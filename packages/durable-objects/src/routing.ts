// Which object holds a key. Every key of one identity (its policies, blocks, overrides, leases)
// carries the same `<prefix>:{<encoded identity>}` head (core's key layout): routing by that head
// puts all of them in one object, so a multi-policy call is one atomic step there.

/** `<prefix>:{<identity>}` of a key; the whole key when it has no hash tag. */
export function headOf(key: string): string {
  const open = key.indexOf('{');
  if (open < 0) return key;
  const close = key.indexOf('}', open + 1);
  return close < 0 ? key : key.slice(0, close + 1);
}

/** FNV-1a over UTF-16 code units: the same shard for a key in every isolate, forever. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * The object's name for `key`: its identity's head, or with `shards` the shard that head hashes
 * to. The shard count is part of the name, so changing it starts from empty objects instead of
 * reading state another layout wrote.
 */
export function objectName(key: string, shards: number | undefined): string {
  const head = headOf(key);
  if (shards === undefined) return head;
  return `floodgate-shard:${fnv1a(head) % shards}/${shards}`;
}
