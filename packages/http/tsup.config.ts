import { packageBuild } from '../../tsup.shared';

// The app author's entry, the adapter author's (`/adapter`), and one entry per adapter: each
// builds to its own file, so importing one never loads another's framework (the frameworks stay
// external as peer dependencies).
export default packageBuild({
  index: 'src/index.ts',
  'adapter/index': 'src/adapter/index.ts',
  'express/index': 'src/express/index.ts',
  'fastify/index': 'src/fastify/index.ts',
  'hono/index': 'src/hono/index.ts',
  'node/index': 'src/node/index.ts',
  'fetch/index': 'src/fetch/index.ts',
});
