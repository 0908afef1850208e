import express from 'express';
import { expressHarness } from './adapters/express.js';
import { behaviouralSuite } from './suite/index.js';
import { memoryStores } from './support/stores.js';

behaviouralSuite(expressHarness('express 5', express), memoryStores);
