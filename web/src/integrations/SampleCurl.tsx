import type { Integration } from '../api/integration-types';
import { CodeBlock } from '../ui/CodeBlock';
import { TOOLS } from './tools';

/** One alert as the tool sends it, by curl, as a webhook rule's page offers: to see the URL work before the tool is set up. */
export function SampleCurl({ integration }: { integration: Integration }) {
  if (!integration.curl) return null;
  const secret = integration.curl.includes('PITCREW_INTEGRATION_SECRET');
  return (
    <>
      <h3>Try it with curl</h3>
      <CodeBlock code={integration.curl} copyLabel="Copy curl" label="Sample alert curl" />
      <p className="field-hint">
        One alert about <code>web-1</code>, in {TOOLS[integration.type].title}&apos;s own body. It reads your API key from <code>$PITCREW_API_KEY</code>
        {secret ? (
          <>
            {' '}
            and this integration&apos;s secret from <code>$PITCREW_INTEGRATION_SECRET</code>
          </>
        ) : null}
        : export it first. The rules on this integration act on it as on the tool&apos;s alerts; a test alert (below) is a dry run.
      </p>
    </>
  );
}
