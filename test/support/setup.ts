// Vitest setup: registers ts-reactor's matchers for every test file.
import '../../src/testing/vitest.js';
