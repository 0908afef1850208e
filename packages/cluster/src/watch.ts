// A ShardedStore's change feed (`Store.watch`): its shards' feeds as one. An identity lives on one
// shard, so its changes come from that shard's feed and are passed on as they come; the merged
// feed vouches (`'alive'`) only once every shard's has since it last did, so one shard whose
// feed is down (or a shard without one) leaves the caches on their staleness bound for all.
import type { Store, StoreChange } from '@floodgate/core/store';

const ALIVE: StoreChange = { type: 'alive' };

export function watchShards(
  stores: readonly Store[],
  listener: (change: StoreChange) => void,
): () => void {
  // A shard with no feed can never vouch: the merged feed then never does either.
  const all = stores.every((s) => typeof s.watch === 'function');
  const heard = new Set<number>();
  const stops = stores.map((store, i) =>
    store.watch?.((change) => {
      if (change.type === 'alive') {
        heard.add(i);
        if (all && heard.size === stores.length) {
          heard.clear();
          listener(ALIVE);
        }
        return;
      }
      if (change.type === 'down') heard.delete(i);
      listener(change);
    }),
  );
  return () => {
    for (const stop of stops) stop?.();
  };
}
