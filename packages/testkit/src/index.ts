/**
 * `@floodgate/testkit`: the store-conformance suite, what a store author's test file imports.
 * The Redis launchers and the suites every Redis-protocol store runs are in
 * `@floodgate/testkit/redis`.
 */

export type {
  Awaitable,
  ConformanceOptions,
  Expectation,
  StoreContext,
  StoreInspector,
  TestApi,
} from './conformance/types.js';
export { storeConformance } from './conformance.js';
