import { CodeBlock } from '../ui/CodeBlock';

// The same check as docs/notifications.md, "Verifying the webhook signature".
const NODE_VERIFY = `import { createHmac, timingSafeEqual } from 'node:crypto';

function verify(secret, headers, rawBody) {
  const timestamp = headers['x-pitcrew-timestamp'];
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const expected = \`v1=\${createHmac('sha256', secret).update(\`\${timestamp}.\${rawBody}\`).digest('hex')}\`;
  const given = String(headers['x-pitcrew-signature'] ?? '');
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}`;

/** How a receiver of the generic webhook tells pitcrew's requests from forgeries and replays. */
export function SignatureHelp() {
  return (
    <>
      <table className="table signature-headers">
        <tbody>
          <tr>
            <td className="mono">X-Pitcrew-Timestamp</td>
            <td>Unix time in seconds when this attempt was signed</td>
          </tr>
          <tr>
            <td className="mono">X-Pitcrew-Signature</td>
            <td>
              <code>v1=</code> and the hex HMAC-SHA256 of <code>&lt;timestamp&gt;.&lt;raw body&gt;</code> with the channel's secret
            </td>
          </tr>
          <tr>
            <td className="mono">X-Pitcrew-Delivery</td>
            <td>the delivery id, the same on every retry: drop a repeat you already have</td>
          </tr>
        </tbody>
      </table>
      <p>
        Compute the HMAC over the raw bytes of the body (before any JSON parsing), compare in constant time, and refuse timestamps more than 5
        minutes away (a captured request played later). In Node.js:
      </p>
      <CodeBlock code={NODE_VERIFY} copyLabel="Copy" label="signature check in Node.js" />
      <p className="field-hint">
        Python and the payload's fields: docs/notifications.md, “The generic webhook” and “Verifying the webhook signature”.
      </p>
    </>
  );
}
