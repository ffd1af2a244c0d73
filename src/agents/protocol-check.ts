import { Compile } from 'typebox/compile';
import { AgentMessage, ServiceMessage } from './protocol.js';

/*
 * The protocol's checks on receipt, apart from its schemas: typebox/compile (with typebox/value)
 * took ~0.2 s of the service's CPU at every start, before any agent could connect. The gateway
 * loads this file for the first agent that connects; the agent bundles it.
 */

const agentMessage = Compile(AgentMessage);
const serviceMessage = Compile(ServiceMessage);

/** Parses and validates one frame; undefined for anything that is not a known message. */
export function parseAgentMessage(text: string): AgentMessage | undefined {
  return parseWith(text, (value) => agentMessage.Check(value));
}

export function parseServiceMessage(text: string): ServiceMessage | undefined {
  return parseWith(text, (value) => serviceMessage.Check(value));
}

function parseWith<T>(text: string, check: (value: unknown) => boolean): T | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return check(value) ? (value as T) : undefined;
}
