/** spec.sessionAffinity and spec.sessionAffinityConfig (validateClientIPAffinityConfig). */

import type { FieldError, FieldPath } from '../../../diagnostics.js';
import { forbidden, invalid, notSupported, required } from '../field-errors.js';
import { asJSON } from '../go-format.js';
import type { CoreService } from '../model/service.js';

/** core.MaxClientIPServiceAffinitySeconds: one day. */
export const MAX_CLIENT_IP_AFFINITY_SECONDS = 86400;
export const SUPPORTED_SESSION_AFFINITY = ['ClientIP', 'None'];

const CONFIG: FieldPath = ['spec', 'sessionAffinityConfig'];

export function validateSessionAffinity(svc: CoreService): FieldError[] {
  const spec = svc.spec;
  const errs: FieldError[] = [];
  if (spec.sessionAffinity === '') errs.push(required(['spec', 'sessionAffinity']));
  else if (!SUPPORTED_SESSION_AFFINITY.includes(spec.sessionAffinity)) {
    errs.push(notSupported(['spec', 'sessionAffinity'], asJSON(spec.sessionAffinity), SUPPORTED_SESSION_AFFINITY));
  }

  if (spec.sessionAffinity === 'ClientIP') {
    const when = 'when session affinity type is ClientIP';
    const cfg = spec.sessionAffinityConfig;
    if (cfg === undefined) errs.push(required(CONFIG, when));
    else if (cfg.clientIP === undefined) errs.push(required([...CONFIG, 'clientIP'], when));
    else if (cfg.clientIP.timeoutSeconds === undefined) errs.push(required([...CONFIG, 'clientIP', 'timeoutSeconds'], when));
    else {
      const t = cfg.clientIP.timeoutSeconds;
      // The message says "less than", but the check is <= 86400: one day itself is accepted.
      if (t <= 0 || t > MAX_CLIENT_IP_AFFINITY_SECONDS) {
        errs.push(invalid([...CONFIG, 'clientIP', 'timeoutSeconds'], asJSON(t), `must be greater than 0 and less than ${MAX_CLIENT_IP_AFFINITY_SECONDS}`));
      }
    }
  } else if (spec.sessionAffinity === 'None' && spec.sessionAffinityConfig !== undefined) {
    errs.push(forbidden(CONFIG, 'must not be set when session affinity is None'));
  }
  return errs;
}
