import type { FormErrors, RuleForm } from './form';

/** What every wizard step is given. */
export interface StepProps {
  form: RuleForm;
  update: (patch: Partial<RuleForm>) => void;
  errors: FormErrors;
}
