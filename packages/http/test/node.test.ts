import { nodeHarness } from './adapters/node.js';
import { behaviouralSuite } from './suite/index.js';
import { memoryStores } from './support/stores.js';

behaviouralSuite(nodeHarness, memoryStores);
