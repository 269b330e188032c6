/**
 * Jest runs the TypeScript sources as ESM (chalk and ora are ESM-only), in two projects:
 *
 * - `unit` (`npm test`, which sets SWC_TESTS=unit): the core, the adapters, the library and the command line run in
 *   process, with property runs scaled by SWC_PROPERTY_SCALE (test/helpers/scale.ts). No build, no node, npm, git or
 *   bash process, no network, no browser.
 * - `e2e` (`npm run test:e2e`, which builds first): the built binary in child processes, packing and installing,
 *   Chromium, big files and big batches, under test/e2e/.
 *
 * ts-jest only transpiles (tsconfig.json sets isolatedModules): `npm run typecheck` checks the types.
 */
const shared = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
  },
};

const projects = [
  {
    ...shared,
    displayName: 'unit',
    testMatch: ['<rootDir>/test/**/*.test.ts'],
    testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/e2e/'],
  },
  {
    ...shared,
    displayName: 'e2e',
    testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
  },
];

/** SWC_TESTS names one project (`npm test` sets `unit`); unset, both run, so `npx jest FILE` finds any suite. */
const only = process.env.SWC_TESTS;

export default {
  // Read from here, not from a project.
  testTimeout: 60000,
  projects: only === undefined ? projects : projects.filter((p) => p.displayName === only),
};
