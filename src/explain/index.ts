/**
 * `kpc explain`: one Service's rules by entry point, the endpoints each reaches, and why the
 * others are not used. Pure functions; the CLI does the I/O.
 */

export {
  explainService,
  type EntryKind,
  type EntryPoint,
  type ExcludedEndpoint,
  type ExplainedEndpoint,
  type ExplainedPort,
  type ExplainedRule,
  type Explanation,
  type Policy,
  type Reach,
  type ReachedEndpoint,
} from './explain.js';
export { renderExplanation, type ExplainStyle } from './render.js';
