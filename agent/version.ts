/** The agent's version, reported at enrolment and in every hello. Kept in step with package.json. */
export const AGENT_VERSION = '0.2.0';
