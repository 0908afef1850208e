import { packageBuild } from '../../tsup.shared';

// @floodgate/memory (the fallback store) is imported, never bundled: it belongs in
// `dependencies`, as it is for the Redis stores.
export default { ...packageBuild({ index: 'src/index.ts' }), external: ['@floodgate/memory'] };
