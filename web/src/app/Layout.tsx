import { Suspense, useCallback, useState } from 'react';
import { NavLink, Outlet, useLocation, useNavigate } from 'react-router';
import { useRole, type Action } from '../auth/useRole';
import { UserMenu } from '../auth/UserMenu';
import { Loading } from '../ui/states';
import { PageErrorBoundary } from './PageErrorBoundary';
import { useGlobalShortcuts } from './shortcuts';
import { ShortcutsHelp } from './ShortcutsHelp';

const NAV: { to: string; label: string; key: string; needs?: Action }[] = [
  { to: '/incidents', label: 'Incidents', key: 'g n' },
  { to: '/rules', label: 'Rules', key: 'g r' },
  { to: '/runbooks', label: 'Runbooks', key: 'g b' },
  { to: '/repositories', label: 'Repositories', key: 'g g' },
  { to: '/executions', label: 'Executions', key: 'g e' },
  { to: '/escalations', label: 'Escalations', key: 'g x' },
  { to: '/hosts', label: 'Hosts', key: 'g h' },
  { to: '/integrations', label: 'Integrations', key: 'g i' },
  { to: '/credentials', label: 'Credentials', key: 'g a' },
  { to: '/channels', label: 'Channels', key: 'g c' },
  { to: '/api-keys', label: 'API keys', key: 'g k' },
  { to: '/settings', label: 'Settings', key: 'g s' },
  { to: '/users', label: 'Users', key: 'g u', needs: 'manageMembers' },
  { to: '/audit', label: 'Audit log', key: 'g l', needs: 'readAudit' },
  { to: '/sso', label: 'Single sign-on', key: 'g o', needs: 'manageSso' },
];

export function Layout() {
  const navigate = useNavigate();
  const location = useLocation();
  const [helpOpen, setHelpOpen] = useState(false);
  const { can } = useRole();
  const go = useCallback((to: string) => void navigate(to), [navigate]);
  const showHelp = useCallback(() => setHelpOpen(true), []);
  useGlobalShortcuts(go, showHelp, can('configure'));

  return (
    <div className="shell">
      <nav className="sidebar" aria-label="main">
        <div className="sidebar-inner">
          <div className="brand">
            <img src="/favicon.svg" alt="" width="22" height="22" /> pitcrew
          </div>
          <ul>
            {NAV.filter((item) => !item.needs || can(item.needs)).map((item) => (
              <li key={item.to}>
                <NavLink to={item.to} className={({ isActive }) => `nav-link${isActive ? ' nav-link-active' : ''}`}>
                  {item.label}
                  <kbd className="nav-key">{item.key}</kbd>
                </NavLink>
              </li>
            ))}
          </ul>
          <div className="sidebar-footer">
            <UserMenu />
            <button type="button" className="link-button" onClick={showHelp}>
              Shortcuts <kbd>?</kbd>
            </button>
          </div>
        </div>
      </nav>
      <main className="content">
        <PageErrorBoundary key={location.pathname}>
          <Suspense fallback={<Loading what="page" />}>
            <Outlet />
          </Suspense>
        </PageErrorBoundary>
      </main>
      <ShortcutsHelp open={helpOpen} onClose={() => setHelpOpen(false)} />
    </div>
  );
}
