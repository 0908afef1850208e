import { packageBuild } from '../../tsup.shared';

// Two entries by audience: the conformance suite (any store author) and the Redis launchers and
// suites (Redis-protocol store authors), so a memory-only store's tests never load the latter.
export default packageBuild({ index: 'src/index.ts', 'redis/index': 'src/redis/index.ts' });
