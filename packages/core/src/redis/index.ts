// `@floodgate/core/redis`: what the author of a Redis-protocol store needs. An adapter hands
// `RedisStore` a `RedisTransport`; the script helpers are for running the script by other means.
export { type LimitScript, scriptFor, scriptForKinds } from './lua.js';
export type { RedisStoreOptions } from './options.js';
export { decodeScriptReply, encodeScriptArgs, type ScriptReply } from './protocol.js';
export { RedisStore } from './store.js';
export type { RedisSubscriber, RedisTransport, SubscriberEvents } from './transport.js';
