import { useState } from 'react';
import { useRole } from '../auth/useRole';
import type { Rule, Trigger } from '../api/types';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { Toggle } from '../ui/Toggle';
import { useSetRuleEnabled } from './queries';

/**
 * The on/off switch of a rule. Turning it off first says what that means: a cron rule pauses.
 * The rule's queries are refetched after the change (useSetRuleEnabled), so its page follows.
 */
export function RuleToggle({ rule }: { rule: Pick<Rule, 'id' | 'name' | 'enabled'> & { trigger?: Pick<Trigger, 'type'> } }) {
  const scheduled = rule.trigger?.type === 'cron';
  const setEnabled = useSetRuleEnabled();
  const { can } = useRole();
  const [confirming, setConfirming] = useState(false);
  const change = (enabled: boolean) => {
    if (!enabled) {
      setEnabled.reset();
      setConfirming(true);
      return;
    }
    setEnabled.mutate({ id: rule.id, enabled: true });
  };
  return (
    <>
      <Toggle checked={rule.enabled} onChange={change} label={rule.enabled ? `Turn off ${rule.name}` : `Turn on ${rule.name}`} disabled={setEnabled.isPending || !can('operate')} />
      <ConfirmDialog
        open={confirming}
        title={scheduled ? `Pause “${rule.name}”?` : `Turn off “${rule.name}”?`}
        confirmLabel={scheduled ? 'Pause' : 'Turn off'}
        busy={setEnabled.isPending}
        error={setEnabled.error}
        onCancel={() => setConfirming(false)}
        onConfirm={() => setEnabled.mutate({ id: rule.id, enabled: false }, { onSuccess: () => setConfirming(false) })}
      >
        {scheduled ? (
          <p>
            <strong>It has no ticks</strong> while it is off: nothing runs and nothing is recorded for them. Turned back on, it starts from the next
            tick after that moment; <strong>the ticks it missed are not run</strong>.
          </p>
        ) : (
          <p>
            <strong>Alarms are still recorded</strong> (outcome <code>rule_off</code>), and <strong>no action runs</strong> until you turn the rule
            back on. Its webhook URL keeps answering.
          </p>
        )}
      </ConfirmDialog>
    </>
  );
}
