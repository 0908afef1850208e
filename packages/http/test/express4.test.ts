import express4 from 'express4';
import { expressHarness } from './adapters/express.js';
import { behaviouralSuite } from './suite/index.js';
import { memoryStores } from './support/stores.js';

behaviouralSuite(expressHarness('express 4', express4), memoryStores);
