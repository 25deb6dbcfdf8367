import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Messages passed by reference are immutable by contract: freeze them in every test so a mutation fails.
    env: { SWITCHBOARD_FREEZE_MESSAGES: '1' },
    globalSetup: ['test/setup/config-dir.ts'],
    testTimeout: 20_000,
    pool: 'forks',
    // Vitest's default here is one worker (cores - 1 on this 2-core machine): 8-9 minutes. Three overlap the
    // suites' waits on child processes and sockets: about 5 minutes.
    maxWorkers: 3,
  },
});
