import { packageBuild } from '../../tsup.shared';

// The client runs in browsers and edge runtimes too; its source uses no Node API, and
// scripts/size.mjs bundles it for the browser platform to prove that on every lint.
export default packageBuild({ index: 'src/index.ts' });
