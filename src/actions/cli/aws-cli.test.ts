import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { awsEndpointEnv, awsShim } from './aws-cli.js';

const endpoints = { ec2: 'http://127.0.0.1:4566/ec2', sts: "https://sts.example.com/it's" };

describe('the AWS endpoints of a CLI runbook', () => {
  it('are the variables of AWS CLI 2.13 and later, one per service, never the global one', () => {
    expect(awsEndpointEnv(endpoints)).toEqual({ AWS_ENDPOINT_URL_EC2: endpoints.ec2, AWS_ENDPOINT_URL_STS: endpoints.sts });
    expect(awsEndpointEnv({ ec2: endpoints.ec2, sts: undefined })).toEqual({ AWS_ENDPOINT_URL_EC2: endpoints.ec2 });
    expect(awsShim({ ec2: undefined, sts: undefined }, '/usr/bin')).toBeUndefined();
  });

  describe('the shim for older CLIs, run by sh in front of an `aws` that prints its arguments', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-aws-shim-'));
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'aws'), '#!/bin/sh\nfor arg in "$@"; do printf "%s\\n" "$arg"; done\n', { mode: 0o755 });
    const shim = path.join(dir, 'shim');
    fs.writeFileSync(shim, awsShim(endpoints, `/nonexistent:${bin}`)!, { mode: 0o755 });
    const run = (...args: string[]) => execFileSync('/bin/sh', [shim, ...args], { encoding: 'utf8' }).trimEnd().split('\n');
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    it.each([
      [['ec2', 'describe-instances'], ['--endpoint-url', endpoints.ec2, 'ec2', 'describe-instances']],
      [['--region', 'eu-west-1', '--output', 'json', 'ec2', 'start-instances', '--instance-ids', 'i-1'], ['--endpoint-url', endpoints.ec2, '--region', 'eu-west-1', '--output', 'json', 'ec2', 'start-instances', '--instance-ids', 'i-1']],
      [['--region=eu-west-1', '--debug', 'sts', 'get-caller-identity'], ['--endpoint-url', endpoints.sts, '--region=eu-west-1', '--debug', 'sts', 'get-caller-identity']],
      [['--query', 'Reservations', 'ec2', 'describe-instances'], ['--endpoint-url', endpoints.ec2, '--query', 'Reservations', 'ec2', 'describe-instances']],
    ])('gives the endpoint to %j', (args, expected) => expect(run(...args)).toEqual(expected));

    it.each([
      [['s3', 'ls']],
      [['--profile', 'ec2', 's3', 'ls']],
      [['ec2', 'describe-instances', '--endpoint-url', 'http://own']],
      [['--endpoint-url=http://own', 'sts', 'get-caller-identity']],
      [['--version']],
    ])('leaves %j as the runbook wrote it', (args) => expect(run(...args)).toEqual(args));

    it('says so when no aws is installed on the CLI Machine', () => {
      fs.writeFileSync(shim, awsShim(endpoints, '/nonexistent')!, { mode: 0o755 });
      const ran = spawnSync('/bin/sh', [shim, 'ec2', 'describe-instances'], { encoding: 'utf8' });
      expect(ran.status).toBe(127);
      expect(ran.stderr).toBe('aws: the AWS CLI is not installed on the CLI Machine (PITCREW_CLI_PATH: /nonexistent)\n');
    });
  });
});
