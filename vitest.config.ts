/**
 * Two vitest projects, so that `npm test` (tsc, then `vitest run`) runs the qemu VM suites
 * ALONE, after everything else:
 *
 *   unit  every test file except the VM suites, in parallel as usual (5 s default timeouts)
 *   vm    the suites that boot the real-kernel VM (software-emulated: CPU-bound for seconds),
 *         one file at a time and only once the unit project has finished (sequence.groupOrder),
 *         so neither a VM nor the other tests are starved of CPU
 *
 * `npx vitest run test/vm` or `npx vitest run test/ipvs/vm.test.ts` still runs one suite alone;
 * `npx vitest run --project unit` skips the VMs.
 */
import { defineConfig } from 'vitest/config';

const VM_SUITES = ['test/vm/vm.test.ts', 'test/ipvs/vm.test.ts'];

export default defineConfig({
  test: {
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['**/node_modules/**', ...VM_SUITES] },
      },
      {
        extends: true,
        test: { name: 'vm', include: VM_SUITES, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
