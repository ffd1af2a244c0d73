import type { TestProject } from 'vitest/node';
import { openStore } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrations.js';
import { TEST_DATABASE_URL, admin, databaseUrl } from './postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A migrated PostgreSQL database each test file clones, or null when PostgreSQL is out of reach. */
    pgTemplate: string | null;
  }
}

const template = `pitcrew_tpl_${process.pid}`;

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function setup(project: TestProject): Promise<() => Promise<void>> {
  try {
    await admin(async (client) => {
      // Databases are named after the test run's pid; drop those whose run died without cleaning up.
      const ours = await client.query<{ datname: string }>("select datname from pg_database where datname ~ '^pitcrew_(tpl|t)_[0-9]+'");
      for (const { datname } of ours.rows) {
        if (!isRunning(Number(/_(\d+)/.exec(datname)![1]))) await client.query(`drop database if exists "${datname}" with (force)`);
      }
      await client.query(`create database "${template}"`);
    });
  } catch (error) {
    const message = `PostgreSQL at ${TEST_DATABASE_URL} is not reachable (${(error as Error).message})`;
    if (process.env.CI) throw new Error(`${message}: CI must test both databases`, { cause: error });
    console.warn(`\n${'!'.repeat(100)}\n!!! ${message}.\n!!! ONLY SQLITE IS TESTED IN THIS RUN. Start PostgreSQL or set TEST_DATABASE_URL.\n${'!'.repeat(100)}\n`);
    project.provide('pgTemplate', null);
    return async () => undefined;
  }
  const store = openStore({ databaseUrl: databaseUrl(template), dataDir: '' });
  await migrateToLatest(store);
  await store.close();
  project.provide('pgTemplate', template);
  return async () => {
    await admin((client) => client.query(`drop database if exists "${template}" with (force)`));
  };
}
