import { packageBuild } from '../../tsup.shared';

// The client runs in browsers and edge runtimes too; its source uses no Node API, and
// scripts/size.mjs bundles it for the browser platform to prove that on every lint.
// model-apis is a subpath of its own so that the default bundle does not carry provider
// headers; the code it shares with the main entry goes into one chunk, in CJS too, so that both
// entries throw the same RetryError class.
export default {
  ...packageBuild({ index: 'src/index.ts', 'model-apis/index': 'src/model-apis/index.ts' }),
  splitting: true,
};
