import { describe } from 'vitest';
import { suiteContext } from '../support/context.js';
import type { Harness, StoreFactory } from '../support/harness.js';
import { allowListTests } from './allow-list.js';
import { controlTests } from './control.js';
import { delayTests } from './delays.js';
import { failureTests } from './failures.js';
import { headerTests } from './headers.js';
import { keyTests } from './keys.js';
import { optionTests } from './options.js';
import { policyTests } from './policies.js';
import { refundTests } from './refunds.js';
import { shadowTests } from './shadow.js';
import { stackingTests } from './stacking.js';

/** The one behavioural suite: every adapter runs it against its real framework on a real port. */
export function behaviouralSuite(harness: Harness, stores: StoreFactory): void {
  describe(`${harness.name} on ${stores.name}`, () => {
    const ctx = suiteContext(harness, stores);
    headerTests(ctx);
    keyTests(ctx);
    policyTests(ctx);
    failureTests(ctx);
    optionTests(ctx);
    stackingTests(ctx);
    delayTests(ctx);
    refundTests(ctx);
    shadowTests(ctx);
    controlTests(ctx);
    allowListTests(ctx);
  });
}
