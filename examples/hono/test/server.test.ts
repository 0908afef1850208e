// The shared example-app tests: the README's start command, the limit, the 429 contract.
import { exampleAppTests } from '../../shared/app-tests.js';

exampleAppTests(import.meta.url);
