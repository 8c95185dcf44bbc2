// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'fs',
  'path',
  'os',
  'child_process',
  'net',
  'http',
  'https',
  'crypto',
  'stream',
  'worker_threads',
  'dns',
  'tls',
  'events',
  'timers',
  'process',
  'buffer',
  'zlib',
];

export default tseslint.config(
  { ignores: ['**/node_modules/**', '.tools/**', '.run/**', '**/dist/**', 'migrations/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', name: ['describe', 'it', 'test', 'suite'], package: 'node:test' },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no I/O, no Node built-ins.
    files: ['workflows/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [...nodeBuiltins, ...nodeBuiltins.map((m) => `node:${m}`)].map((name) => ({
            name,
            message: 'workflows must be deterministic: no Node built-ins',
          })),
          patterns: [
            {
              group: ['@temporalio/client', '@temporalio/worker', '@temporalio/testing', '@temporalio/activity'],
              message: 'workflows import only @temporalio/workflow',
              allowTypeImports: true,
            },
            {
              group: [
                'pg',
                'undici',
                'ssh2',
                'pino',
                'drizzle-orm',
                '@fleet/db',
                '@fleet/drivers',
                '@fleet/redfish',
                '@fleet/nvue',
                '@fleet/http',
                '@fleet/ssh',
                '@fleet/fwpkg',
                '@fleet/temporal',
                '@fleet/config',
              ],
              message: 'workflows must not do I/O',
            },
          ],
        },
      ],
    },
  },
  {
    // The hub reads and writes Postgres only; it never reaches Temporal or devices.
    files: ['apps/hub/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: '@fleet/temporal', message: 'the hub talks to Postgres through @fleet/db only' }],
          patterns: [
            {
              group: [
                '@temporalio/*',
                '@fleet/temporal/*',
                // Pure AES-GCM over payloads for the codec endpoint: no Temporal connection (docs/security.md).
                '!@fleet/temporal/codec',
                '@fleet/workflows',
                '@fleet/drivers',
                '@fleet/redfish',
                '@fleet/nvue',
                '@fleet/http',
                '@fleet/ssh',
                'ssh2',
                'undici',
                'drizzle-orm',
                'drizzle-orm/*',
              ],
              message: 'the hub talks to Postgres through @fleet/db only',
            },
          ],
        },
      ],
    },
  },
  {
    // Device clients and drivers know nothing of Temporal or persistence.
    files: ['packages/{http,redfish,nvue,ssh,fwpkg,drivers,domain}/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@temporalio/*', '@fleet/db', 'pg', 'drizzle-orm'],
              message: 'clients and drivers neither orchestrate nor persist',
            },
          ],
        },
      ],
    },
  },
);
