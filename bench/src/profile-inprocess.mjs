// One in-process contender alone in a long loop, for a CPU profile of its hot path:
//   node --cpu-prof --cpu-prof-dir=/tmp/prof src/profile-inprocess.mjs fixedWindow fresh
// Arguments: a contender name (a Floodgate policy, rate-limiter-flexible, express-rate-limit),
// `fresh` or `pre-built` key strings (as in inprocess.mjs), and the number of decisions.
import { identities } from './config.mjs';
import { memoryContenders } from './contenders.mjs';
import { sequential } from './measure.mjs';

const [name = 'fixedWindow', strings = 'fresh', count = '3000000'] = process.argv.slice(2);
const keys = identities(10_000);
const contender = memoryContenders(500_000, 86_400_000, keys, undefined, {
  fresh: strings === 'fresh',
}).find((c) => c.name === name);
if (contender === undefined) throw new Error(`unknown contender ${name}`);
const { decide, teardown } = await contender.setup();
await sequential(decide, keys, 50_000);
const { ns } = await sequential(decide, keys, Number(count));
await teardown?.();
process.stdout.write(
  `${name} (${strings}): ${Math.round(Number(count) / (Number(ns) / 1e9))} ops/s\n`,
);
