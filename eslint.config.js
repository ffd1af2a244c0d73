import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'web/dist/', 'node_modules/', 'data/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setImmediate: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', performance: 'readonly', Buffer: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: "MemberExpression[object.name='process'][property.name='env']", message: 'Read the environment only in src/config (config is read once).' }],
    },
  },
  { files: ['src/config/**', 'src/cli/**', 'test/**', 'bench/**', 'scripts/**', 'vitest.config.ts', '**/*.test.ts'], rules: { 'no-restricted-syntax': 'off' } },
  // The web UI: React's rules of hooks, and the browser's world (no process, no Node globals).
  { files: ['web/src/**/*.{ts,tsx}'], ...reactHooks.configs.flat.recommended },
);
