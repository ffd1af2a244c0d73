import { describe, expect, it } from 'vitest';
import type { ClientConfig } from '../config/config.js';
import { API_COMMANDS, type ApiCommand } from './api-commands.js';
import { CliError } from './client.js';

const COMMANDS = Object.entries(API_COMMANDS).map(([name, { run, usage }]) => [name, run, usage] as const);

/** No service answers here: a refused subcommand never gets as far as calling one. */
const env: ClientConfig = { server: 'http://127.0.0.1:9', token: 'unused' };

async function refusal(command: ApiCommand, args: string[]): Promise<CliError> {
  const error = await command(args, env, () => undefined).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

describe('API commands refuse a missing or unknown subcommand with their usage (exit code 2)', () => {
  it.each(COMMANDS)('%s with none', async (_name, command, usage) => {
    const error = await refusal(command, []);
    expect({ message: error.message, exitCode: error.exitCode }).toEqual({ message: `a subcommand is needed\n\n${usage}`, exitCode: 2 });
  });

  it.each(COMMANDS)('%s frobnicate', async (_name, command, usage) => {
    const error = await refusal(command, ['frobnicate']);
    expect({ message: error.message, exitCode: error.exitCode }).toEqual({ message: `unknown subcommand "frobnicate"\n\n${usage}`, exitCode: 2 });
  });
});
