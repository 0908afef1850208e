import { fetchHarness } from './adapters/fetch.js';
import { behaviouralSuite } from './suite/index.js';
import { memoryStores } from './support/stores.js';

behaviouralSuite(fetchHarness, memoryStores);
