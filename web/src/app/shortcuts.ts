import { useEffect } from 'react';

/** Keys that work on every page (docs/ui.md lists them; the ? key shows them). */
export const SHORTCUTS: Array<{ keys: string; does: string }> = [
  { keys: 'g n', does: 'go to incidents' },
  { keys: 'g r', does: 'go to rules' },
  { keys: 'g b', does: 'go to runbooks' },
  { keys: 'g g', does: 'go to git repositories' },
  { keys: 'g e', does: 'go to executions' },
  { keys: 'g x', does: 'go to escalations' },
  { keys: 'g h', does: 'go to hosts' },
  { keys: 'g i', does: 'go to integrations' },
  { keys: 'g a', does: 'go to credentials (cloud accounts)' },
  { keys: 'g c', does: 'go to channels' },
  { keys: 'g k', does: 'go to API keys' },
  { keys: 'g s', does: 'go to tenant settings' },
  { keys: 'g u', does: 'go to users (admins)' },
  { keys: 'g l', does: 'go to the audit log (admins)' },
  { keys: 'g o', does: 'go to single sign-on settings (owners)' },
  { keys: 'n', does: 'new rule' },
  { keys: '/', does: 'search or filter the list' },
  { keys: 'Ctrl Enter', does: 'next step, or create, in the rule wizard' },
  { keys: 'Esc', does: 'close a dialog' },
  { keys: '?', does: 'show these shortcuts' },
];

const GO_TO: Record<string, string> = { n: '/incidents', r: '/rules', b: '/runbooks', g: '/repositories', e: '/executions', x: '/escalations', h: '/hosts', i: '/integrations', a: '/credentials', c: '/channels', k: '/api-keys', s: '/settings', u: '/users', l: '/audit', o: '/sso' };

function isTyping(target: EventTarget | null): boolean {
  const element = target as HTMLElement | null;
  if (!element) return false;
  return element.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(element.tagName);
}

/** `mayCreate`: whether the role may make a rule (n opens the wizard only then). */
export function useGlobalShortcuts(navigate: (to: string) => void, showHelp: () => void, mayCreate: boolean): void {
  useEffect(() => {
    let pendingG = 0;
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
      if (document.querySelector('dialog[open]')) return;
      const now = Date.now();
      if (pendingG && now - pendingG < 1500 && GO_TO[event.key]) {
        pendingG = 0;
        event.preventDefault();
        navigate(GO_TO[event.key]!);
        return;
      }
      pendingG = 0;
      if (event.key === 'g') pendingG = now;
      else if (event.key === 'n' && mayCreate) navigate('/rules/new');
      else if (event.key === '?') showHelp();
      else if (event.key === '/') {
        const search = document.querySelector<HTMLElement>('[data-shortcut="search"]');
        if (search) {
          event.preventDefault();
          search.focus();
        }
      } else return;
      event.preventDefault();
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, [navigate, showHelp, mayCreate]);
}
