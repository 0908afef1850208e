// The stores on one client share one change-feed connection, and each hears every change.
import { redisSharedFeedTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from './adapters.js';

redisSharedFeedTests({ describe, it, expect, beforeAll, afterAll }, { adapters: ADAPTERS });
