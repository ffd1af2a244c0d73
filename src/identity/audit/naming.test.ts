import { describe, expect, it } from 'vitest';
import { audited, auditSpec, AUDIT_KEYWORD, notAudited } from './naming.js';

describe('the action a management call is recorded as', () => {
  it.each([
    ['POST', '/api/v1/rules', 'rule.create', 'rule', undefined, false],
    ['PATCH', '/api/v1/rules/:id', 'rule.update', 'rule', 'id', true],
    ['DELETE', '/api/v1/rules/:id', 'rule.delete', 'rule', 'id', true],
    ['POST', '/api/v1/rules/:id/run', 'rule.run', 'rule', 'id', true],
    ['POST', '/api/v1/executions/:id/cancel', 'execution.cancel', 'execution', 'id', true],
    ['POST', '/api/v1/api-keys/:id/revoke', 'api_key.revoke', 'api_key', 'id', true],
    ['PATCH', '/api/v1/tenant', 'tenant.update', 'tenant', undefined, true],
    ['PUT', '/api/v1/runbooks/:id', 'runbook.update', 'runbook', 'id', true],
    ['POST', '/api/v1/repositories', 'repository.create', 'repository', undefined, false],
    ['PUT', '/api/v1/escalation-contacts', 'escalation_contact.update', 'escalation_contact', undefined, true],
    ['POST', '/api/v1/integrations/:id/monasca/token', 'integration.monasca_token', 'integration', 'id', true],
  ])('%s %s is %s', (method, url, action, targetType, param, keepsBefore) => {
    expect(auditSpec(method, url, undefined)).toEqual({ action, targetType, target: param ? { param } : { from: 'reply' }, keepsBefore });
  });

  it('follows what a route declares: another name, the target from the reply, or nothing at all', () => {
    const install = audited('runbook.install', 'reply')[AUDIT_KEYWORD];
    expect(auditSpec('POST', '/api/v1/runbook-library/:slug/install', install)).toEqual({ action: 'runbook.install', targetType: 'runbook', target: { from: 'reply' }, keepsBefore: false });
    expect(auditSpec('POST', '/api/v1/auth/logout', audited('session.end', 'session')[AUDIT_KEYWORD])).toMatchObject({ action: 'session.end', targetType: 'session', target: { from: 'session' } });
    // A name of its own, the target still the URL's: a member's second factor removed by an admin.
    expect(auditSpec('DELETE', '/api/v1/users/:id/totp', audited('user.totp_reset')[AUDIT_KEYWORD])).toEqual({ action: 'user.totp_reset', targetType: 'user', target: { param: 'id' }, keepsBefore: true });
    expect(auditSpec('POST', '/api/v1/schedules/preview', notAudited('a preview')[AUDIT_KEYWORD])).toBeUndefined();
  });
});
