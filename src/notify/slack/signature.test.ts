import { describe, expect, it } from 'vitest';
import { signedWith, slackSignature, staleTimestamp } from './signature.js';

// Slack's own worked example (docs.slack.dev/authentication/verifying-requests-from-slack, "Step-by-step
// walk-through"): this secret, timestamp and slash-command body give exactly this signature.
const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const TIMESTAMP = '1531420618';
const BODY = 'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
const EXPECTED = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';

describe("Slack's request signature", () => {
  it("computes Slack's documented example", () => {
    expect(slackSignature(SECRET, TIMESTAMP, BODY)).toBe(EXPECTED);
  });

  it('finds which of the signing secrets signed it, and none for an altered body, timestamp or signature', () => {
    expect(signedWith(['0'.repeat(32), SECRET], TIMESTAMP, BODY, EXPECTED)).toBe(1);
    expect(signedWith([SECRET], TIMESTAMP, `${BODY}x`, EXPECTED)).toBe(-1);
    expect(signedWith([SECRET], '1531420619', BODY, EXPECTED)).toBe(-1);
    expect(signedWith([SECRET], TIMESTAMP, BODY, EXPECTED.replace(/.$/, '4'))).toBe(-1);
    expect(signedWith([SECRET], TIMESTAMP, BODY, 'v0=short')).toBe(-1);
    expect(signedWith([SECRET], TIMESTAMP, BODY, undefined)).toBe(-1);
    expect(signedWith([], TIMESTAMP, BODY, EXPECTED)).toBe(-1);
  });

  it('refuses a timestamp more than five minutes away, either way, or none', () => {
    const now = Number(TIMESTAMP) * 1000;
    expect(staleTimestamp(TIMESTAMP, now + 300_000)).toBeNull();
    expect(staleTimestamp(TIMESTAMP, now - 300_000)).toBeNull();
    expect(staleTimestamp(TIMESTAMP, now + 301_000)).toMatch(/301 s from this server's clock/);
    expect(staleTimestamp(TIMESTAMP, now - 301_000)).toMatch(/more than 5 minutes/);
    expect(staleTimestamp(undefined, now)).toMatch(/no X-Slack-Request-Timestamp/);
    expect(staleTimestamp('soon', now)).toMatch(/no X-Slack-Request-Timestamp/);
  });
});
