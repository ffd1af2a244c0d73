import { useState, type FormEvent } from 'react';
import { messageOf, problemAtFields } from '../api/problem';
import { useMe } from '../auth/me';
import { ROLES, roleAtLeast, type Role } from '../auth/roles';
import { ConfirmedAction } from '../ui/ConfirmedAction';
import { Field } from '../ui/Field';
import { PageHeader } from '../ui/PageHeader';
import { RevealOnce } from '../ui/RevealOnce';
import { PagedList } from '../ui/PagedList';
import { EmptyState, FormBanner } from '../ui/states';
import { Time } from '../ui/Time';
import { useChangeRole, useInvite, useMembers, useRemoveMember, useResetLink, useResetSecondFactor, type Emailed, type InvitedMember, type Member, type SecondFactorReset } from './queries';

const ROLE_TEXT: Record<Role, string> = {
  viewer: 'reads everything, changes nothing',
  operator: 'runs, cancels, switches rules on and off, tests',
  admin: 'changes everything but owners',
  owner: 'everything, single sign-on, owners',
};

export default function UsersPage() {
  const members = useMembers();
  const myRole = useMe().data?.role ?? 'viewer';
  const [link, setLink] = useState<OneTimeLink | null>(null);
  const invited = (member: InvitedMember) => setLink({ title: `Invitation for ${member.email ?? ''}`, url: member.inviteUrl, emailed: member.emailed, valid: 'for 7 days' });
  return (
    <>
      <PageHeader title="Users" subtitle="The people of this tenant and their roles. An invitation is a one-time link (7 days) you send them: they set their password with it." />
      <InviteForm grantable={grantableBy(myRole)} onInvited={invited} />
      <PagedList query={members} what="users" empty={<EmptyState title="No users">Invite someone above.</EmptyState>}>
        {(items) => <MembersTable members={items} grantable={grantableBy(myRole)} myRole={myRole} onLink={setLink} />}
      </PagedList>
      <RevealOnce
        secret={link?.url ?? null}
        title={link?.title ?? ''}
        what="link"
        label="One-time link"
        copyLabel="Copy link"
        storeIn={`Unless it was e-mailed, send it to them now (chat, e-mail): pitcrew keeps only its hash and cannot show it again. It works once, ${link?.valid ?? ''}.`}
        onClose={() => setLink(null)}
      >
        {link?.emailed ? <p className={link.emailed.sent ? 'banner banner-info' : 'field-hint'}>{link.emailed.detail}</p> : null}
      </RevealOnce>
    </>
  );
}

/** An invitation or password reset link, shown once. */
interface OneTimeLink {
  title: string;
  url: string;
  emailed?: Emailed;
  valid: string;
}

/** Nobody grants more than they hold. */
function grantableBy(role: Role): Role[] {
  return ROLES.filter((one) => roleAtLeast(role, one));
}

interface RoleSelectProps {
  value: Role;
  onChange: (role: Role) => void;
  roles: Role[];
  label?: string;
  /** Given by Field. */
  id?: string;
  'aria-describedby'?: string;
}

function RoleSelect({ value, onChange, roles, label, ...fieldProps }: RoleSelectProps) {
  return (
    <select {...fieldProps} aria-label={label} value={value} onChange={(event) => onChange(event.target.value as Role)}>
      {roles.map((role) => (
        <option key={role} value={role} title={ROLE_TEXT[role]}>
          {role}
        </option>
      ))}
    </select>
  );
}

function InviteForm({ grantable, onInvited }: { grantable: Role[]; onInvited: (member: InvitedMember) => void }) {
  const invite = useInvite();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [errors, setErrors] = useState<{ email?: string; banner?: string | null }>({});
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!email.trim()) return setErrors({ email: 'the e-mail of the person to invite' });
    setErrors({});
    invite.mutate({ email: email.trim(), role }, {
      onSuccess: (member) => {
        setEmail('');
        onInvited(member);
      },
      onError: (problem) => {
        const placed = problemAtFields(problem, (path) => (path === '/body/email' ? 'email' : undefined));
        setErrors({ email: placed.errors.email, banner: placed.banner });
      },
    });
  };
  return (
    <form className="inline-form panel" onSubmit={submit} noValidate>
      <Field label="Invite by e-mail" error={errors.email}>
        <input type="email" value={email} onChange={(event) => setEmail(event.target.value)} placeholder="ana@example.com" autoComplete="off" />
      </Field>
      <Field label="Role" hint={ROLE_TEXT[role]}>
        <RoleSelect value={role} onChange={setRole} roles={grantable} />
      </Field>
      <button type="submit" className="button button-primary" disabled={invite.isPending}>
        {invite.isPending ? 'Inviting…' : 'Invite'}
      </button>
      <FormBanner banner={errors.banner} />
    </form>
  );
}

function MembersTable({ members, grantable, myRole, onLink }: { members: Member[]; grantable: Role[]; myRole: Role; onLink: (link: OneTimeLink) => void }) {
  const me = useMe().data?.user.id;
  const changeRole = useChangeRole();
  const [notice, setNotice] = useState<string | null>(null);
  return (
    <>
      {changeRole.error ? (
        <p className="banner banner-error" role="alert">
          {messageOf(changeRole.error)}
        </p>
      ) : null}
      {notice ? (
        <p className="banner banner-info" role="status">
          {notice}
        </p>
      ) : null}
      <table className="table">
        <thead>
          <tr>
            <th>E-mail</th>
            <th>Role</th>
            <th>Status</th>
            <th>Second factor</th>
            <th>Last sign-in</th>
            <th aria-label="actions" />
          </tr>
        </thead>
        <tbody>
          {members.map((member) => {
            // Your own membership and those above your role are another's to change.
            const changeable = member.id !== me && roleAtLeast(myRole, member.role);
            return (
              <tr key={member.id} data-user={member.email ?? member.id} className={member.status === 'disabled' ? 'row-off' : undefined}>
                <td className="strong">{member.email ?? <span className="muted">not claimed yet</span>}</td>
                <td>
                  {changeable ? (
                    <RoleSelect label={`Role of ${member.email ?? 'user'}`} value={member.role} roles={grantable} onChange={(role) => changeRole.mutate({ id: member.id, role })} />
                  ) : (
                    member.role
                  )}
                </td>
                <td>{member.status}</td>
                <td>{member.totp ? 'on' : 'off'}</td>
                <td>
                  <Time iso={member.lastSignInAt} />
                </td>
                <td className="row-actions">
                  {changeable ? (
                    <>
                      <ResetLink member={member} onLink={onLink} />
                      {member.totp ? <ResetSecondFactor member={member} onDone={(reset) => setNotice(resetNotice(reset))} /> : null}
                      <RemoveMember member={member} />
                    </>
                  ) : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}

function RemoveMember({ member }: { member: Member }) {
  const remove = useRemoveMember();
  return (
    <ConfirmedAction
      label="Remove"
      buttonClassName="link-button link-danger"
      title={`Remove ${member.email ?? 'this user'} from the tenant?`}
      confirmLabel="Remove"
      mutation={remove}
      onConfirm={(close) => remove.mutate(member.id, { onSuccess: close })}
    >
      <p>Their sessions in this tenant end at once, their personal tokens here are revoked, and an invitation not used yet stops working.</p>
    </ConfirmedAction>
  );
}

/** A password reset link for a member (their password works until they use it). */
function ResetLink({ member, onLink }: { member: Member; onLink: (link: OneTimeLink) => void }) {
  const reset = useResetLink();
  return (
    <>
      <button
        type="button"
        className="link-button"
        disabled={reset.isPending}
        onClick={() => reset.mutate(member.id, { onSuccess: (made) => onLink({ title: `Password reset for ${member.email ?? 'user'}`, url: made.resetUrl, emailed: made.emailed, valid: 'within 1 hour' }) })}
      >
        Reset password
      </button>
      {reset.error ? <span className="field-error">{messageOf(reset.error)}</span> : null}
    </>
  );
}

/** For a member who lost their authenticator app: they sign in with the password alone, then set up a new one. */
function ResetSecondFactor({ member, onDone }: { member: Member; onDone: (reset: SecondFactorReset) => void }) {
  const reset = useResetSecondFactor();
  return (
    <ConfirmedAction
      label="Reset second factor"
      buttonClassName="link-button link-danger"
      title={`Remove the second factor of ${member.email ?? 'this user'}?`}
      confirmLabel="Reset second factor"
      mutation={reset}
      onConfirm={(close) => reset.mutate(member.id, { onSuccess: (done) => { close(); onDone(done); } })}
    >
      <p>
        For someone who lost their authenticator app. Their password alone signs them in until they set up a new second factor; every
        session of theirs ends at once, and they are told by e-mail. Make sure it is them who asked.
      </p>
    </ConfirmedAction>
  );
}

function resetNotice(reset: SecondFactorReset): string {
  const sessions = reset.sessionsEnded === 1 ? '1 session' : `${reset.sessionsEnded} sessions`;
  return `Removed the second factor of ${reset.email ?? reset.id}: ${sessions} signed out; ${reset.emailed.detail}.`;
}
