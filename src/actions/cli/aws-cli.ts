/*
 * The operator's AWS endpoints (PITCREW_AWS_ENDPOINT_URL for EC2, PITCREW_AWS_STS_ENDPOINT_URL for
 * STS) as the AWS CLI in a CLI runbook takes them (docs/cli-machine.md, "AWS endpoints").
 *
 * - AWS CLI 2.13.0 (and 1.29.0, botocore 1.31.0) read an endpoint per service from the environment
 *   (AWS_ENDPOINT_URL_EC2, AWS_ENDPOINT_URL_STS) or the shared config file: aws/aws-cli
 *   .changes/2.13.0.json, "Configure the endpoint URL in the shared configuration file or via an
 *   environment variable for a specific AWS service or all AWS services"; botocore's
 *   configprovider.py ConfiguredEndpointProvider. AWS_ENDPOINT_URL, the global one, is not used:
 *   PITCREW_AWS_ENDPOINT_URL is EC2's endpoint, and S3 or Auto Scaling calls must not go there.
 * - Older CLIs read neither: Debian 12's awscli 2.9.19 has no endpoint setting in its
 *   botocore/configprovider.py, only the --endpoint-url option. For them an `aws` of pitcrew's
 *   comes first on the run's PATH and gives --endpoint-url to the ec2 and sts commands.
 */

export interface AwsEndpoints {
  ec2: string | undefined;
  sts: string | undefined;
}

/** The CLI's own variables for the endpoints the operator set (CLI 2.13 and later). */
export function awsEndpointEnv(endpoints: AwsEndpoints): Record<string, string> {
  return {
    ...(endpoints.ec2 ? { AWS_ENDPOINT_URL_EC2: endpoints.ec2 } : {}),
    ...(endpoints.sts ? { AWS_ENDPOINT_URL_STS: endpoints.sts } : {}),
  };
}

/**
 * The AWS CLI's global options that take a value (awscli/data/cli.json, "options", in 2.9 and
 * today): skipped with their value when the shim looks for the service's name.
 */
const VALUE_OPTIONS = ['--region', '--output', '--query', '--profile', '--color', '--ca-bundle', '--cli-read-timeout', '--cli-connect-timeout', '--cli-binary-format'];

/**
 * A `/bin/sh` script that runs the real `aws` (the first one on `searchPath`, the operator's
 * PITCREW_CLI_PATH) with --endpoint-url for the ec2 and sts commands, unless the runbook gives
 * its own --endpoint-url; any other command, unchanged. Undefined when no endpoint is set.
 */
export function awsShim(endpoints: AwsEndpoints, searchPath: string): string | undefined {
  const services = Object.entries(endpoints).filter((entry): entry is [string, string] => entry[1] !== undefined);
  if (services.length === 0) return undefined;
  return [
    '#!/bin/sh',
    '# pitcrew: the operator\'s AWS endpoints for AWS CLIs before 2.13, which read none from the',
    '# environment: --endpoint-url for the ec2 and sts commands, unless given (docs/cli-machine.md).',
    'real=',
    `for dir in ${searchPath.split(':').filter(Boolean).map(quote).join(' ')}; do`,
    '  if [ -x "$dir/aws" ]; then real="$dir/aws"; break; fi',
    'done',
    `if [ -z "$real" ]; then echo "aws: the AWS CLI is not installed on the CLI Machine (PITCREW_CLI_PATH: ${searchPath.replaceAll('"', '')})" >&2; exit 127; fi`,
    'service=',
    'skip=',
    'for arg in "$@"; do',
    '  if [ -n "$skip" ]; then skip=; continue; fi',
    '  case "$arg" in',
    '    --endpoint-url|--endpoint-url=*) exec "$real" "$@" ;;',
    `    ${VALUE_OPTIONS.join('|')}) skip=1 ;;`,
    '    -*) ;;',
    '    *) if [ -z "$service" ]; then service="$arg"; fi ;;',
    '  esac',
    'done',
    'case "$service" in',
    ...services.map(([service, url]) => `  ${service}) exec "$real" --endpoint-url ${quote(url)} "$@" ;;`),
    'esac',
    'exec "$real" "$@"',
    '',
  ].join('\n');
}

/** A word for sh, in single quotes. */
function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
