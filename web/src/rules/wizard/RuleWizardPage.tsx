import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { problemAtFields } from '../../api/problem';
import type { Rule } from '../../api/types';
import { PageHeader } from '../../ui/PageHeader';
import { EmptyState, FormBanner, Loadable } from '../../ui/states';
import { useCreateRunbook } from '../../runbooks/queries';
import { useCreateRule, useReplaceRule, useRule, useScheduleCheck } from '../queries';
import { previewFieldOf, previewInputOf } from '../schedule';
import { automationForm, automationNotice, automationRequestOf, useAutomation, type AutomationRequest } from './automation';
import { FlappingStep } from './FlappingStep';
import { CloudActionStep } from './CloudActionStep';
import { emptyForm, formFieldOf, formFromRule, STEPS, stepErrors, stepOf, stepTitle, toRuleInput, type FormErrors, type FormField, type RuleForm, type StepId } from './form';
import { LimitStep } from './LimitStep';
import { ReviewStep } from './ReviewStep';
import { newRunbookFieldOf, newRunbookInput } from './runbook-form';
import { RunbookStep } from './RunbookStep';
import { CaptureGraphsToo, SnapshotStep } from './SnapshotStep';
import type { StepProps } from './step';
import { TargetStep } from './TargetStep';
import { TriggerStep } from './TriggerStep';

const STEP_VIEWS: Record<StepId, (props: StepProps) => React.ReactNode> = {
  trigger: TriggerStep,
  flapping: FlappingStep,
  target: TargetStep,
  action: (props) =>
    props.form.actionType === 'graph_snapshot' ? (
      <SnapshotStep {...props} />
    ) : (
      <>
        {props.form.actionType === 'cloud' ? <CloudActionStep {...props} /> : <RunbookStep {...props} />}
        <CaptureGraphsToo {...props} />
      </>
    ),
  limit: LimitStep,
  review: ReviewStep,
};

/** /rules/new creates a rule (filled in for an alarm from the incident dashboard: ?automate=1); /rules/:id/edit changes one, through the same steps. */
export default function RuleWizardPage() {
  const { id } = useParams();
  const [params] = useSearchParams();
  const automation = automationRequestOf(params);
  if (id) return <EditRule id={id} />;
  if (automation) return <AutomateAlarm request={automation} />;
  return <Wizard initial={emptyForm()} />;
}

/** The one-click automation: the wizard filled in from the service's suggestion for the alarm. */
function AutomateAlarm({ request }: { request: AutomationRequest }) {
  const automation = useAutomation(request);
  return (
    <Loadable query={automation} what="the suggestion for this alarm">
      {({ candidate, starter }) => <Wizard initial={automationForm(request, candidate, starter)} intro={automationNotice(request, candidate)} />}
    </Loadable>
  );
}

function EditRule({ id }: { id: string }) {
  const rule = useRule(id);
  return (
    <Loadable query={rule} what="the rule">
      {(data) => {
        const form = formFromRule(data);
        if (!form) {
          return (
            <EmptyState title="This rule's action is edited through the API for now">
              <p>
                The wizard edits script actions on hosts, cloud actions and CLI runbooks. Change this one with <code>PATCH /api/v1/rules/{id}</code> (docs/rules.md), or go back to{' '}
                <Link to={`/rules/${id}`}>the rule</Link>.
              </p>
            </EmptyState>
          );
        }
        return <Wizard initial={form} rule={data} />;
      }}
    </Loadable>
  );
}

function Wizard({ initial, rule, intro }: { initial: RuleForm; rule?: Rule; intro?: string }) {
  const navigate = useNavigate();
  const create = useCreateRule();
  const replace = useReplaceRule();
  const createRunbook = useCreateRunbook();
  const checkSchedule = useScheduleCheck();
  const saving = create.isPending || replace.isPending || createRunbook.isPending;
  const [form, setForm] = useState(initial);
  const [index, setIndex] = useState(0);
  const [reached, setReached] = useState(rule ? STEPS.length - 1 : 0);
  const [errors, setErrors] = useState<FormErrors>({});
  const [banner, setBanner] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(intro ?? null);
  const heading = useRef<HTMLHeadingElement>(null);
  const body = useRef<HTMLFormElement>(null);
  const step = STEPS[index]!;
  const last = index === STEPS.length - 1;

  const update = (patch: Partial<RuleForm>) => {
    setForm((current) => ({ ...current, ...patch }));
    setErrors((current) => {
      const next = { ...current };
      for (const field of Object.keys(patch) as FormField[]) delete next[field];
      return next;
    });
  };

  // A new step, or errors to fix, move the focus where the hands go next: the first field to
  // fix, else the step's first field. Typing never moves it (only these requests do).
  const [focusRequest, setFocusRequest] = useState(0);
  const requestFocus = () => setFocusRequest((n) => n + 1);
  useEffect(() => {
    if (focusRequest === 0) return;
    const invalid = body.current?.querySelector<HTMLElement>('[aria-invalid="true"]');
    const first = body.current?.querySelector<HTMLElement>('.wizard-step :is(input:not([disabled]), select, textarea, .cm-content)');
    (invalid ?? first ?? heading.current)?.focus();
  }, [focusRequest]);

  const goTo = (target: number) => {
    setIndex(target);
    setReached((current) => Math.max(current, target));
    requestFocus();
  };

  const showErrors = (found: FormErrors) => {
    setErrors(found);
    const first = Object.keys(found)[0] as FormField | undefined;
    if (first) setIndex(STEPS.findIndex((s) => s.id === stepOf(first)));
    requestFocus();
  };

  const next = async () => {
    const found = stepErrors(step.id, form);
    if (Object.keys(found).length > 0) return showErrors(found);
    // A schedule is read by the service alone (croner): one it refuses, or that never fires, keeps the step.
    const schedule = step.id === 'trigger' && form.trigger.type === 'cron' ? previewInputOf(form) : null;
    const refused = schedule ? await checkSchedule(schedule) : null;
    if (refused) return showProblem(refused, previewFieldOf);
    goTo(index + 1);
  };

  const save = () => {
    const found = Object.assign({}, ...STEPS.map((s) => stepErrors(s.id, form))) as FormErrors;
    if (Object.keys(found).length > 0) return showErrors(found);
    setBanner(null);
    if (form.actionType !== 'cloud' && form.runbookSource === 'new') return storeRunbookThenRule();
    saveRule(form);
  };

  const showProblem = (error: unknown, fieldOf: (path: string) => FormField | undefined) => {
    const { errors: placed, banner } = problemAtFields(error, fieldOf);
    if (Object.keys(placed).length > 0) showErrors(placed);
    setBanner(banner);
  };

  const saveRule = (toSave: RuleForm) => {
    const input = toRuleInput(toSave);
    const onSuccess = (saved: Rule | undefined) => void navigate(`/rules/${saved?.id ?? rule?.id}`);
    const onError = (error: unknown) => showProblem(error, (path) => formFieldOf(path, toSave.actionType, toSave.runbookSource));
    if (rule) replace.mutate({ id: rule.id, input }, { onSuccess, onError });
    else create.mutate(input, { onSuccess, onError });
  };

  // "Save what I write as a new runbook": stored first, then the rule refers to it. The form then
  // holds the stored runbook, so a rule the service refuses is saved again without a second runbook.
  const storeRunbookThenRule = () => {
    createRunbook.mutate(newRunbookInput(form), {
      onSuccess: (stored) => {
        const next: RuleForm = { ...form, runbookSource: 'stored', runbookId: stored.id, runbookVersion: String(stored.version) };
        setForm(next);
        setNotice(`Runbook “${stored.name}” stored as version ${stored.version}; the rule runs it.`);
        saveRule(next);
      },
      onError: (error) => showProblem(error, newRunbookFieldOf),
    });
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (last) save();
    else void next();
  };

  // Ctrl+Enter moves on from anywhere in the step, the code editor included.
  const onKeyDownCapture = (event: KeyboardEvent) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      event.stopPropagation();
      if (last) save();
      else void next();
    }
  };

  const StepView = STEP_VIEWS[step.id];
  const stepsWithErrors = new Set(Object.keys(errors).map((field) => stepOf(field as FormField)));
  return (
    <>
      <PageHeader
        title={rule ? `Edit ${rule.name}` : 'New rule'}
        subtitle={rule ? 'Changes apply from the next event on; its webhook URL stays the same.' : 'Six short steps. Nothing is saved until you press Create.'}
      />
      <div className="wizard">
        <ol className="stepper" aria-label="steps">
          {STEPS.map((s, i) => (
            <li key={s.id}>
              <button
                type="button"
                className={`step${i === index ? ' step-current' : ''}${stepsWithErrors.has(s.id) ? ' step-error' : ''}`}
                aria-current={i === index ? 'step' : undefined}
                disabled={i > reached}
                onClick={() => goTo(i)}
              >
                <span className="step-number">{stepsWithErrors.has(s.id) ? '!' : i + 1}</span>
                {stepTitle(s, form)}
              </button>
            </li>
          ))}
        </ol>
        <form className="wizard-body" ref={body} onSubmit={submit} onKeyDownCapture={onKeyDownCapture} noValidate>
          {notice ? (
            <p className="banner banner-info" role="status">
              {notice}
            </p>
          ) : null}
          <FormBanner banner={banner} />
          <h2 ref={heading} tabIndex={-1}>
            {stepTitle(step, form)}
          </h2>
          <div className="wizard-step">
            <StepView form={form} update={update} errors={errors} />
          </div>
          <div className="wizard-nav">
            <Link to={rule ? `/rules/${rule.id}` : '/rules'} className="button button-quiet">
              Cancel
            </Link>
            <span className="spacer" />
            {index > 0 ? (
              <button type="button" className="button" onClick={() => goTo(index - 1)}>
                Back
              </button>
            ) : null}
            <button type="submit" className="button button-primary" disabled={saving}>
              {last ? (saving ? 'Saving…' : rule ? 'Save changes' : 'Create rule') : 'Next'}
            </button>
          </div>
        </form>
      </div>
    </>
  );
}
