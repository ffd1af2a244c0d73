import { QueryClientProvider } from '@tanstack/react-query';
import { lazy, useState } from 'react';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { AcceptPage } from '../auth/AcceptPage';
import { RequireAuth } from '../auth/RequireAuth';
import { RequireRole } from '../auth/RequireRole';
import { SignInPage } from '../auth/SignInPage';
import { Layout } from './Layout';
import { NotFoundPage } from './NotFoundPage';
import { createQueryClient } from './queryClient';

// Each page is its own chunk: the first page (sign-in) loads only the shell.
const RulesPage = lazy(() => import('../rules/RulesPage'));
const RuleWizardPage = lazy(() => import('../rules/wizard/RuleWizardPage'));
const RulePage = lazy(() => import('../rules/RulePage'));
const ExecutionsPage = lazy(() => import('../executions/ExecutionsPage'));
const ExecutionPage = lazy(() => import('../executions/ExecutionPage'));
const DecidePage = lazy(() => import('../executions/DecidePage'));
const HostsPage = lazy(() => import('../hosts/HostsPage'));
const ChannelsPage = lazy(() => import('../channels/ChannelsPage'));
const ChannelPage = lazy(() => import('../channels/ChannelPage'));
const ChannelFormPage = lazy(() => import('../channels/form/ChannelFormPage'));
const IntegrationsPage = lazy(() => import('../integrations/IntegrationsPage'));
const IntegrationPage = lazy(() => import('../integrations/IntegrationPage'));
const CredentialsPage = lazy(() => import('../credentials/CredentialsPage'));
const CredentialPage = lazy(() => import('../credentials/CredentialPage'));
const RunbooksPage = lazy(() => import('../runbooks/RunbooksPage'));
const RunbookPage = lazy(() => import('../runbooks/RunbookPage'));
const RunbookFormPage = lazy(() => import('../runbooks/RunbookFormPage'));
const RunbookVersionPage = lazy(() => import('../runbooks/RunbookVersionPage'));
const RunbookDiffPage = lazy(() => import('../runbooks/RunbookDiffPage'));
const RepositoriesPage = lazy(() => import('../repositories/RepositoriesPage'));
const RepositoryPage = lazy(() => import('../repositories/RepositoryPage'));
const ApiKeysPage = lazy(() => import('../api-keys/ApiKeysPage'));
const EscalationsPage = lazy(() => import('../escalations/EscalationsPage'));
const TenantSettingsPage = lazy(() => import('../tenant/TenantSettingsPage'));
const UsersPage = lazy(() => import('../users/UsersPage'));
const TokensPage = lazy(() => import('../tokens/TokensPage'));
const AuditPage = lazy(() => import('../audit/AuditPage'));
const SsoSettingsPage = lazy(() => import('../sso/SsoSettingsPage'));
const SecondFactorPage = lazy(() => import('../auth/SecondFactorPage'));

// Where a refused page sends its reader back to.
const RULES = { to: '/rules', label: 'Back to the rules' };
const RUNBOOKS = { to: '/runbooks', label: 'Back to the runbooks' };
const CHANNELS = { to: '/channels', label: 'Back to the channels' };
const IncidentsPage = lazy(() => import('../incidents/IncidentsPage'));
const IncidentPage = lazy(() => import('../incidents/IncidentPage'));

export function App() {
  const [queryClient] = useState(createQueryClient);
  return (
    <QueryClientProvider client={queryClient}>
      <BrowserRouter>
        <Routes>
          <Route path="/sign-in" element={<SignInPage />} />
          {/* Where single sign-on sends a person back, with ?error= when it failed. */}
          <Route path="/signin" element={<SignInPage />} />
          <Route path="/accept/:invite" element={<AcceptPage />} />
          <Route
            element={
              <RequireAuth>
                <Layout />
              </RequireAuth>
            }
          >
            <Route index element={<Navigate to="/rules" replace />} />
            <Route path="incidents" element={<IncidentsPage />} />
            <Route path="incidents/:id" element={<IncidentPage />} />
            <Route path="rules" element={<RulesPage />} />
            <Route path="rules/new" element={<RequireRole to="configure" doing="Creating a rule" back={RULES}><RuleWizardPage /></RequireRole>} />
            <Route path="rules/:id" element={<RulePage />} />
            <Route path="rules/:id/edit" element={<RequireRole to="configure" doing="Editing a rule" back={RULES}><RuleWizardPage /></RequireRole>} />
            <Route path="runbooks" element={<RunbooksPage />} />
            <Route path="runbooks/new" element={<RequireRole to="configure" doing="Creating a runbook" back={RUNBOOKS}><RunbookFormPage /></RequireRole>} />
            <Route path="runbooks/:id" element={<RunbookPage />} />
            <Route path="runbooks/:id/edit" element={<RequireRole to="configure" doing="Editing a runbook" back={RUNBOOKS}><RunbookFormPage /></RequireRole>} />
            <Route path="runbooks/:id/versions/:version" element={<RunbookVersionPage />} />
            <Route path="runbooks/:id/diff" element={<RunbookDiffPage />} />
            <Route path="repositories" element={<RepositoriesPage />} />
            <Route path="repositories/:id" element={<RepositoryPage />} />
            <Route path="executions" element={<ExecutionsPage />} />
            <Route path="executions/:id" element={<ExecutionPage />} />
            <Route path="executions/:id/decide" element={<DecidePage />} />
            <Route path="channels" element={<ChannelsPage />} />
            <Route path="channels/new" element={<RequireRole to="configure" doing="Adding a channel" back={CHANNELS}><ChannelFormPage /></RequireRole>} />
            <Route path="channels/:id" element={<ChannelPage />} />
            <Route path="channels/:id/edit" element={<RequireRole to="configure" doing="Changing a channel" back={CHANNELS}><ChannelFormPage /></RequireRole>} />
            <Route path="integrations" element={<IntegrationsPage />} />
            <Route path="integrations/:id" element={<IntegrationPage />} />
            <Route path="credentials" element={<CredentialsPage />} />
            <Route path="credentials/:id" element={<CredentialPage />} />
            <Route path="hosts" element={<HostsPage />} />
            <Route path="escalations" element={<EscalationsPage />} />
            <Route path="api-keys" element={<ApiKeysPage />} />
            <Route path="settings" element={<TenantSettingsPage />} />
            <Route path="users" element={<RequireRole to="manageMembers" doing="Managing the members" back={RULES}><UsersPage /></RequireRole>} />
            <Route path="tokens" element={<TokensPage />} />
            <Route path="second-factor" element={<SecondFactorPage />} />
            <Route path="audit" element={<RequireRole to="readAudit" doing="Reading the audit log" back={RULES}><AuditPage /></RequireRole>} />
            <Route path="sso" element={<RequireRole to="manageSso" doing="Setting up single sign-on" back={RULES}><SsoSettingsPage /></RequireRole>} />
            <Route path="*" element={<NotFoundPage />} />
          </Route>
        </Routes>
      </BrowserRouter>
    </QueryClientProvider>
  );
}
