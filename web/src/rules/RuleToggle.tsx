import { useState } from 'react';
import type { Rule } from '../api/types';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { Toggle } from '../ui/Toggle';
import { useSetRuleEnabled } from './queries';

/** The on/off switch of a rule. Turning it off first says what that means. */
export function RuleToggle({ rule }: { rule: Pick<Rule, 'id' | 'name' | 'enabled'> }) {
  const setEnabled = useSetRuleEnabled();
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
      <Toggle checked={rule.enabled} onChange={change} label={rule.enabled ? `Turn off ${rule.name}` : `Turn on ${rule.name}`} disabled={setEnabled.isPending} />
      <ConfirmDialog
        open={confirming}
        title={`Turn off “${rule.name}”?`}
        confirmLabel="Turn off"
        busy={setEnabled.isPending}
        error={setEnabled.error}
        onCancel={() => setConfirming(false)}
        onConfirm={() => setEnabled.mutate({ id: rule.id, enabled: false }, { onSuccess: () => setConfirming(false) })}
      >
        <p>
          <strong>Alarms are still recorded</strong> (outcome <code>rule_off</code>), and <strong>no action runs</strong> until you turn the rule
          back on. Its webhook URL keeps answering.
        </p>
      </ConfirmDialog>
    </>
  );
}
