import { fastifyHarness } from './adapters/fastify.js';
import { behaviouralSuite } from './suite/index.js';
import { memoryStores } from './support/stores.js';

behaviouralSuite(fastifyHarness, memoryStores);
