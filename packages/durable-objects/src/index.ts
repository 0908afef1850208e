/**
 * `@floodgate/durable-objects`: Floodgate's store for Cloudflare Workers. `DurableObjectStore`
 * routes each identity's calls to one Durable Object; `floodgateObject` makes that object's class.
 * Nothing here imports `cloudflare:*` or `node:*`: the runtime's `DurableObject` base is passed in.
 * @module
 */
export {
  type DurableObjectBase,
  type FloodgateDurableObject,
  type FloodgateObjectClass,
  type FloodgateObjectOptions,
  floodgateObject,
} from './object.js';
export {
  DurableObjectStore,
  type DurableObjectStoreOptions,
  type FloodgateNamespace,
} from './store.js';
