import { honoHarness } from './adapters/hono.js';
import { behaviouralSuite } from './suite/index.js';
import { memoryStores } from './support/stores.js';

behaviouralSuite(honoHarness, memoryStores);
